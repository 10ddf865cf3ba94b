import Foundation
import Hummingbird
import JSON
import UnleashedAPI
import UnleashedKit

/// Connecting and letting go of modules while the daemon runs: what `unleashed connect` and
/// `unleashed disconnect` ask for.
struct ModuleRoutes: Sendable {
    let cameras: CameraRegistry
    let connector: (any CameraConnecting)?
    let configuration: DaemonConfiguration

    func add(to router: APIRoutes) {
        router.on(API.connect) { request, context -> Response in
            try context.authorize(.operate)
            let wanted = try await APIRoutes.body(ConnectRequest.self, of: request).module
            guard !wanted.isEmpty else { throw HTTPError(.badRequest, message: "module: empty; the module's address or configured name") }
            return try await connect(wanted)
        }
        router.on(API.disconnect) { _, context -> Response in
            try context.authorize(.operate)
            let name = try context.requirePathParameter("camera")
            guard let entry = await cameras.remove(named: name) else {
                throw HTTPError(.notFound, message: CameraLookupError.unknown(name, known: await cameras.all.map(\.name)).description)
            }
            await entry.camera.close()
            return .document(.ok, ConnectedCamera(name: entry.name, source: entry.source, connected: false))
        }
    }

    private func connect(_ wanted: String) async throws -> Response {
        let known = configuration.modules.first { $0.name.lowercased() == wanted.lowercased() || $0.address == wanted.uppercased() }
        if let entry = try? await cameras.camera(named: known?.name ?? wanted) {
            return .document(.ok, await document(entry))
        }
        guard let connector else {
            throw HTTPError(.conflict, message: "this daemon cannot connect modules on request")
        }
        do {
            let (name, camera, source) = try await connector.connect(wanted, configuration: configuration)
            guard let entry = await cameras.add(camera, name: name, source: source) else {
                await camera.close()
                throw HTTPError(.conflict, message: "the daemon already holds a camera named '\(name)'")
            }
            return .document(.created, await document(entry))
        } catch let error as CameraConnectError {
            throw HTTPError(error.isClientError ? .badRequest : .serviceUnavailable, message: error.description)
        }
    }

    private func document(_ entry: CameraRegistry.Entry) async -> ConnectedCamera {
        ConnectedCamera(name: entry.name, source: entry.source, connected: true, identity: entry.camera.identity,
                        status: try? await entry.statusReader.status())
    }
}
