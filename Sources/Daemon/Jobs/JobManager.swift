import Foundation
public import Intervalometer
public import Logging
public import UnleashedAPI
public import UnleashedKit

/// A job at one moment: the API's job document itself. Running jobs are taken from the
/// daemon's memory, ended ones from the journal, so a listing survives restarts.
public typealias JobSnapshot = JobDocument

/// What a follower of a job receives: every frame record in order, then how the job ended.
public enum JobUpdate: Sendable, Hashable {
    case frame(FrameRecord)
    /// The last update; `RunEnding.state` is `.running` for a suspended job.
    case ended(RunEnding, RunSummary)
}

/// What a watcher of every job receives (``JobManager/watch()``).
public enum JobChange: Sendable, Hashable {
    /// A job started, paused, continued or ended: the job now.
    case job(JobSnapshot)
    /// A running job's frame, as journalled.
    case frame(FrameRecord, job: Int64)
}

/// The jobs at one moment: what a dashboard starts from.
public struct JobsNow: Sendable {
    /// The running jobs, newest first, then the latest ended ones (as ``JobManager/jobs()``).
    public let jobs: [JobSnapshot]
    /// Each running job's newest frames, oldest first.
    public let recentFrames: [Int64: [FrameRecord]]
}

/// Why a job operation was refused. Each case says what to do, for the API's messages.
public enum JobError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request names no camera the daemon holds.
    case camera(CameraLookupError)
    /// One camera runs one job at a time; `job` is nil while that job is still being started.
    case cameraBusy(camera: String, job: Int64?)
    case unknownJob(Int64)
    /// The job exists but has ended (or not yet begun) and cannot take the command.
    case notRunning(Int64, JobState)
    /// The engine refused the plan before journalling anything.
    case refused(TimelapseError)
    /// The journal could not be read.
    case journal(String)
    /// The daemon is stopping and takes no new jobs.
    case shuttingDown
    /// Only an interrupted (`suspended`) job can be resumed: this one is live, or has ended
    /// (with the reason it ended).
    case notInterrupted(Int64, JobState, reason: String?)
    /// A process other than this daemon, still alive, shoots the run (a CLI that began it
    /// without the daemon or resumed it): it is not interrupted, only elsewhere.
    case shotElsewhere(Int64, by: RunOwner)
    /// The run's camera (or one of a rig's) is not one the daemon holds now.
    case cameraNotHeld(job: Int64, camera: String, held: [String])

    public var description: String {
        switch self {
        case .camera(let error): error.description
        case .cameraBusy(let camera, let job):
            job.map { "camera \(camera) is running job \($0); stop it first" } ?? "camera \(camera) is starting a job; stop it first"
        case .unknownJob(let id): "there is no job \(id)"
        case .notRunning(let id, let state): "job \(id) is \(state.rawValue); only a job that runs takes commands"
        case .notInterrupted(let id, .paused, _): "job \(id) is paused, not interrupted; continue it instead"
        case .notInterrupted(let id, let state, _) where state.isLive:
            "job \(id) is \(state.rawValue); only an interrupted job can be resumed"
        case .notInterrupted(let id, let state, let reason):
            "job \(id) has \(state.rawValue)\(reason.map { " (\($0))" } ?? ""); only an interrupted job can be resumed"
        case .shotElsewhere(let id, let owner):
            "job \(id) is being shot by \(owner), not by this daemon; resume it here once that process has ended"
        case .cameraNotHeld(let id, let camera, let held):
            "job \(id) runs on camera \(camera), which the daemon does not hold"
                + (held.isEmpty ? "" : " (it holds \(held.joined(separator: ", ")))") + "; connect it, then resume the job"
        case .refused(let error): error.description
        case .journal(let why): "the run journal failed: \(why)"
        case .shuttingDown: "the daemon is stopping and takes no new jobs"
        }
    }
}

/// The jobs the daemon runs: time-lapse and video runs on the intervalometer engine, one per
/// camera, each journalled so that it survives a restart of the daemon.
///
/// The manager owns every running ``Timelapse`` and relays its frames to any number of
/// followers. A follower gets a buffered stream: one that falls far behind is finished rather
/// than allowed to hold up the run or grow without bound.
public actor JobManager {
    private final class Job {
        let record: RunRecord
        /// The camera's name, or a rig's names joined by commas.
        let camera: String
        /// The names of its cameras, lower-cased: one job per camera at a time.
        let keys: Set<String>
        let run: any JobRun
        /// The run's newest frames in journal order, between the manager's `framesKept` and twice
        /// that many once it has had them: for followers that join late (older frames come from
        /// the journal), the web app's recent frames, and to take each frame once. A run of a
        /// slot every 200 ms has 18,000 frames an hour: the journal holds them, not memory.
        private(set) var recent: [FrameRecord] = []
        /// Whether frames have left ``recent``, so that a replay from further back reads the journal.
        private(set) var trimmed = false
        /// The run's summary so far, taken in one frame at a time.
        private(set) var tally = RunSummary.Tally()
        var paused = false
        /// The slot the run's schedule shoots next, as it last said.
        var nextSlot: NextSlot?
        /// Which of the run's notices `nextSlot` came from: an older one, relayed late, is ignored.
        var nextSlotSequence = 0
        var followers: [UUID: AsyncStream<JobUpdate>.Continuation] = [:]
        /// Relays the run's frames and reports its end; done once the job has ended.
        var relay: Task<Void, Never>?
        /// The wall clock's ``DaemonClock/movedMs`` when the run's `t0` was read off it: the
        /// job's wall times are shown moved by as much as the clock has moved since.
        let movedAtStart: Int64

        init(record: RunRecord, cameras: [String], run: any JobRun, movedAtStart: Int64) {
            self.record = record
            camera = cameras.joined(separator: ",")
            keys = Set(cameras.map { $0.lowercased() })
            self.run = run
            self.movedAtStart = movedAtStart
        }

        /// Takes in `frame` once; false when it already has it (a resumed run's engine may
        /// repeat the last frames that the journal gave before).
        func take(_ frame: FrameRecord, keeping kept: Int) -> Bool {
            let key = FrameKey(frame)
            guard !recent.contains(where: { FrameKey($0) == key }) else { return false }
            recent.append(frame)
            tally.add(frame)
            if recent.count >= 2 * kept {
                recent.removeFirst(recent.count - kept)
                trimmed = true
            }
            return true
        }
    }

    private struct FrameKey: Hashable {
        let frame: Int, part: Int, camera: String?
        init(_ record: FrameRecord) { (frame, part, camera) = (record.frame, record.part, record.camera) }
    }

    private enum Start {
        case new(delay: Duration)
        case at(unixMs: Int64)
        case resumed(RunRecord)
    }

    /// How many updates a follower may lag behind the run before it is dropped.
    private let followerBacklog: Int
    /// How many ended jobs a listing shows.
    static let recentEnded = 20
    /// How many of a running job's newest frames stay in memory, at least, unless told otherwise.
    public static let defaultFramesKept = 256
    private let framesKept: Int

    private let journal: any RunJournal
    private let cameras: CameraRegistry
    private let logger: Logger
    private var active: [Int64: Job] = [:]
    /// Cameras (lowercased names) with a job being started, so two requests cannot both win.
    private var starting: Set<String> = []
    /// Why jobs suspended while this daemon ran were suspended; the journal keeps no reason
    /// for a run that has not ended.
    private var suspendReasons: [Int64: String] = [:]
    private var closing = false
    /// Snapshots of jobs that ended (finished or failed), which never change: a listing reads
    /// only the journal's runs, not every frame of every ended run again. Bounded.
    private var endedSnapshots: [Int64: JobSnapshot] = [:]
    /// Those watching every job (``watch()``): the dashboards' feed.
    private var watchers: [UUID: AsyncStream<JobChange>.Continuation] = [:]
    private let metrics: DaemonMetrics?
    /// Times every run's slots, delays and clips.
    private let clock: any Clock<Duration>
    /// The daemon's wall clock: labels a run's `t0`, places a resumed run on its schedule, and
    /// tells a waiting job from a running one. Never times a slot.
    public nonisolated let wallClock: DaemonClock
    /// What each run's thread asks the kernel for: the daemon asks for real-time priority
    /// (``Timelapse/realTimeThreadPriority``); a manager made by a test, among many at once on a
    /// small machine, for the default.
    private let runThreadPriority: ExecutorThread.Priority
    /// Whether the daemon takes up interrupted runs by itself (`daemon.resume_runs`), which an
    /// interrupted job's reason says.
    private let resumesByItself: Bool

    /// - Parameters:
    ///   - journal: Where runs are recorded (the daemon's SQLite journal); job ids are its run ids.
    ///   - cameras: The cameras jobs may run on, by name.
    ///   - followerBacklog: How many updates a follower may fall behind before it is let go;
    ///     what a slow client may cost in memory, never in the run's timing.
    ///   - framesKept: How many of a running job's newest frames stay in memory (up to twice
    ///     as many); a follower that asks for older ones gets them from the journal.
    ///   - metrics: Counts the jobs' frames and how many jobs run, for `GET /metrics`.
    ///   - clock: The monotonic clock the runs wait on. The real one keeps a run's deadlines
    ///     on its own thread and lets a rig schedule shots on its modules' timers; a test
    ///     hands in a clock it moves itself.
    ///   - wallClock: The daemon's wall clock, on the host's clock as a test plays it, moving
    ///     with `clock`.
    ///   - resumesByItself: Whether the daemon resumes interrupted runs by itself
    ///     (``resumeInterrupted(quietly:)``), as `daemon.resume_runs` says.
    public init(journal: any RunJournal, cameras: CameraRegistry, logger: Logger = Logger(label: "unleashed.jobs"),
                followerBacklog: Int = 1024, framesKept: Int = JobManager.defaultFramesKept, metrics: DaemonMetrics? = nil,
                clock: any Clock<Duration> = ContinuousClock(), wallClock: DaemonClock = DaemonClock(),
                runThreadPriority: ExecutorThread.Priority = Timelapse<ContinuousClock>.defaultThreadPriority,
                resumesByItself: Bool = true) {
        self.runThreadPriority = runThreadPriority
        self.resumesByItself = resumesByItself
        self.journal = journal
        self.cameras = cameras
        self.logger = logger
        self.followerBacklog = max(followerBacklog, 1)
        self.framesKept = max(framesKept, 1)
        self.metrics = metrics
        self.clock = clock
        self.wallClock = wallClock
        // Watchers of a running job are shown its times on the clock as it reads now.
        wallClock.whenMoved { [weak self] in
            Task { await self?.wallClockMoved() }
        }
    }

    /// A manager with no cameras and a journal in memory: for a control API that runs no jobs.
    public init() {
        self.init(journal: MemoryJournal(), cameras: CameraRegistry())
    }

    /// Now on the manager's wall clock, in Unix milliseconds: what a document that names a
    /// time of day (a start time, `until` 06:30) is to be read against, so that it agrees with
    /// the runs' `t0`.
    public nonisolated var nowUnixMs: Int64 { wallClock.nowUnixMs }

    // MARK: - Starting

    /// Starts `plan` on a camera (by name, or the only one held) after `startDelay`, or, when
    /// `startingAt` is given, at that wall-clock instant instead (Unix milliseconds: a fleet's
    /// start, which the run then journals as its `t0` to the millisecond), and returns once the run is journalled, so the
    /// answer carries the job's id. A plan the engine refuses (too short an interval, a hook
    /// that says no, a camera not in bulb mode) fails here and leaves nothing in the journal.
    public func submit(camera name: String?, plan: RunPlan, startDelay: Duration = .zero,
                       startingAt unixMs: Int64? = nil) async throws(JobError) -> JobSnapshot {
        guard !closing else { throw .shuttingDown }
        let entry: CameraRegistry.Entry
        do { entry = try await cameras.camera(named: name) } catch { throw .camera(error) }
        let id = try await launch(on: [entry], isRig: false, plan: plan, unixMs.map { .at(unixMs: $0) } ?? .new(delay: startDelay))
        return try await job(id)
    }

    /// Starts `plan` on a rig: every slot fires all of `names` together, and each camera gets
    /// a record per slot. Refused when a camera is unknown or already runs a job. It starts as
    /// ``submit(camera:plan:startDelay:startingAt:)`` does.
    public func submit(rig names: [String], plan: RunPlan, startDelay: Duration = .zero,
                       startingAt unixMs: Int64? = nil) async throws(JobError) -> JobSnapshot {
        guard !closing else { throw .shuttingDown }
        var entries: [CameraRegistry.Entry] = []
        for name in names {
            do { entries.append(try await cameras.camera(named: name)) } catch { throw .camera(error) }
        }
        let id = try await launch(on: entries, isRig: true, plan: plan, unixMs.map { .at(unixMs: $0) } ?? .new(delay: startDelay))
        return try await job(id)
    }

    /// Resumes every run the journal holds as interrupted (the daemon stopped, or crashed,
    /// during it) whose cameras the registry holds, each on its original schedule. Runs whose
    /// camera is missing are logged (unless `quietly`: a retry as cameras come) and left until
    /// their cameras are held; a run that cannot be resumed otherwise keeps why as its reason,
    /// for a client to resume it once that is mended (``resume(_:)``). Returns the ids resumed.
    public func resumeInterrupted(quietly: Bool = false) async -> [Int64] {
        let records: [RunRecord]
        do {
            records = try journal.runs()
        } catch {
            logger.error("cannot read the run journal to resume interrupted jobs: \(error)")
            return []
        }
        var resumed: [Int64] = []
        for record in records.reversed() where record.state == .running && active[record.id] == nil {
            do throws(JobError) {
                try await takeUp(record)
                resumed.append(record.id)
                logger.info("resumed job \(record.id) on camera \(record.camera)")
            } catch {
                switch error {
                case .cameraNotHeld:
                    if !quietly {
                        logger.notice("job \(record.id) was interrupted on camera '\(record.camera)', which the daemon does not hold yet; it resumes when it does")
                    }
                case .shotElsewhere:
                    logger.log(level: quietly ? .debug : .notice, "job \(record.id) is not resumed: \(error)")
                case .notInterrupted:
                    // A client resumed it meanwhile.
                    continue
                case .shuttingDown:
                    return resumed
                default:
                    suspendReasons[record.id] = "interrupted; the daemon could not resume it: \(error)"
                    // Retried at each change of the cameras: said once, at start, as an error.
                    logger.log(level: quietly ? .debug : .error, "cannot resume job \(record.id): \(error)")
                }
            }
        }
        return resumed
    }

    /// Resumes the interrupted job `id` now, as the daemon does by itself when it holds the
    /// job's cameras (``resumeInterrupted(quietly:)``), and answers once it is journalled as
    /// running: for a run the daemon does not take up by itself (`daemon.resume_runs` off, a
    /// job suspended when its journal could not be written, a camera that was busy or came back
    /// only later, a resume that failed). Refused with what stands in the way.
    public func resume(_ id: Int64) async throws(JobError) -> JobSnapshot {
        guard let record = try journalled({ try journal.run(id) }) else { throw .unknownJob(id) }
        try await takeUp(record)
        return try await job(id)
    }

    /// Resumes `record` on its cameras: the one way an interrupted run is taken up again.
    private func takeUp(_ record: RunRecord) async throws(JobError) {
        let (entries, isRig) = try await camerasToResume(record)
        _ = try await launch(on: entries, isRig: isRig, plan: record.plan, .resumed(record))
    }

    /// The cameras to resume `record` on, when nothing but a busy camera stands in the way: the
    /// daemon takes jobs, the run is interrupted and shot by no other live process, and the
    /// daemon holds each of its cameras, by the names the journal keeps. What a job document
    /// says as `resumable`, and the refusal of a resume, come from here.
    private func camerasToResume(_ record: RunRecord) async throws(JobError) -> (entries: [CameraRegistry.Entry], isRig: Bool) {
        guard !closing else { throw .shuttingDown }
        if let job = active[record.id] { throw .notInterrupted(record.id, snapshot(job).state, reason: nil) }
        do throws(NotResumable) {
            try journal.checkInterrupted(record)
        } catch {
            switch error {
            case .noSuchRun(let id): throw .unknownJob(id)
            case .ended(let ended): throw .notInterrupted(ended.id, JobState(ended: ended.state), reason: ended.endReason)
            // This daemon's own claim, which a job of its that is not active left behind (a full
            // disk kept its release from being written): the engine takes it over.
            case .owned(_, let owner) where owner == .current: break
            case .owned(let id, let owner): throw .shotElsewhere(id, by: owner)
            case .journal(let why): throw .journal(why)
            }
        }
        var entries: [CameraRegistry.Entry] = []
        for name in record.cameras {
            do {
                entries.append(try await cameras.camera(named: name))
            } catch {
                throw .cameraNotHeld(job: record.id, camera: name, held: await cameras.all.map(\.name))
            }
        }
        return (entries, record.cameras.count > 1)
    }

    private func launch(on entries: [CameraRegistry.Entry], isRig: Bool, plan: RunPlan, _ start: Start) async throws(JobError) -> Int64 {
        for entry in entries {
            let key = entry.name.lowercased()
            if let busy = active.values.first(where: { $0.keys.contains(key) }) {
                throw .cameraBusy(camera: entry.name, job: busy.record.id)
            }
            if starting.contains(key) { throw .cameraBusy(camera: entry.name, job: nil) }
        }
        let keys = entries.map { $0.name.lowercased() }
        starting.formUnion(keys)
        defer { starting.subtract(keys) }

        let run = clock.run(plan, on: entries, isRig: isRig, journal: journal, wallClock: { [wallClock] in wallClock.nowUnixMs },
                            priority: runThreadPriority)
        let names = entries.map(\.name)
        let name = names.joined(separator: ",")
        if let timed = run as? Timelapse<ContinuousClock> {
            logger.info("run on \(name): run thread: \(timed.threadScheduling)")
        }
        let outcome = Task { () async -> Result<RunEnding, TimelapseError> in
            do throws(TimelapseError) {
                switch start {
                case .new(let delay): return .success(try await run.start(cameraName: name, startDelay: delay))
                case .at(let unixMs): return .success(try await run.start(cameraName: name, atUnixMs: unixMs))
                case .resumed(let record): return .success(try await run.resume(record))
                }
            } catch {
                return .failure(error)
            }
        }
        // The engine reports the run as soon as it is journalled, or ends the stream when it
        // refuses the plan before that.
        var begun: RunRecord?
        for await record in run.begun {
            begun = record
            break
        }
        guard let record = begun else {
            if case .failure(let error) = await outcome.value { throw .refused(error) }
            throw .refused(.invalidPlan("the run ended before it began"))
        }
        // The daemon began to stop while this run was being journalled: it is suspended
        // with the rest, and resumed with them.
        if closing { await run.suspend(reason: Self.shutdownReason) }
        register(record, cameras: names, run: run, outcome: outcome)
        return record.id
    }

    private func register(_ record: RunRecord, cameras: [String], run: any JobRun,
                          outcome: Task<Result<RunEnding, TimelapseError>, Never>) {
        let job = Job(record: record, cameras: cameras, run: run, movedAtStart: wallClock.movedMs)
        // A resumed run's earlier frames; the engine's own stream repeats none of them, but
        // may already have journalled a few of its own, which the relay then skips.
        do {
            for frame in try journal.frames(of: record.id) { _ = job.take(frame, keeping: framesKept) }
        } catch {
            logger.error("cannot read the frames of job \(record.id): \(error)")
        }
        active[record.id] = job
        metrics?.setJobsRunning(active.count)
        tell(.job(snapshot(job)))
        let id = record.id
        job.relay = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { for await notice in run.upcoming { await self.scheduled(notice, job: id) } }
                for await frame in run.records { self.received(frame, job: id) }
            }
            await self.ended(id, await outcome.value)
        }
    }

    /// The run's schedule moved on to its next slot (or has none to come): watchers are told
    /// the job with it, for their countdowns.
    private func scheduled(_ notice: NextSlotNotice, job id: Int64) {
        guard let job = active[id], take(notice, job) else { return }
        tell(.job(snapshot(job)))
    }

    /// Takes a newer notice of the run's next slot; whether `nextSlot` changed.
    private func take(_ notice: NextSlotNotice, _ job: Job) -> Bool {
        guard notice.sequence > job.nextSlotSequence else { return false }
        job.nextSlotSequence = notice.sequence
        let next = notice.slot.map { NextSlot(frame: $0.frame, dueUnixMs: job.record.t0UnixMs + $0.due.wholeMilliseconds) }
        guard next != job.nextSlot else { return false }
        job.nextSlot = next
        return true
    }

    /// Asks the run for its next slot after a control call, so that the answer to the call
    /// shows it rather than what the run's stream has relayed so far.
    private func askNextSlot(_ job: Job) async -> Bool {
        take(await job.run.nextSlotNotice, job)
    }

    private func received(_ frame: FrameRecord, job id: Int64) {
        guard let job = active[id], job.take(frame, keeping: framesKept) else { return }
        metrics?.record(frame: frame, camera: frame.camera ?? job.record.camera)
        for (token, follower) in job.followers {
            if case .dropped = follower.yield(.frame(frame)) {
                logger.notice("a follower of job \(id) fell \(followerBacklog) updates behind and was dropped")
                job.followers[token] = nil
                follower.finish()
            }
        }
        tell(.frame(frame, job: id))
    }

    private func ended(_ id: Int64, _ outcome: Result<RunEnding, TimelapseError>) async {
        guard let job = active.removeValue(forKey: id) else { return }
        metrics?.setJobsRunning(active.count)
        var ending: RunEnding
        switch outcome {
        case .success(let done): ending = done
        case .failure(let error): ending = RunEnding(run: job.record, state: .failed, reason: error.description)
        }
        ending.run.state = ending.state
        for record in ending.unrecorded {
            // Neither the journal nor a recovery file took it: the log is the last place it is kept.
            let counter = record.shotCounter.map(String.init) ?? "none"
            logger.critical("job \(id): unrecorded frame \(record.frame) part \(record.part) \(record.outcome.rawValue), scheduled \(record.scheduledMs) ms, shot counter \(counter)")
        }
        if ending.state == .running {
            suspendReasons[id] = ending.reason
        } else {
            ending.run.endReason = ending.reason
        }
        logger.info("job \(id) \(JobState(ended: ending.state).rawValue): \(ending.reason)")
        let summary = job.tally.summary
        for follower in job.followers.values {
            follower.yield(.ended(ending, summary))
            follower.finish()
        }
        job.followers = [:]
        var snapshot = JobSnapshot(id: id, camera: job.camera, cameras: job.record.cameras, kind: JobKind(job.record.plan), state: JobState(ended: ending.state),
                                   plan: job.record.plan, t0UnixMs: job.record.t0UnixMs, reason: ending.reason, summary: summary,
                                   lastFrame: job.recent.last).movingWallTimes(by: moved(since: job))
        guard ending.state == .running else {
            remember(snapshot)
            return tell(.job(snapshot))
        }
        snapshot = await resumability(of: ending.run, snapshot)
        // Resumed meanwhile: its watchers have been told the job running again.
        if active[id] == nil { tell(.job(snapshot)) }
    }

    // MARK: - Reading

    /// The jobs under way (waiting, running or paused), newest first: what the daemon holds in
    /// memory, without reading the journal.
    public var liveJobs: [JobSnapshot] {
        active.values.sorted { $0.record.id > $1.record.id }.map(snapshot)
    }

    /// The jobs under way, newest first; then every interrupted one, however old, for a client to
    /// resume (``resume(_:)``); then the most recent that ended, from the journal.
    public func jobs() async throws(JobError) -> [JobSnapshot] {
        var snapshots = liveJobs
        let journalled = try journalled { try journal.runs() }.filter { active[$0.id] == nil }
        for record in journalled where record.state == .running { snapshots.append(try await snapshot(of: record)) }
        for record in journalled.lazy.filter({ $0.state != .running }).prefix(Self.recentEnded) {
            snapshots.append(try await snapshot(of: record))
        }
        return snapshots
    }

    /// One job, running or from the journal.
    public func job(_ id: Int64) async throws(JobError) -> JobSnapshot {
        if let job = active[id] { return snapshot(job) }
        guard let record = try journalled({ try journal.run(id) }) else { throw .unknownJob(id) }
        return try await snapshot(of: record)
    }

    private func snapshot(_ job: Job) -> JobSnapshot {
        let state: JobState = job.paused ? .paused : waiting(job) ? .waiting : .running
        return JobSnapshot(id: job.record.id, camera: job.camera, cameras: job.record.cameras, kind: JobKind(job.record.plan), state: state,
                           plan: job.record.plan, t0UnixMs: job.record.t0UnixMs, reason: nil,
                           summary: job.tally.summary, lastFrame: job.recent.last, nextSlot: job.paused ? nil : job.nextSlot)
            .movingWallTimes(by: moved(since: job))
    }

    /// How far the wall clock has moved since `job`'s `t0` was read off it.
    private func moved(since job: Job) -> Int64 {
        wallClock.movedMs - job.movedAtStart
    }

    /// Whether slot 1 is still to come, by the wall clock as it reads now.
    private func waiting(_ job: Job) -> Bool {
        wallClock.nowUnixMs < job.record.t0UnixMs + moved(since: job)
    }

    /// The wall clock jumped (a correction taken or dropped): watchers are told each running
    /// job again, its times read on the clock as it is now. Its schedule is on the monotonic
    /// clock and does not move.
    private func wallClockMoved() {
        for job in active.values.sorted(by: { $0.record.id < $1.record.id }) { tell(.job(snapshot(job))) }
    }

    private func snapshot(of record: RunRecord) async throws(JobError) -> JobSnapshot {
        if record.state != .running, let known = endedSnapshots[record.id] { return known }
        let frames = try journalled { try journal.frames(of: record.id) }
        let snapshot = JobSnapshot(id: record.id, camera: record.camera, cameras: record.cameras, kind: JobKind(record.plan), state: JobState(ended: record.state),
                           plan: record.plan, t0UnixMs: record.t0UnixMs, reason: reason(ended: record),
                           summary: RunSummary(frames: frames), lastFrame: frames.last)
        guard record.state == .running else {
            remember(snapshot)
            return snapshot
        }
        return await resumability(of: record, snapshot)
    }

    /// `snapshot` of the interrupted run `record`, saying whether a client may resume it now
    /// and why not when not: what ``resume(_:)`` would meet, short of a camera that runs another
    /// job (which a job's start or end changes without telling this job's watchers).
    private func resumability(of record: RunRecord, _ snapshot: JobSnapshot) async -> JobSnapshot {
        var snapshot = snapshot
        do throws(JobError) {
            _ = try await camerasToResume(record)
            snapshot.resumable = true
        } catch {
            snapshot.resumeRefusal = error.description
        }
        return snapshot
    }

    /// Keeps an ended job's snapshot, forgetting the oldest beyond twice what a listing shows.
    private func remember(_ snapshot: JobSnapshot) {
        endedSnapshots[snapshot.id] = snapshot
        if endedSnapshots.count > 2 * Self.recentEnded, let oldest = endedSnapshots.keys.min() {
            endedSnapshots[oldest] = nil
        }
    }

    private func reason(ended record: RunRecord) -> String {
        record.endReason ?? suspendReasons[record.id]
            ?? (resumesByItself ? "interrupted; it resumes when the daemon holds camera \(record.camera)"
                : "interrupted; it resumes when a client asks (daemon.resume_runs is off)")
    }

    // MARK: - Commands

    /// Stops a job: now (a bulb or clip under way is ended at once and its frame recorded),
    /// answering once it has ended, or after the current slot, answering at once.
    public func stop(_ id: Int64, afterCurrentFrame: Bool, reason: String = "stopped on request") async throws(JobError) -> JobSnapshot {
        let job = try running(id)
        if afterCurrentFrame {
            await job.run.stopAfterCurrentFrame()
            if await askNextSlot(job) { tell(.job(snapshot(job))) }
            return try await self.job(id)
        }
        await job.run.stop(reason: reason)
        await job.relay?.value
        return try await self.job(id)
    }

    /// Shoots one extra picture now, outside the schedule; it is journalled as an extra part
    /// of the last slot.
    public func extraFrame(_ id: Int64) async throws(JobError) -> JobSnapshot {
        let job = try running(id)
        // Before the first slot there is no slot to add a part to: refused, not journalled
        // as a frame 0 at a time before the run's start.
        guard !waiting(job) else { throw .notRunning(id, .waiting) }
        await job.run.shootExtraFrame()
        return snapshot(job)
    }

    /// Holds a job's schedule until ``continueJob(_:)``.
    public func pause(_ id: Int64) async throws(JobError) -> JobSnapshot {
        let job = try running(id)
        await job.run.pauseSchedule()
        _ = await askNextSlot(job)
        job.paused = true
        tell(.job(snapshot(job)))
        return snapshot(job)
    }

    /// Continues a paused job; its slots keep their interval from where they stopped.
    public func continueJob(_ id: Int64) async throws(JobError) -> JobSnapshot {
        let job = try running(id)
        await job.run.continueSchedule()
        _ = await askNextSlot(job)
        job.paused = false
        tell(.job(snapshot(job)))
        return snapshot(job)
    }

    private func running(_ id: Int64) throws(JobError) -> Job {
        if let job = active[id] { return job }
        guard let record = try journalled({ try journal.run(id) }) else { throw .unknownJob(id) }
        throw .notRunning(id, JobState(ended: record.state))
    }

    // MARK: - Following

    /// Up to `limit` of job `id`'s frames in journal order, after `position` (the `next` of the
    /// page before; nil for the first page, which first checks that the job exists), read from
    /// the journal on the caller's task: a client that downloads a run of days holds up
    /// neither the manager nor any job, and costs one page of memory at a time.
    public nonisolated func framePage(of id: Int64, after position: Int64?, limit: Int) throws(JobError) -> FramePage {
        if position == nil, try journalled({ try journal.run(id) }) == nil { throw .unknownJob(id) }
        return try journalled { try journal.framePage(of: id, after: position, limit: limit) }
    }

    /// The job's frames from `fromFrame` on (every frame without it), those already journalled
    /// first, then each as it is recorded, then how the job ended; each record once, none
    /// missed. A follower of an ended job gets the replay and the end at once.
    public func follow(_ id: Int64, fromFrame: Int? = nil) throws(JobError) -> AsyncStream<JobUpdate> {
        try subscribe(id, fromFrame: fromFrame).updates
    }

    /// ``follow(_:fromFrame:)`` with the continuation, so that the caller can end the
    /// subscription itself (a client that left, a server that stops).
    func subscribe(_ id: Int64, fromFrame: Int?) throws(JobError)
        -> (updates: AsyncStream<JobUpdate>, control: AsyncStream<JobUpdate>.Continuation) {
        let from = fromFrame ?? 1
        if let job = active[id] {
            let replay = try frames(of: job, id: id, from: from)
            let (updates, follower) = AsyncStream.makeStream(
                of: JobUpdate.self, bufferingPolicy: .bufferingOldest(replay.count + followerBacklog))
            for frame in replay { follower.yield(.frame(frame)) }
            let token = UUID()
            job.followers[token] = follower
            follower.onTermination = { [weak self] _ in
                Task { await self?.unfollow(id, token) }
            }
            return (updates, follower)
        }
        guard let record = try journalled({ try journal.run(id) }) else { throw .unknownJob(id) }
        let frames = try journalled { try journal.frames(of: id) }
        let (updates, follower) = AsyncStream.makeStream(of: JobUpdate.self)
        for frame in frames where frame.frame >= from { follower.yield(.frame(frame)) }
        var run = record
        let reason = reason(ended: record)
        if record.state != .running { run.endReason = reason }
        follower.yield(.ended(RunEnding(run: run, state: record.state, reason: reason), RunSummary(frames: frames)))
        follower.finish()
        return (updates, follower)
    }

    /// A running job's frames from slot `from` on, in journal order: those it still keeps, and
    /// before them, when the replay reaches further back, the journal's.
    private func frames(of job: Job, id: Int64, from: Int) throws(JobError) -> [FrameRecord] {
        let kept = job.recent.filter { $0.frame >= from }
        guard job.trimmed, let oldest = job.recent.first, from <= oldest.frame else { return kept }
        let keptKeys = Set(job.recent.map(FrameKey.init))
        let oldestKey = FrameKey(oldest)
        // The journal may already hold frames the job has not been handed yet: only those
        // before its oldest kept frame are taken from there.
        let earlier = try journalled { try journal.frames(of: id) }
            .prefix { FrameKey($0) != oldestKey }
            .filter { $0.frame >= from && !keptKeys.contains(FrameKey($0)) }
        return earlier + kept
    }

    /// How many followers a running job has (0 for one that has ended): for status and
    /// metrics, and to see that a client that left no longer costs anything.
    public func followerCount(_ id: Int64) -> Int {
        active[id]?.followers.count ?? 0
    }

    /// How many frames of a running job the manager holds in memory (0 for one that has
    /// ended): to see that a run of days costs no more than a run of minutes.
    public func framesHeld(_ id: Int64) -> Int {
        active[id]?.recent.count ?? 0
    }

    private func unfollow(_ id: Int64, _ token: UUID) {
        active[id]?.followers[token] = nil
    }

    /// Every job now, with each running job's newest `recentFrames` frames.
    public func current(recentFrames: Int) async throws(JobError) -> JobsNow {
        let jobs = try await jobs()
        var frames: [Int64: [FrameRecord]] = [:]
        for (id, job) in active { frames[id] = Array(job.recent.suffix(max(recentFrames, 0))) }
        return JobsNow(jobs: jobs, recentFrames: frames)
    }

    /// Every change from now on: jobs started, paused, continued and ended, and frames as they
    /// are journalled, in order. A watcher that falls ``followerBacklog`` changes behind is let go
    /// (its stream ends), never allowed to hold up a run; `control` ends it sooner.
    public func watch() -> (changes: AsyncStream<JobChange>, control: AsyncStream<JobChange>.Continuation) {
        let (changes, watcher) = AsyncStream.makeStream(of: JobChange.self, bufferingPolicy: .bufferingOldest(followerBacklog))
        let token = UUID()
        watchers[token] = watcher
        watcher.onTermination = { [weak self] _ in
            Task { await self?.unwatch(token) }
        }
        return (changes, watcher)
    }

    /// How many watch every job: to see that a page that left no longer costs anything.
    public var watcherCount: Int { watchers.count }

    private func unwatch(_ token: UUID) {
        watchers[token] = nil
    }

    private func tell(_ change: JobChange) {
        for (token, watcher) in watchers {
            if case .dropped = watcher.yield(change) {
                logger.notice("a watcher of the jobs fell \(followerBacklog) changes behind and was let go")
                watchers[token] = nil
                watcher.finish()
            }
        }
    }

    // MARK: - Shutdown

    /// Stops every job now, for a daemon that is shutting down: a bulb or clip under way is
    /// ended at once and its frame recorded, but each run stays running in the journal, so the
    /// next start resumes it. Returns once all have ended; takes no new jobs after.
    public func suspendAll(reason: String = JobManager.shutdownReason) async {
        closing = true
        // A job whose launch was under way registers during the waits below; go round again.
        while !active.isEmpty {
            let jobs = Array(active.values)
            for job in jobs { await job.run.suspend(reason: reason) }
            for job in jobs { await job.relay?.value }
        }
    }

    /// Why jobs suspended at shutdown ended, unless told otherwise.
    public static let shutdownReason = "the daemon stopped"


    // MARK: - Helpers

    private nonisolated func journalled<T>(_ body: () throws -> T) throws(JobError) -> T {
        do { return try body() } catch { throw .journal(String(describing: error)) }
    }
}

private extension Clock where Duration == Swift.Duration {
    /// A run on this clock's own type: called on the manager's `any Clock`, it opens it, so that
    /// a run on the real clock is a `Timelapse<ContinuousClock>`, which waits for its deadlines
    /// on its own thread and can schedule a rig's shots on the modules' timers.
    func run(_ plan: RunPlan, on entries: [CameraRegistry.Entry], isRig: Bool, journal: any RunJournal,
             wallClock: @escaping @Sendable () -> Int64, priority: ExecutorThread.Priority) -> any JobRun {
        let hooks = plan.hookRunner
        if isRig, let rig = Rig(entries.map { RigCamera(name: $0.name, camera: $0.camera) }) {
            return Timelapse(plan: plan, rig: rig, journal: journal, clock: self, wallClock: wallClock, hooks: hooks,
                             threadPriority: priority)
        }
        return Timelapse(plan: plan, camera: entries[0].camera, journal: journal, clock: self, wallClock: wallClock, hooks: hooks,
                         threadPriority: priority)
    }
}
