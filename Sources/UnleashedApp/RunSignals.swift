public import CommandCore
import ProcessSignals
import Foundation
import Synchronization

/// The one signal map of a run, here or in a daemon: Ctrl-C (when the run takes it) and SIGTERM
/// stop it (a bulb exposure is ended first), SIGUSR1 asks for an extra frame, SIGUSR2 stops it
/// after the current one. The first stop wins and says the exit status.
public final class RunSignals: Sendable {
    private let run: any RunController
    private let stopped = Mutex<ExitStatus?>(nil)
    private let watch = Mutex<SignalWatch?>(nil)

    /// - Parameter interrupt: whether Ctrl-C is taken here; a run whose camera is opened by
    ///   the command that opens its camera gets it from there instead.
    public init(_ run: any RunController, interrupt: Bool) {
        self.run = run
        var handlers: [Int32: @Sendable () -> Void] = [
            SIGTERM: { [weak self] in self?.stop(by: SIGTERM) },
            SIGUSR1: { Task { await run.shootExtraFrame() } },
            SIGUSR2: { Task { await run.stopAfterCurrentFrame() } },
        ]
        if interrupt { handlers[SIGINT] = { [weak self] in self?.stop(by: SIGINT) } }
        watch.withLock { $0 = SignalWatch(handlers) }
    }

    /// The status to exit with when a signal stopped the run.
    public var stoppedBy: ExitStatus? { stopped.withLock { $0 } }

    /// Stops the run for `signal` (SIGINT or SIGTERM), once.
    public func stop(by signal: Int32) {
        let status: ExitStatus = signal == SIGTERM ? .terminated : .interrupted
        let first = stopped.withLock { stopped in
            defer { stopped = stopped ?? status }
            return stopped == nil
        }
        guard first else { return }
        let reason = status == .interrupted ? "stopped by Ctrl-C" : "stopped by SIGTERM"
        let run = run
        Task { await run.stop(reason: reason) }
    }

    /// Gives the signals back to their default handling, once the run has ended.
    public func disarm() {
        watch.withLock { $0?.disarm() }
    }
}
