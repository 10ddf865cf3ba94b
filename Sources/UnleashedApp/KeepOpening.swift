import CameraKit
public import UnleashedKit

/// Tries `attempt` until it succeeds, waiting between attempts as `policy` says (the same
/// ``ReconnectPolicy`` a module's connection uses after a drop), on `clock`.
///
/// Gives up (returns nil) when the policy's attempts are spent, when the next wait would end
/// after `giveUpAfter` from the first attempt, or when the task is cancelled. `failed` hears
/// each failure with the wait before the next attempt, or nil when there is none.
///
/// - Parameter unit: a random number in 0..<1 per wait, for the policy's jitter.
public func keepOpening<Value, Failure: Error, C: Clock<Duration>>(
    policy: ReconnectPolicy, giveUpAfter: Duration? = nil, clock: C,
    unit: () -> Double = { Double.random(in: 0..<1) },
    _ attempt: () async throws(Failure) -> Value,
    failed: (Failure, _ nextWait: Duration?) -> Void
) async -> Value? {
    let started = clock.now
    var attempts = 0
    while !Task.isCancelled {
        attempts += 1
        let failure: Failure
        do throws(Failure) {
            return try await attempt()
        } catch {
            failure = error
        }
        let wait = policy.delay(beforeAttempt: attempts, unit: unit())
        let spent = policy.maximumAttempts.map { attempts >= $0 } ?? false
        let late = giveUpAfter.map { started.duration(to: clock.now) + wait > $0 } ?? false
        guard !spent, !late else {
            failed(failure, nil)
            return nil
        }
        failed(failure, wait)
        do {
            try await clock.sleep(for: wait)
        } catch {
            return nil
        }
    }
    return nil
}
