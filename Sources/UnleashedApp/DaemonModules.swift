public import CameraKit
public import DaemonClient
import Foundation
import UnleashedAPI
import UnleashedKit

/// `connect` and `disconnect` while a daemon runs: the daemon holds the modules, so it is asked
/// to connect one and keep it connected, or to let go of it.
public struct DaemonModules: Sendable {
    public let client: DaemonClient

    public init(client: DaemonClient) {
        self.client = client
    }

    /// A module the daemon holds, as it describes it.
    public struct Held: Sendable {
        /// The name commands reach it by (`--module NAME`).
        public var name: String
        /// Where it is: its address.
        public var address: String
        public var identity: CameraIdentity?
        public var status: CameraStatus?
    }

    /// Asks the daemon to connect `wanted` (an address, or a name from its configuration) and
    /// keep it connected; nil when no daemon answers, so the caller connects directly.
    public func connect(_ wanted: String) async throws(DaemonClientError) -> Held? {
        let held: ConnectedCamera
        do {
            held = try await client.connect(module: wanted)
        } catch {
            if error.isUnreachable { return nil }
            throw error
        }
        return Held(name: held.name, address: held.source, identity: held.identity, status: held.status)
    }

    /// Asks the daemon to let go of `wanted` (its name or address) and returns what it let go
    /// of (name, address); nil when no daemon answers or it does not hold that module, so the
    /// caller goes to BlueZ itself.
    public func release(_ wanted: String) async throws(DaemonClientError) -> (name: String, address: String)? {
        let released: ConnectedCamera
        do {
            released = try await client.disconnect(camera: wanted)
        } catch {
            if error.isUnreachable { return nil }
            if case .http(404, _, _, _) = error { return nil }
            throw error
        }
        return (released.name, released.source)
    }
}

extension DaemonClientError {
    /// No daemon answers: the command may run directly instead.
    public var isUnreachable: Bool {
        if case .notReachable = self { return true }
        return false
    }
}
