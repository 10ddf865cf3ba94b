public import CameraKit
import Synchronization

/// One camera of a rig, under the name people use for it.
public struct RigCamera: Sendable {
    /// The name commands, records and the API use: a configured module's name.
    public let name: String
    public let camera: any Camera

    public init(name: String, camera: any Camera) {
        self.name = name
        self.camera = camera
    }
}

/// One command for every camera of a rig, fired together: a task per camera is started and
/// parked ahead of time, and one ``release()`` lets them all go at once. No camera waits for
/// another's round trip, as it would in a loop of awaits, so the spread between the first and
/// the last command is the time the machine takes to start a handful of tasks.
///
/// Each command's start and end are timed on the monotonic clock, for the skew telemetry of
/// ``VolleySpread``.
public final class Volley<Value: Sendable>: Sendable {
    /// What became of the command to one camera.
    public struct Outcome: Sendable {
        public let name: String
        /// When the command started, after the release; nil when it never ran (discarded).
        public let sent: ContinuousClock.Instant?
        /// When it returned.
        public let completed: ContinuousClock.Instant?
        /// Its result; nil when it never ran.
        public let result: Result<Value, CameraError>?
        /// ``sent`` and ``completed`` on the caller's own clock (a run's time since its start).
        public let sentStamp: Duration?
        public let completedStamp: Duration?
    }

    private let gate: ReleaseGate
    private let tasks: [Task<Outcome, Never>]

    /// Starts one task per camera, each parked until ``release()``, and returns once all of them
    /// are parked, so that a release reaches running tasks rather than tasks still starting.
    ///
    /// - Parameters:
    ///   - stamp: the caller's clock, read beside the monotonic one at each start and end.
    ///   - executor: where the tasks run; a run's own thread, so that a release at a deadline
    ///     does not wait for a pool thread. Nil: the global pool.
    public static func prepare(_ cameras: [RigCamera], stamp: @escaping @Sendable () -> Duration = { .zero },
                               executor: (any TaskExecutor)? = nil,
                               command: @escaping @Sendable (any Camera) async throws(CameraError) -> Value) async -> Volley {
        let gate = ReleaseGate(expecting: cameras.count)
        let tasks = cameras.map { member in
            Task(executorPreference: executor) { () async -> Outcome in
                guard await gate.wait() else {
                    return Outcome(name: member.name, sent: nil, completed: nil, result: nil, sentStamp: nil, completedStamp: nil)
                }
                let (sent, sentStamp) = (ContinuousClock.now, stamp())
                let result: Result<Value, CameraError>
                do throws(CameraError) {
                    result = .success(try await command(member.camera))
                } catch {
                    result = .failure(error)
                }
                return Outcome(name: member.name, sent: sent, completed: ContinuousClock.now, result: result,
                               sentStamp: sentStamp, completedStamp: stamp())
            }
        }
        await gate.allParked()
        return Volley(gate: gate, tasks: tasks)
    }

    private init(gate: ReleaseGate, tasks: [Task<Outcome, Never>]) {
        self.gate = gate
        self.tasks = tasks
    }

    /// Lets every command go. Later calls do nothing.
    public func release() {
        gate.open(run: true)
    }

    /// Ends the volley without running its commands (the slot was called off before its
    /// deadline). After a release, does nothing.
    public func discard() {
        gate.open(run: false)
    }

    /// Cancels the commands under way: a bulb exposure or a clip ends early.
    public func cancel() {
        for task in tasks { task.cancel() }
    }

    /// Every camera's outcome, in the order the cameras were given, once all have returned.
    public func outcomes() async -> [Outcome] {
        var outcomes: [Outcome] = []
        for task in tasks { outcomes.append(await task.value) }
        return outcomes
    }
}

/// How far apart the cameras of one volley acted: between the first and the last command to
/// start, and between the first and the last to complete (a shot reported). Nil where fewer
/// than one camera counted.
public struct VolleySpread: Hashable, Sendable {
    public var commands: Duration?
    public var completions: Duration?

    public init(commands: Duration?, completions: Duration?) {
        self.commands = commands
        self.completions = completions
    }

    /// The spreads of `outcomes`: every command that ran counts for the first, every one that
    /// succeeded for the second.
    public init<Value>(_ outcomes: [Volley<Value>.Outcome]) {
        commands = Self.spread(outcomes.compactMap(\.sent))
        completions = Self.spread(outcomes.compactMap { outcome in
            if case .success = outcome.result { outcome.completed } else { nil }
        })
    }

    private static func spread(_ instants: [ContinuousClock.Instant]) -> Duration? {
        guard let first = instants.min(), let last = instants.max() else { return nil }
        return first.duration(to: last)
    }
}

/// Tasks wait here until one call opens it for all of them.
final class ReleaseGate: Sendable {
    private struct State {
        var expected: Int
        var parked = 0
        /// Set once: whether the waiters go on to run their command.
        var verdict: Bool?
        var waiters: [CheckedContinuation<Bool, Never>] = []
        var parkedWatchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(expecting count: Int) {
        state = Mutex(State(expected: count))
    }

    /// Parks until ``open(run:)``; returns its verdict.
    func wait() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let (verdict, watchers) = state.withLock { state -> (Bool?, [CheckedContinuation<Void, Never>]) in
                state.parked += 1
                if let verdict = state.verdict { return (verdict, []) }
                state.waiters.append(continuation)
                guard state.parked >= state.expected else { return (nil, []) }
                defer { state.parkedWatchers = [] }
                return (nil, state.parkedWatchers)
            }
            for watcher in watchers { watcher.resume() }
            if let verdict { continuation.resume(returning: verdict) }
        }
    }

    /// Returns once every expected task waits at the gate.
    func allParked() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.parked >= state.expected || state.verdict != nil { return true }
                state.parkedWatchers.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Resumes every waiter, all in one go, and every later one at once.
    func open(run: Bool) {
        let (waiters, watchers) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], [CheckedContinuation<Void, Never>]) in
            guard state.verdict == nil else { return ([], []) }
            state.verdict = run
            defer { state.waiters = []; state.parkedWatchers = [] }
            return (state.waiters, state.parkedWatchers)
        }
        for watcher in watchers { watcher.resume() }
        for waiter in waiters { waiter.resume(returning: run) }
    }
}
