import Dispatch
import Foundation
import ProcessSignals
import Synchronization

/// Exit statuses, from sysexits(3) so that scripts can tell failures apart.
public enum ExitStatus: Int32, Sendable {
    case usage = 64
    case refused = 65
    case unavailable = 69
    case software = 70
    /// The run journal could not be written; the run is resumable and nothing taken was lost.
    case ioError = 74
    case temporary = 75
    /// Not allowed: the camera device's permissions, or the daemon's role or locked mode.
    case noPermission = 77
    /// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
    case interrupted = 130
    /// Stopped by SIGTERM (128 + SIGTERM).
    case terminated = 143
}

/// Ctrl-C while a command runs: the first calls `onFirst`, the second exits. With
/// `terminate`, SIGTERM does the same (a service manager's stop, `kill`), so that a command
/// ends the way Ctrl-C ends it, with its closing line, and exits 143 instead of 130.
public final class Interrupt {
    private let watch: SignalWatch
    private static let received = Mutex<Int32?>(nil)

    /// The signal that interrupted the command, if one did.
    public static var signal: Int32? { received.withLock { $0 } }

    /// The exit status of a command that a signal ended: 143 after SIGTERM, else 130.
    public static var exitStatus: ExitStatus { signal == SIGTERM ? .terminated : .interrupted }

    public init(terminate: Bool = false, _ onFirst: @escaping @Sendable () -> Void) {
        let count = Mutex(0)
        let handler: (Int32) -> @Sendable () -> Void = { number in
            {
                Self.received.withLock { $0 = $0 ?? number }
                let presses = count.withLock { $0 += 1; return $0 }
                if presses == 1 { onFirst() } else { exit(Self.exitStatus.rawValue) }
            }
        }
        var handlers = [SIGINT: handler(SIGINT)]
        if terminate { handlers[SIGTERM] = handler(SIGTERM) }
        watch = SignalWatch(handlers)
    }

    public func disarm() { watch.disarm() }

    /// Runs `work` as a task that the first Ctrl-C cancels (or that calls `onInterrupt`
    /// instead), and returns how it failed, if it did.
    public static func running<Failure: Error>(onInterrupt: (@Sendable () -> Void)?,
                                               _ work: @escaping @Sendable () async throws(Failure) -> Void) async -> Failure? {
        // The signals are watched before the work starts, so that nothing it prints comes
        // before they are: a SIGTERM sent on reading its first line is always handled.
        let cancellation = Cancellation<Failure?>()
        // A command that handles SIGTERM itself passes `onInterrupt`; for the others SIGTERM
        // cancels like Ctrl-C.
        let interrupt = Interrupt(terminate: onInterrupt == nil, onInterrupt ?? { cancellation.cancel() })
        let task = Task { () async -> Failure? in
            do throws(Failure) {
                try await work()
                return nil
            } catch {
                return error
            }
        }
        cancellation.attach(task)
        let failure = await task.value
        interrupt.disarm()
        return failure
    }

    /// A task's cancellation that may be asked for before the task exists.
    private final class Cancellation<Success: Sendable>: Sendable {
        private let state = Mutex<(task: Task<Success, Never>?, cancelled: Bool)>((nil, false))

        func cancel() {
            state.withLock { state in
                state.cancelled = true
                return state.task
            }?.cancel()
        }

        func attach(_ task: Task<Success, Never>) {
            let cancelled = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            if cancelled { task.cancel() }
        }
    }
}
