import Daemon
import Foundation
import UnleashedSimulator

/// A control server on a socket of its own, holding a simulated camera as "demo": what the route
/// and client tests talk to.
enum DemoServer {
    /// Runs `body` with `demo`'s camera served (a fresh simulator when nil) and the socket's path,
    /// then stops the server, removes its directory and finishes a simulator it started.
    static func with<T>(_ demo: Demo? = nil, _ body: (Demo, String) async throws -> T) async throws -> T {
        let camera: Demo
        if let demo { camera = demo } else { camera = try await Demo.start(stateFile: nil, options: DemoOptions()) }
        let directory = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = directory + "/run/control.sock"
        let registry = CameraRegistry()
        await registry.add(camera.camera, name: "demo", source: "demo")
        let server = ControlServer(
            service: service,
            api: ControlAPI(cameras: registry, jobs: JobManager(), access: AccessPolicy(), version: "0.0.0-test"))
        try await server.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(camera, service.socket)) } catch { result = .failure(error) }
        await server.stop()
        if demo == nil { try? await camera.finish() }
        return try result.get()
    }
}
