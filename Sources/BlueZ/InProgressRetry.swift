/// How an operation that BlueZ refused as busy is tried again: BlueZ lets one read and one
/// write be in flight per characteristic and answers another with `org.bluez.Error.InProgress`
/// (and a full `AcquireWrite` socket is busy the same way). The policy is a value; its pauses
/// are taken on the clock the caller gives, the client's (``BlueZClient/clock``).
public struct InProgressRetry: Hashable, Sendable {
    /// Attempts in all, the first included.
    public var attempts: Int
    /// The pause before each attempt after the first.
    public var pause: Duration

    public init(attempts: Int = 100, pause: Duration = .milliseconds(10)) {
        self.attempts = attempts
        self.pause = pause
    }

    /// Whether attempt `attempt` (1-based) may be followed by another.
    public func allowsAnother(after attempt: Int) -> Bool {
        attempt < attempts
    }

    /// Waits the pause before the next attempt on `clock`; false when the task was cancelled
    /// (then no attempt should follow).
    public nonisolated(nonsending) func pauseBeforeNext(on clock: any Clock<Duration>) async -> Bool {
        do {
            try await clock.sleep(for: pause)
            return true
        } catch {
            return false
        }
    }

    /// Runs `operation` until it succeeds or fails with something `isInProgress` does not call
    /// busy; a busy failure is tried again after ``pause`` until ``attempts`` are spent or the
    /// task is cancelled, and then thrown.
    ///
    /// It runs on the caller's executor, as do the attempts: a link's send on the session's
    /// thread stays there.
    ///
    /// - Parameter operation: gets the attempt's number, 1 for the first.
    public nonisolated(nonsending) func run<Value, Failure: Error>(
        on clock: any Clock<Duration>,
        isInProgress: (Failure) -> Bool,
        _ operation: nonisolated(nonsending) (_ attempt: Int) async throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        var attempt = 1
        while true {
            do throws(Failure) {
                return try await operation(attempt)
            } catch {
                guard isInProgress(error), allowsAnother(after: attempt), await pauseBeforeNext(on: clock) else { throw error }
                attempt += 1
            }
        }
    }

    /// Whether `error` is BlueZ's `InProgress`.
    static func isInProgress(_ error: BlueZError) -> Bool {
        if case .dbus(let failure) = error { failure.name == BlueZName.Error.inProgress } else { false }
    }
}
