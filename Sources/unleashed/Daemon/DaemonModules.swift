import ArgumentParser
import DaemonClient
import Foundation
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol

/// `connect` and `disconnect` while a daemon runs: the daemon holds the modules, so it is asked
/// to connect one and keep it connected, or to let go of it.
struct DaemonModules {
    let client: DaemonClient
    let options: GlobalOptions

    /// Asks the daemon to connect `wanted` and prints what it holds; false when no daemon
    /// answers, so the caller connects directly.
    func connect(_ wanted: String?) async throws -> Bool {
        guard let wanted else {
            throw options.usage("name the module: `unleashed connect ADDRESS` (or a name from the daemon's configuration); "
                + "the daemon then keeps it connected")
        }
        let held: ConnectedCamera
        do {
            held = try await client.connect(module: wanted)
        } catch {
            if error.isUnreachable { return false }
            throw options.fail(error)
        }
        let (identity, status, name, address) = (held.identity, held.status, held.name, held.source)
        options.emit([
            "address": .string(address), "name": .string(name),
            "firmware": identity?.firmwareVersion.map(JSONValue.string) ?? .null,
            "protocolVersion": identity?.protocolVersion.map { .integer(Int64($0)) } ?? .null,
            "camera": identity?.cameraModel.map(JSONValue.string) ?? .null,
            "cameraPower": status.map { .string($0.cameraPower.description) } ?? .null,
            "cameraBattery": status?.cameraBattery.map { .integer(Int64($0)) } ?? .null,
            "moduleBattery": status?.moduleBattery.map { .integer(Int64($0)) } ?? .null,
            "daemon": true,
        ]) {
            """
            Connected to \(name) (\(address)), firmware \(identity?.firmwareVersion ?? "unknown"), \
            protocol \(identity?.protocolVersion.map(String.init) ?? "unknown"), module battery \(Output.percent(status?.moduleBattery)).
            Camera: \(identity?.cameraModel ?? "none attached"), \(status.map { "\($0.cameraPower)" } ?? "unknown"), \
            battery \(Output.percent(status?.cameraBattery)).
            The daemon keeps it connected; commands reach it with --module \(name).
            """
        }
        return true
    }

    /// Asks the daemon to let go of `wanted` (its name or address); false when no daemon answers
    /// or it does not hold that module, so the caller goes to BlueZ itself.
    func release(_ wanted: String, printing: Bool) async throws -> Bool {
        let released: ConnectedCamera
        do {
            released = try await client.disconnect(camera: wanted)
        } catch {
            if error.isUnreachable { return false }
            if case .http(404, _, _, _) = error { return false }
            throw options.fail(error)
        }
        if printing {
            let name = released.name
            options.emit(["address": .string(released.source), "name": .string(name), "wasConnected": true, "daemon": true]) {
                "The daemon let go of \(name); it is disconnected."
            }
        }
        return true
    }
}
