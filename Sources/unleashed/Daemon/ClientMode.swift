import ArgumentParser
import DaemonClient
import Foundation
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

/// The CLI as a client of the daemon: when a daemon answers on its socket, commands go through
/// it and print exactly what they print when they drive the camera themselves.
extension GlobalOptions {
    /// The daemon to go through, or nil to drive the camera from this process: with --direct,
    /// --demo, options that describe a camera reached directly (--backend, --port, --adapter,
    /// --download, --filename), or when no socket is there.
    func daemonClient() -> DaemonClient? {
        guard !direct, !demoMode, backend == nil, port == nil, adapter == nil, download == nil, filename == nil else { return nil }
        return socketDaemon()
    }

    /// A client of the daemon whose socket is there, whatever the options say; nil without one.
    func socketDaemon() -> DaemonClient? {
        let environment = ProcessInfo.processInfo.environment
        let path = DaemonClient.defaultSocketPath(environment: environment)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return DaemonClient(socketPath: path, token: environment["UNLEASHED_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The daemon's camera named by --module (or its only one); nil when the daemon does not
    /// answer after all (a socket left by one that did not stop cleanly).
    func remoteCamera(through daemon: DaemonClient) async throws(ExitCode) -> RemoteCamera? {
        do {
            return try await RemoteCamera.open(client: daemon, camera: module)
        } catch {
            if error.isUnreachable { return nil }
            throw fail(error)
        }
    }

    /// A failed request to the daemon as a message and exit status: a camera's error exactly as
    /// in direct mode.
    func fail(_ error: DaemonClientError) -> ExitCode {
        if case .http(_, _, _, let camera?) = error { return fail(camera) }
        return fail(RunFailure(error))
    }

    func fail(_ failure: RunFailure) -> ExitCode {
        fail(code: failure.code, failure.message, status: ExitStatus(rawValue: failure.exitStatus) ?? .software, extra: failure.extra)
    }
}
