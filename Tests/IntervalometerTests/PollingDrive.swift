import Clocks
import Intervalometer
import Synchronization
import Testing

/// Moves `clock` in `step`s of real time while `body` runs, then returns its ending and the
/// run's frames: for runs whose slots sleep on the run's clock themselves (a clip), which a
/// drive that moves the clock only at the run's own waits cannot reach.
func drive(_ clock: TestClock<Duration>, journal: MemoryJournal, step: Duration = .milliseconds(10), limit: Duration = .seconds(600),
           _ body: @escaping @Sendable () async throws -> RunEnding) async throws -> (RunEnding, [FrameRecord]) {
    let finished = Mutex(false)
    let task = Task {
        defer { finished.withLock { $0 = true } }
        return try await body()
    }
    // The run reads the clock for t0 just before journalling itself: the clock stands still
    // until then, however long a loaded machine takes to get the run that far.
    let begun = ContinuousClock.now
    while try journal.runs().isEmpty && !finished.withLock({ $0 }) && ContinuousClock.now - begun < .seconds(30) {
        try await Task.sleep(for: .milliseconds(1))
    }
    var waited = Duration.zero
    while !finished.withLock({ $0 }) && waited <= limit {
        await clock.advance(by: step)
        // Yielding alone does not let a woken actor run when the machine is loaded (tests run
        // in parallel): give it real time, or it would see the clock a step later.
        try await Task.sleep(for: .milliseconds(1))
        waited += step
    }
    let ending = try await task.value
    return (ending, try journal.frames(of: ending.run.id))
}

