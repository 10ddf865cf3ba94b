public import CameraKit
public import DaemonClient
import Foundation
public import Intervalometer
import Synchronization
public import UnleashedKit

/// A run under way, wherever it is shot: in this process (``LocalRun``) or as a daemon's job.
/// What a person or a script does to a run (signals, the live display, `--json`) is wired once
/// against this, not once per place the run is shot.
public protocol RunController: Sendable {
    /// Every frame record once it is journalled, in order; finishes when the run ends. One consumer.
    var records: AsyncStream<FrameRecord> { get }
    /// The run as journalled (its id, `t0`), once it has begun; nil before.
    func current() async -> RunRecord?
    /// Ends the run now (a bulb or clip under way is ended first and its frame recorded).
    func stop(reason: String) async
    /// Ends the run after the current slot.
    func stopAfterCurrentFrame() async
    /// Shoots one extra picture now, outside the schedule.
    func shootExtraFrame() async
    /// Holds the schedule.
    func pause() async
    /// Continues a paused schedule, shifted by the time paused.
    func continueSchedule() async
    /// Waits for the run's end and says how it went.
    func outcome() async -> RunOutcome
}

/// How a run ended, as its last line and its exit status need it.
public struct RunEnd: Sendable, Equatable {
    public var id: Int64
    /// `finished`, `failed`, `interrupted` (the journal failed), or `running` (suspended).
    public var state: String
    public var reason: String
    public var summary: RunSummary
    /// The file holding the records the journal did not take.
    public var recoveryFile: String?
    /// Records that neither the journal nor a recovery file took: nowhere else but in what is shown.
    public var unrecorded: [FrameRecord]

    public init(id: Int64, state: String, reason: String, summary: RunSummary, recoveryFile: String? = nil,
                unrecorded: [FrameRecord] = []) {
        self.id = id
        self.state = state
        self.reason = reason
        self.summary = summary
        self.recoveryFile = recoveryFile
        self.unrecorded = unrecorded
    }

    /// What went wrong for the run as a whole, in order of precedence; nil when it did its job.
    public enum Verdict: Sendable, Equatable {
        /// The journal failed: the run is resumable and nothing taken was lost.
        case journalFailed
        /// The run failed, or every slot was skipped (no camera ever reached).
        case unavailable
        /// Every slot failed (a card full from the start, a camera that refuses every shot).
        case refused
    }

    /// A run that took no picture at all did not do its job, and a run that ended `failed` or
    /// `interrupted` says so; skipped slots alone mean the camera was never there.
    public var verdict: Verdict? {
        if state == "interrupted" { return .journalFailed }
        if state == "failed" { return .unavailable }
        return Self.verdict(of: summary)
    }

    /// The verdict on the frames alone: nothing taken because every slot failed, or was skipped.
    public static func verdict(of summary: RunSummary) -> Verdict? {
        guard summary.taken == 0 else { return nil }
        if summary.failed > 0 { return .refused }
        if summary.skipped > 0 { return .unavailable }
        return nil
    }
}

/// How following a run came out.
public enum RunOutcome: Sendable {
    /// The run ended (or was suspended) and this is its end.
    case ended(RunEnd)
    /// The run in this process failed or was refused (before it began, or by an error that stopped it).
    case failed(TimelapseError)
    /// The daemon could not be asked about the job.
    case daemon(DaemonClientError)
    /// The daemon ended the job's events without its outcome (why, for the message).
    case unknown(String)
    /// Following a job this command did not start was given up (Ctrl-C on `attach`); the
    /// job goes on in the daemon.
    case stoppedFollowing(jobID: Int64)
    /// The run was not started: its camera could not be opened.
    case notStarted
}

/// A run shot in this process: a ``Timelapse`` on a camera or a rig, journalled in `journal`.
/// Controls that arrive before the camera is open (a signal while connecting) are kept and
/// delivered once the run exists.
public final class LocalRun: RunController {
    /// How the run starts: new, after a delay, or resumed from the journal.
    public enum Start: Sendable {
        case new(RunPlan, delay: Duration)
        case resumed(RunRecord)

        public var plan: RunPlan {
            switch self {
            case .new(let plan, _): plan
            case .resumed(let record): record.plan
            }
        }

        public var delay: Duration {
            if case .new(_, let delay) = self { return delay }
            return .zero
        }
    }

    private typealias Action = @Sendable (Timelapse<ContinuousClock>) async -> Void

    private struct State {
        var run: Timelapse<ContinuousClock>?
        var pending: [Action] = []
    }

    public let start: Start
    public let records: AsyncStream<FrameRecord>
    private let settled = OutcomeLatch()
    private let sink: AsyncStream<FrameRecord>.Continuation
    private let journal: SQLiteJournal
    private let state = Mutex(State())

    public init(_ start: Start, journal: SQLiteJournal) {
        self.start = start
        self.journal = journal
        (records, sink) = AsyncStream.makeStream(of: FrameRecord.self, bufferingPolicy: .bufferingNewest(4096))
    }

    /// Runs the plan on `camera` to its end.
    public func run(on camera: any Camera) async -> RunOutcome {
        let run = Timelapse(plan: start.plan, camera: camera, journal: journal, clock: ContinuousClock(),
                            wallClock: Self.wallClock, hooks: start.plan.hookRunner,
                            threadPriority: Timelapse<ContinuousClock>.realTimeThreadPriority)
        return await drive(run, cameraName: camera.identity.name)
    }

    /// Runs the plan on every camera of `rig` together to its end.
    public func run(on rig: Rig) async -> RunOutcome {
        let run = Timelapse(plan: start.plan, rig: rig, journal: journal, clock: ContinuousClock(),
                            wallClock: Self.wallClock, hooks: start.plan.hookRunner,
                            threadPriority: Timelapse<ContinuousClock>.realTimeThreadPriority)
        return await drive(run, cameraName: rig.members.map(\.name).joined(separator: ","))
    }

    /// Ends a run whose camera could not be opened: its records finish and its outcome is ``RunOutcome/notStarted``.
    public func abandon() {
        finish(.notStarted)
    }

    public func current() async -> RunRecord? {
        guard let run = state.withLock({ $0.run }) else { return nil }
        return await run.current
    }

    public func stop(reason: String) async { send { await $0.stop(reason: reason) } }
    public func stopAfterCurrentFrame() async { send { await $0.stopAfterCurrentFrame() } }
    public func shootExtraFrame() async { send { await $0.shootExtraFrame() } }
    public func pause() async { send { await $0.pauseSchedule() } }
    public func continueSchedule() async { send { await $0.continueSchedule() } }

    public func outcome() async -> RunOutcome { await settled.wait() }

    private static let wallClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    private func drive(_ run: Timelapse<ContinuousClock>, cameraName: String) async -> RunOutcome {
        let pending = state.withLock { state in
            state.run = run
            defer { state.pending = [] }
            return state.pending
        }
        for action in pending { await action(run) }
        let sink = sink
        let relay = Task { for await record in run.records { sink.yield(record) } }
        let outcome: RunOutcome
        do throws(TimelapseError) {
            let ending: RunEnding
            switch start {
            case .new(_, let delay): ending = try await run.start(cameraName: cameraName, startDelay: delay)
            case .resumed(let record): ending = try await run.resume(record)
            }
            await relay.value
            outcome = .ended(end(of: ending))
        } catch {
            await relay.value
            outcome = .failed(error)
        }
        finish(outcome)
        return outcome
    }

    /// The end of `ending` with its summary: an interrupted run's journal lacks what it could
    /// not take, which the recovery file (or, failing that, the ending itself) holds.
    private func end(of ending: RunEnding) -> RunEnd {
        let kept = ending.recoveryFile.map { JournalRecovery.records(in: [$0]) } ?? ending.unrecorded
        let summary = RunSummary(frames: ((try? journal.frames(of: ending.run.id)) ?? []) + kept)
        return RunEnd(id: ending.run.id, state: ending.stateName, reason: ending.reason, summary: summary,
                      recoveryFile: ending.recoveryFile, unrecorded: ending.unrecorded)
    }

    private func finish(_ outcome: RunOutcome) {
        sink.finish()
        settled.settle(outcome)
    }

    private func send(_ action: @escaping Action) {
        let run = state.withLock { state in
            if state.run == nil { state.pending.append(action) }
            return state.run
        }
        if let run { Task { await action(run) } }
    }
}

/// A run's outcome, settled once, for any number of waiters: what ``LocalRun`` and ``JobRun``
/// answer ``RunController/outcome()`` with.
final class OutcomeLatch: Sendable {
    private let state = Mutex<(outcome: RunOutcome?, waiting: [CheckedContinuation<RunOutcome, Never>])>((nil, []))

    /// The outcome, once it is settled.
    func wait() async -> RunOutcome {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state in
                if state.outcome == nil { state.waiting.append(continuation) }
                return state.outcome
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// Settles the outcome and wakes its waiters; the first call wins.
    func settle(_ outcome: RunOutcome) {
        let waiting = state.withLock { state in
            guard state.outcome == nil else { return [CheckedContinuation<RunOutcome, Never>]() }
            state.outcome = outcome
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: outcome) }
    }
}
