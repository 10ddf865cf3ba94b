import ArgumentParser
import CommandCore
import DaemonClient
import Foundation
import UnleashedApp
import UnleashedKit

/// The CLI as a client of the daemon: when a daemon answers on its socket, commands go through
/// it and print exactly what they print when they drive the camera themselves.
extension GlobalOptions {
    /// The daemon to go through, or nil to drive the camera from this process: with --direct,
    /// --demo, options that describe a camera reached directly (--backend, --port, --camera-model,
    /// --adapter, --download, --filename), or when no socket is there.
    func daemonClient() -> DaemonClient? {
        guard !direct, !demoMode, backend == nil, port == nil, cameraModel == nil, adapter == nil, download == nil, filename == nil
        else { return nil }
        return socketDaemon()
    }

    /// The clock this command reads times of day and dates against: the daemon's when it goes
    /// through one (which may go by a phone's clock while this host's is wrong), else this host's.
    func commandClock() async -> CommandClock { await CommandClock.of(daemonClient()) }

    /// A client of the daemon whose socket is there, whatever the options say; nil without one.
    func socketDaemon() -> DaemonClient? { DaemonClient.commands(environment: ProcessInfo.processInfo.environment) }

    /// A failed request to the daemon as a message and exit status: a camera's error exactly as
    /// in direct mode, a refusal (401, 403) as such.
    func fail(_ error: DaemonClientError) -> ExitCode { fail(CameraFailure(error)) }
}
