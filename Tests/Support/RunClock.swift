public import Clocks
import Synchronization
public import UnleashedKit

/// The tests' clock, the only one they use: a manual clock that knows who sleeps on it.
///
/// While ``flowing(until:_:)`` runs, time moves only when something sleeps on the clock, and
/// then straight to the earliest deadline: each slot of a run goes out exactly on its deadline
/// however long a loaded machine takes to drive the camera, and a schedule of minutes passes as
/// fast as the camera can shoot it. Outside it, time stands still until a test moves it with
/// ``advance(by:)``, which wakes the sleepers it passes one deadline at a time, as a real clock
/// would. ``waitForSleep(until:)`` tells a test that a task it cannot see is mid-sleep, so that it
/// can act at a time the task sleeps through. (swift-clocks' `TestClock` cannot say whether
/// anything sleeps, nor when.)
public final class RunClock: Clock, Sendable {
    public typealias Instant = TestClock<Duration>.Instant

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant()
        var sleepers: [Int: Sleeper] = [:]
        /// Sleeps cancelled before they were registered.
        var cancelled: Set<Int> = []
        var lastID = 0
        /// Who waits for something to sleep (the flow, ``waitForSleep(until:)``), by id.
        var watchers: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// The wall clock's reading when this clock starts.
    public static let startUnixMs: Int64 = 1_700_000_000_000

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Unix milliseconds now, moving with this clock: what labels a job's `t0` and places a
    /// resumed run on its schedule.
    public var wallClock: @Sendable () -> Int64 {
        { [self] in Self.startUnixMs + Instant().duration(to: now).wholeMilliseconds }
    }

    /// The host's clock moving with this clock, `wallClockErrorMs` off ``wallClock``: what a
    /// daemon's wall clock reads in a test.
    public func hostClock(synchronised: Bool = true, wallClockErrorMs: Int64 = 0) -> HostClockSource {
        let wall = wallClock
        let discipline = ClockDiscipline(synchronised: synchronised, estimatedError: .zero, maximumError: .zero)
        return HostClockSource(wallClockMs: { wall() + wallClockErrorMs }, monotonic: { [self] in Instant().duration(to: now) },
                               discipline: { discipline })
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (settled, watchers) = state.withLock { (state: inout State) -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    defer { state.watchers = [:] }
                    return (nil, Array(state.watchers.values))
                }
                if let settled { continuation.resume(with: settled) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper == nil { state.cancelled.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock `duration` on; every sleep due by then ends.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never back), one deadline at a time: the sleep due first
    /// ends at its deadline, and the task it wakes gets to run, and to sleep again (then woken in
    /// turn if due by `instant`), before the clock moves on to the next.
    public func advance(to instant: Instant) async {
        while true {
            await Self.yieldToOthers()
            let next = state.withLock { state -> Sleeper? in
                let first = state.sleepers.filter { $0.value.deadline <= instant }
                    .min { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
                guard let first else {
                    state.now = max(state.now, instant)
                    return nil
                }
                state.sleepers[first.key] = nil
                state.now = max(state.now, first.value.deadline)
                return first.value
            }
            guard let next else { break }
            next.continuation.resume()
        }
        await Self.yieldToOthers()
    }

    /// Lets the tasks a move woke run before the clock moves again: each round waits for a task
    /// of background priority, which runs after the work already queued (a bare `Task.yield`
    /// lets a busy pool put the woken tasks off).
    private static func yieldToOthers() async {
        for _ in 0..<20 { await Task.detached(priority: .background) { await Task.yield() }.value }
    }

    /// Moves the clock to `instant` (never back) and ends every sleep due by then, at once.
    private func resumeDue(at instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }.map(\.value)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// The instant at which the wall clock reads `unixMs`.
    public func instant(unixMs: Int64) -> Instant {
        Instant().advanced(by: .milliseconds(unixMs - Self.startUnixMs))
    }

    /// Runs `body` with time flowing: whenever something sleeps on the clock, it moves to the
    /// earliest deadline, but never past `limit`. Time stands still again once `body` returns.
    public func flowing<T>(until limit: Instant? = nil, _ body: () async throws -> T) async throws -> T {
        let flow = Task { await moveWhileAsleep(until: limit) }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        flow.cancel()
        await flow.value
        return try result.get()
    }

    /// Returns once something sleeps on the clock until exactly `deadline` (or the task is
    /// cancelled): for a test that acts at a time a task sleeps through (a stop in the middle of a
    /// clip), which must be asleep before the clock moves there.
    public func waitForSleep(until deadline: Instant) async {
        _ = await whenSleeping { state in state.sleepers.values.contains { $0.deadline == deadline } ? () : nil }
    }

    /// Whether anything sleeps until a deadline later than now: a task that sets a timer has
    /// set it, and will not be passed over by the next move of the clock.
    public var isAsleepPastNow: Bool {
        state.withLock { state in state.sleepers.values.contains { $0.deadline > state.now } }
    }

    /// Lets time flow up to `instant`, until something sleeps until `deadline` (past `instant`),
    /// then moves the clock to `instant`: where a test acts in the middle of a sleep it cannot
    /// see (a stop while a clip records).
    public func advance(to instant: Instant, whileSleepingUntil deadline: Instant) async throws {
        try await flowing(until: instant) { await waitForSleep(until: deadline) }
        await advance(to: instant)
    }

    private func moveWhileAsleep(until limit: Instant?) async {
        while let deadline = await whenSleeping({ state in
            state.sleepers.values.map(\.deadline).filter { deadline in limit.map { deadline <= $0 } ?? true }.min()
        }) {
            resumeDue(at: deadline)
        }
    }

    /// What `found` reads from the sleepers, once it reads anything (looked at again whenever
    /// something starts to sleep); nil once the task is cancelled.
    private func whenSleeping<T>(_ found: (State) -> T?) async -> T? {
        while !Task.isCancelled {
            if let value = state.withLock({ found($0) }) { return value }
            let id = state.withLock { state in
                state.lastID += 1
                return state.lastID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Checked under the lock that the cancellation handler takes too.
                    let wait = state.withLock { state in
                        let wait = found(state) == nil && !Task.isCancelled
                        if wait { state.watchers[id] = continuation }
                        return wait
                    }
                    if !wait { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.watchers.removeValue(forKey: id) }?.resume()
            }
        }
        return nil
    }
}
