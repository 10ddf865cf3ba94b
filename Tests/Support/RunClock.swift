public import Clocks
import Synchronization

/// The tests' clock: a manual clock that knows who sleeps on it.
///
/// While ``flowing(_:)`` runs, time moves only when something sleeps on the clock, and then
/// straight to the earliest deadline: each slot of a run goes out exactly on its deadline however
/// long a loaded machine takes to drive the camera, and a schedule of minutes passes as fast as
/// the camera can shoot it. Outside it, time stands still until a test moves it with
/// ``advance(by:)``. (swift-clocks' `TestClock` cannot say whether anything sleeps, nor when.)
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
        /// The flow, waiting for something to sleep.
        var watcher: CheckedContinuation<Void, Never>?
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

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (settled, watcher) = state.withLock { (state: inout State) -> (Result<Void, any Error>?, CheckedContinuation<Void, Never>?) in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), nil) }
                    if deadline <= state.now { return (.success(()), nil) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    defer { state.watcher = nil }
                    return (nil, state.watcher)
                }
                if let settled { continuation.resume(with: settled) }
                watcher?.resume()
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
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never back); every sleep due by then ends.
    public func advance(to instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
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

    private func moveWhileAsleep(until limit: Instant?) async {
        while let deadline = await earliestDeadline(until: limit) {
            advance(to: deadline)
        }
    }

    /// The earliest deadline slept until, once anything sleeps until `limit` or earlier; nil
    /// once the task is cancelled.
    private func earliestDeadline(until limit: Instant?) async -> Instant? {
        func due(_ state: State) -> Instant? {
            state.sleepers.values.map(\.deadline).filter { deadline in limit.map { deadline <= $0 } ?? true }.min()
        }
        while !Task.isCancelled {
            if let earliest = state.withLock({ due($0) }) { return earliest }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Checked under the lock that the cancellation handler takes too.
                    let wait = state.withLock { state in
                        let wait = due(state) == nil && !Task.isCancelled
                        if wait { state.watcher = continuation }
                        return wait
                    }
                    if !wait { continuation.resume() }
                }
            } onCancel: {
                state.withLock { state in
                    defer { state.watcher = nil }
                    return state.watcher
                }?.resume()
            }
        }
        return nil
    }
}
