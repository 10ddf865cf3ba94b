public import CameraKit
import Foundation
import Synchronization
public import UnleashedKit

/// Why a run could not start or had to end.
public enum TimelapseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The plan cannot work; nothing was shot.
    case invalidPlan(String)
    /// The interval is shorter than a slot's exposure plus the gap.
    case intervalTooShort(minimumMs: Int64, reason: String)
    /// The hook refused the run at init.
    case hookRefused(status: Int32)
    /// Stopped (Ctrl-C, SIGTERM) while the `init` hook ran, before the run began.
    case stoppedBeforeStart(String)
    /// The journal could not begin or resume the run; nothing was shot.
    case journal(String)
    /// Another process that is still alive runs this run: it is not resumed a second time.
    case owned(String)
    /// The camera failed before the first slot (reading its settings).
    case camera(CameraError)
    /// One camera of a rig failed before the first slot.
    case rigCamera(String, CameraError)

    public var description: String {
        switch self {
        case .invalidPlan(let why): why
        case .intervalTooShort(let minimum, let reason):
            "the interval is too short: each slot needs at least \(Duration.milliseconds(minimum).compactText) (\(reason))"
        case .hookRefused(let status): "the hook refused the run at init (exit status \(status))"
        case .journal(let why): "the run journal failed: \(why)"
        case .owned(let why): why
        case .stoppedBeforeStart(let reason): "the run was \(reason) before it began"
        case .camera(let error): error.description
        case .rigCamera(let name, let error): "camera \(name): \(error)"
        }
    }
}

/// How a run ended.
public struct RunEnding: Hashable, Sendable {
    public var run: RunRecord
    /// `.running` for a run that was suspended or interrupted: it ended here but stays resumable.
    public var state: RunState
    public var reason: String
    /// Set when the run ended because its journal could not be written: the run stays
    /// resumable, and the records the journal did not take are in ``recoveryFile``.
    public var interrupted = false
    /// The file holding the records the journal did not take (``JournalRecovery``).
    public var recoveryFile: String?
    /// Records that neither the journal nor any recovery file took: the caller must show them
    /// (standard error), as they are nowhere else.
    public var unrecorded: [FrameRecord] = []

    public init(run: RunRecord, state: RunState, reason: String) {
        self.run = run
        self.state = state
        self.reason = reason
    }

    /// `finished`, `failed`, `interrupted` (the journal failed), or `running` (suspended).
    public var stateName: String { interrupted ? "interrupted" : state.rawValue }
}

/// A time-lapse run: the driver of a ``SlotScheduler``. It reads the injected monotonic clock,
/// sleeps to the absolute deadlines `t0 + (n - 1) * interval` the schedule asks for (never a
/// sleep after a shot, so that no error accumulates), fires the cameras and feeds their outcomes
/// back. A run of one camera is a rig of one. Every slot is journalled (durably) in order on a
/// thread apart, so that a slow disk sync does not hold up the next slot; the run ends only once
/// every record is written.
public actor Timelapse<C: Clock> where C.Duration == Duration {
    /// Every frame record as it is journalled, for live displays. One consumer.
    public nonisolated let records: AsyncStream<FrameRecord>
    /// The run once it is journalled (begun or resumed), then the end of the stream; a run
    /// refused before it was journalled ends the stream with nothing. Lets a caller learn the
    /// run's id while the run goes on, without polling ``current``. One consumer.
    public nonisolated let begun: AsyncStream<RunRecord>
    /// Each wait of the run as it begins: until this instant of the run's clock, or nil until a
    /// control call (paused). Only the newest is kept: for a countdown to the next slot, and for
    /// a test that moves a manual clock only while the run waits, so that it runs hours of
    /// schedule in moments without a real sleep. Ends with the run.
    public nonisolated let waits: AsyncStream<C.Instant?>
    /// The slot the schedule will shoot next, each time it changes: as a slot's exposure starts,
    /// after a pause, a continue or a stop (nil: none to come), numbered. Only the newest is
    /// kept: for a countdown that shows the schedule's own next slot; ``nextSlotNotice`` is the
    /// same, asked. Ends with the run.
    public nonisolated let upcoming: AsyncStream<NextSlotNotice>

    let plan: RunPlan
    /// The cameras every slot fires, together (a ``Volley``).
    let cameras: [RigCamera]
    private let journal: any RunJournal
    /// Frame records on their way to `journal`, written off the run's thread.
    private let journalWrites: JournalWrites
    private let clock: C
    private let wallClock: @Sendable () -> Int64
    private let hooks: HookRunner?
    private let recordSink: AsyncStream<FrameRecord>.Continuation
    private let begunSink: AsyncStream<RunRecord>.Continuation
    private let waitSink: AsyncStream<C.Instant?>.Continuation
    private let upcomingSink: AsyncStream<NextSlotNotice>.Continuation
    /// The last change told to ``upcoming``, so that each is told once.
    public private(set) var nextSlotNotice = NextSlotNotice(sequence: 0, slot: nil)

    private var run: RunRecord?
    /// The monotonic instant of `t0`.
    private var anchor: C.Instant?
    /// The slot schedule: every decision of when to shoot, skip, wait or end.
    private var schedule: SlotScheduler
    /// Where an interrupted run left its schedule, for a resumed run's start.
    private var resumption: SlotScheduler.Resumption?
    /// Set by ``suspend(reason:)``: the run ends without being marked ended in the journal.
    private var suspended = false
    /// The wait under way, for a control call to end early.
    private var wake: Wake?
    /// The exposure under way that a stop ends early (a bulb, a clip).
    private var stoppableWork: Volley<SlotWork>?
    /// The prepared slot's parked commands and the cameras that were up for it.
    private var parked: Volley<SlotWork>?
    /// Requests the cameras' links sent again while the slot being fired was taken.
    private var slotResent = 0
    private var ready: [RigCamera] = []
    /// A ramped run's ramps, one per camera (by name): each follows its own camera's light.
    var ramps: [String: CameraRamp] = [:]
    private let thread: ExecutorThread

    /// The run executes on a thread of its own, so that a busy process (a daemon serving its
    /// API) does not make slots late: see ``ExecutorThread``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// How far ahead of the start command slot 1 is placed.
    static var preparationTime: Duration { .milliseconds(20) }

    /// The priority a run's thread asks for unless told otherwise: nice -10 where the process may
    /// have it (root, or the system unit's `LimitNICE=-10`).
    public static var defaultThreadPriority: ExecutorThread.Priority { ExecutorThread.Priority(realTime: nil, niceness: -10) }

    /// What the daemon's and the command line's runs ask for: `SCHED_FIFO` 10 where the process
    /// may have it (root, or the system unit's `LimitRTPRIO=10`), else nice -10. At a deadline on
    /// a busy machine the run's thread then gets a CPU first, and so does the camera work it does
    /// for its slots. Not the default: a library user (a test, a benchmark) that runs many runs at
    /// once, or cameras whose work is heavy, should not have them all ahead of every other thread.
    public static var realTimeThreadPriority: ExecutorThread.Priority { ExecutorThread.Priority(realTime: 10, niceness: -10) }

    /// How the run's thread is scheduled: what it asked for and was granted.
    public nonisolated var threadScheduling: ExecutorThread.Scheduling { thread.scheduling }

    /// How far ahead of its deadline a slot is prepared: the camera is asked then whether it is
    /// ready, so that at the deadline the command goes out without a round trip first.
    static var slotPreparation: Duration { SlotScheduler.defaultPreparation }

    /// A new run.
    ///
    /// - Parameters:
    ///   - wallClock: Unix milliseconds now; only used to label `t0` for resuming and for
    ///     `until` stops, never to time slots.
    ///   - threadPriority: What the run's thread asks the kernel for
    ///     (``defaultThreadPriority``; ``ExecutorThread/Priority/normal`` for nothing).
    public init(plan: RunPlan, camera: any Camera, journal: any RunJournal, clock: C,
                wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner? = nil,
                threadPriority: ExecutorThread.Priority = Timelapse.defaultThreadPriority) {
        self.init(plan: plan, cameras: [RigCamera(name: camera.identity.name, camera: camera)],
                  journal: journal, clock: clock, wallClock: wallClock, hooks: hooks, threadPriority: threadPriority)
    }

    /// A run of a rig: every slot fires all of its cameras together; each camera gets a record
    /// per slot (a camera that is down is recorded as skipped while the others fire), and every
    /// record carries the slot's command and completion spread.
    public init(plan: RunPlan, rig: Rig, journal: any RunJournal, clock: C,
                wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner? = nil,
                threadPriority: ExecutorThread.Priority = Timelapse.defaultThreadPriority) {
        self.init(plan: plan, cameras: rig.members, journal: journal, clock: clock, wallClock: wallClock, hooks: hooks,
                  threadPriority: threadPriority)
    }

    private init(plan: RunPlan, cameras: [RigCamera], journal: any RunJournal, clock: C,
                 wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner?, threadPriority: ExecutorThread.Priority) {
        thread = ExecutorThread(name: "unleashed run", priority: threadPriority)
        self.plan = plan
        self.cameras = cameras
        self.journal = journal
        let (records, recordSink) = AsyncStream.makeStream(of: FrameRecord.self, bufferingPolicy: .bufferingNewest(4096))
        self.records = records
        self.recordSink = recordSink
        // A record reaches displays once it is on disk (or waits for a journal that failed).
        journalWrites = JournalWrites(journal: journal) { recordSink.yield($0) }
        self.clock = clock
        self.wallClock = wallClock
        self.hooks = hooks
        schedule = SlotScheduler(plan: plan, cameras: cameras.map(\.name), preparation: Self.slotPreparation)
        (begun, begunSink) = AsyncStream.makeStream()
        (waits, waitSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (upcoming, upcomingSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The run as journalled, once it has begun (or been resumed).
    public var current: RunRecord? { run }

    /// Whether records, errors and ramps name the camera they are about: in a run of several.
    /// A run of one names its camera in the journal's run record only, as it always has.
    var namesCameras: Bool { cameras.count > 1 }

    // MARK: - Control (from signals, the CLI, the daemon)

    /// Ends the run: at once between slots, after the current shot, and a bulb exposure at once
    /// (the shutter is closed and the frame recorded).
    public func stop(reason: String) {
        feed(.stopAsked(reason: reason))
    }

    /// Ends the run like ``stop(reason:)`` (a bulb or clip under way is ended at once and its
    /// frame recorded) but leaves it `.running` in the journal, so that ``resume(_:)`` continues
    /// it later on its original schedule: for a daemon that shuts down and means to carry on
    /// when it starts again. The stop hook still runs.
    public func suspend(reason: String) {
        suspended = true
        stop(reason: reason)
    }

    /// Ends the run after the current slot (SIGUSR2).
    public func stopAfterCurrentFrame() {
        feed(.stopAfterFrameAsked)
    }

    /// Shoots one extra picture now, outside the schedule (SIGUSR1).
    public func shootExtraFrame() {
        feed(.extraFrameAsked)
    }

    /// Holds the schedule; ``continueSchedule()`` re-anchors it so that the slots keep their
    /// interval from where they stopped.
    public func pauseSchedule() {
        feed(.pauseAsked(now: elapsed()))
    }

    /// Continues a paused run, shifting the schedule by the time paused.
    public func continueSchedule() {
        feed(.continueAsked(now: elapsed()))
    }

    /// Hands the schedule a control call or news that came while the run does something else,
    /// and does at once what it asks (wake the run, end an exposure, interrupt a hook).
    private func feed(_ input: SlotScheduler.Input) {
        for action in handle(input) {
            switch action {
            case .endExposure: stoppableWork?.cancel()
            case .interruptHook: hooks?.interrupt()
            case .wake: wakeUp()
            default: preconditionFailure("a control call asked for \(action)")
            }
        }
    }

    private func tellNextSlot(_ slot: UpcomingSlot?) {
        nextSlotNotice = NextSlotNotice(sequence: nextSlotNotice.sequence + 1, slot: slot)
        upcomingSink.yield(nextSlotNotice)
    }

    /// Hands `input` to the schedule, and tells ``upcoming`` when its next slot changed.
    private func handle(_ input: SlotScheduler.Input) -> [SlotScheduler.Action] {
        let actions = schedule.handle(input)
        let next = schedule.upcoming
        if nextSlotNotice.sequence == 0 || next != nextSlotNotice.slot { tellNextSlot(next) }
        return actions
    }

    // MARK: - Running

    /// Checks the plan against the camera, journals the run, waits until `startDelay` after the
    /// call (not after the checks), and runs it to its end. `cameraName` is what the journal
    /// calls a run's one camera; the cameras of a rig are journalled by their own names, as a list.
    public func start(cameraName: String, startDelay: Duration = .zero) async throws(TimelapseError) -> RunEnding {
        // The delay counts from now, not from after the checks.
        let asked = clock.now
        return try await start(cameraName: cameraName) { [clock, wallClock] in
            let lead = max(startDelay - asked.duration(to: clock.now), Self.preparationTime)
            return (lead, wallClock() + lead.wholeMilliseconds)
        }
    }

    /// Starts the run at the wall-clock instant `unixMs`, as ``start(cameraName:startDelay:)``
    /// does after a delay: a fleet's hosts, each told the same instant, journal it as their `t0`
    /// to the millisecond, however long each took to hear of it or its camera to answer the
    /// checks. An instant that has passed, or comes sooner than the preparation time, starts the
    /// run after that time instead.
    public func start(cameraName: String, atUnixMs unixMs: Int64) async throws(TimelapseError) -> RunEnding {
        try await start(cameraName: cameraName) { [wallClock] in
            let now = wallClock()
            let lead = max(Duration.milliseconds(unixMs - now), Self.preparationTime)
            return (lead, now + lead.wholeMilliseconds)
        }
    }

    /// `lead` gives, once the checks have passed, how long until slot 1 and the Unix
    /// milliseconds of that instant.
    private func start(cameraName: String, lead: () -> (Duration, Int64)) async throws(TimelapseError) -> RunEnding {
        defer { finishStreams() }
        try await validate()
        if let hooks {
            let status = await hooks.run(.initialize, frame: nil, environment: [:])
            if let stopReason = schedule.stopReason { throw .stoppedBeforeStart(stopReason) }
            if let status, status != 0 { throw .hookRefused(status: status) }
        }
        // Slot 1 lies a little ahead, so that journalling the run (a disk sync) does not make
        // it late; a stop while waiting for it ends the run with no frames.
        let (wait, t0Wall) = lead()
        let t0 = clock.now.advanced(by: wait)
        do {
            run = try journal.begin(plan: plan, t0UnixMs: t0Wall, cameras: namesCameras ? cameras.map(\.name) : [cameraName])
        } catch {
            throw .journal(String(describing: error))
        }
        anchor = t0
        if let run { begunSink.yield(run) }
        return try await runSlots()
    }

    /// Continues `record` after an interruption, on its original schedule: `t0` is recovered
    /// from the wall clock, slots that passed while nothing ran are journalled as skipped, and
    /// frame numbers carry on from the last one recorded.
    public func resume(_ record: RunRecord) async throws(TimelapseError) -> RunEnding {
        defer { finishStreams() }
        guard record.state == .running else {
            throw .invalidPlan("run \(record.id) has \(record.state == .finished ? "finished" : "failed"); only an interrupted run can be resumed")
        }
        do {
            try journal.claim(run: record.id)
        } catch let error as JournalError {
            if case .runOwned = error { throw .owned(error.description) }
            throw .journal(error.description)
        } catch {
            throw .journal(String(describing: error))
        }
        let recorded: [FrameRecord]
        do {
            try importRecovered(run: record.id)
            recorded = try journal.frames(of: record.id)
        } catch {
            journal.release(run: record.id)
            throw .journal(String(describing: error))
        }
        let last = recorded.max { ($0.frame, $0.part) < ($1.frame, $1.part) }
        run = record
        begunSink.yield(record)
        if let last {
            // The crash may have come between two cameras' records of the last slot: the others
            // are recorded as not known, so that every slot has a record per camera.
            let names = Set(recorded.filter { $0.frame == last.frame }.map(\.camera))
            try appendSkipped(SkippedSlot(frame: last.frame, due: .milliseconds(last.scheduledMs),
                                          reason: "the run stopped before this camera's outcome was recorded",
                                          cameras: cameras.filter { !names.contains(label(of: $0)) }.map(\.name)))
        }
        let sinceT0 = Duration.milliseconds(wallClock() - record.t0UnixMs)
        anchor = clock.now.advanced(by: .zero - sinceT0)
        // The slot after the last one is due its recorded interval later, as in the run before.
        resumption = SlotScheduler.Resumption(lastFrame: last?.frame, lastDue: .milliseconds(last?.scheduledMs ?? 0),
                                              rampInterval: resumeRamps(from: recorded, last: last))
        if let hooks { _ = await hooks.run(.initialize, frame: nil, environment: [:]) }
        // A clip cut off by the crash may still be recording, and would make every clip after
        // it fail to start: stop it first ("not recording" is fine too).
        if case .video = plan.exposure {
            for member in cameras { _ = try? await member.camera.stopVideo() }
        }
        return try await runSlots()
    }

    private func finishStreams() {
        recordSink.finish()
        begunSink.finish()
        waitSink.finish()
        if nextSlotNotice.slot != nil { tellNextSlot(nil) }
        upcomingSink.finish()
    }

    /// Adds to the journal the records an earlier run of `run` left in a recovery file when its
    /// journal could not take them, then removes the file.
    private func importRecovered(run: Int64) throws {
        let files = journal.recoveryFiles(of: run).filter { FileManager.default.fileExists(atPath: $0) }
        guard !files.isEmpty else { return }
        for record in JournalRecovery.records(in: files) { try journal.appendUnlessRecorded(record, to: run) }
        JournalRecovery.remove(files)
    }

    private func runSlots() async throws(TimelapseError) -> RunEnding {
        guard let run else { preconditionFailure("no run") }
        var startHook: SlotScheduler.StartHook?
        if let hooks {
            let started = elapsed()
            _ = await hooks.run(.start, frame: nil, environment: ["ARGUMENT": "\(run.id)"])
            startHook = SlotScheduler.StartHook(program: hooks.program, ran: elapsed() - started)
        }
        let linkWatch = watchLinks()
        defer { linkWatch.cancel() }
        var downloads: [(DownloadHookRelay, any Camera)] = []
        if let hooks {
            for member in cameras { downloads.append((DownloadHookRelay(hooks: hooks, events: await member.camera.events()), member.camera)) }
        }
        var failure: TimelapseError?
        do throws(TimelapseError) {
            // The run's own calls (a camera's readiness, its answer) run on the run's thread
            // too, at its priority, rather than wait for a pool thread on a busy machine.
            try await withTaskExecutorPreference(thread) { () async throws(TimelapseError) in
                try await drive(.started(now: elapsed(), t0UnixMs: run.t0UnixMs, resuming: resumption, startHookRan: startHook))
            }
        } catch {
            failure = error
        }
        parked?.discard()
        let (unwritten, writeFailure) = await journalWrites.drain()
        // A suspended run stays `.running` in the journal: it is to be resumed, not ended.
        var state: RunState = failure != nil ? .failed : suspended ? .running : .finished
        var reason = failure?.description ?? schedule.stopReason ?? "all slots done"
        var ending = RunEnding(run: run, state: state, reason: reason)
        if !unwritten.isEmpty {
            // Nothing taken is lost: what the journal did not take goes to a recovery file, and
            // the run stays resumable (a resume adds the file's records to the journal).
            let file = JournalRecovery.write(unwritten, to: journal.recoveryFiles(of: run.id))
            state = .running
            ending.interrupted = true
            ending.recoveryFile = file
            if file == nil { ending.unrecorded = unwritten }
            let records = unwritten.count == 1 ? "1 frame record" : "\(unwritten.count) frame records"
            reason = "interrupted: the run journal could not be written (\(writeFailure ?? "no reason given")); "
                + (file.map { "the \(records) it did not take are in \($0)" } ?? "the \(records) it did not take could not be saved anywhere")
                + "; once it can be written, resuming run \(run.id) adds them and carries on"
        } else if state != .running {
            do {
                try journal.finish(run: run.id, state: state, reason: reason)
            } catch {
                state = .running
                ending.interrupted = true
                reason = "interrupted: every frame is recorded, but the run's end could not be (\(error)); resuming run \(run.id) ends it"
            }
        }
        ending.state = state
        ending.reason = reason
        journal.release(run: run.id)
        for (relay, camera) in downloads { await relay.finish(after: await camera.settle()) }
        if let hooks { _ = await hooks.run(.stop, frame: nil, environment: ["ARGUMENT": reason]) }
        if let failure { throw failure }
        return ending
    }

    /// Feeds `first` to the schedule and carries out what it asks, each wait, preparation and
    /// firing answered with the next input, until it ends the run.
    private func drive(_ first: SlotScheduler.Input) async throws(TimelapseError) {
        var input = first
        while true {
            var next: SlotScheduler.Input?
            for action in handle(input) {
                switch action {
                case .wait(let until):
                    await wait(until: until)
                    next = .woke(now: elapsed())
                case .prepare(let slot):
                    next = await prepare(slot)
                case .fire(let slot):
                    slotResent = 0
                    let sent = try await expose(slot)
                    next = .slotShot(firstSent: sent, rampInterval: rampInterval(), resent: slotResent, now: elapsed())
                case .discard:
                    parked?.discard()
                    parked = nil
                case .fireExtra(let frame, let part):
                    try await shootExtra(frame: frame, part: part)
                    next = .extraShot(now: elapsed())
                case .skip(let slots):
                    for slot in slots { try appendSkipped(slot) }
                case .endExposure: stoppableWork?.cancel()
                case .interruptHook: hooks?.interrupt()
                case .wake: wakeUp()
                case .end: return
                }
            }
            guard let next else { preconditionFailure("the schedule left the run nothing to do in \(schedule.phase)") }
            input = next
        }
    }

    /// Ahead of the deadline: which cameras are up, their ramps' readings, and their commands
    /// parked, ready to go. Cameras that press on their own clocks are told the deadline now;
    /// the others' commands are released at it.
    private func prepare(_ slot: ScheduledSlot) async -> SlotScheduler.Input {
        let (ready, down) = await Rig.prepareShot(cameras)
        await prepareRamps(due: slot.due, cameras: ready)
        let firing = await firingInstant(due: slot.due, cameras: ready)
        parked?.discard()
        parked = await prepareSlotVolley(frame: slot.frame, cameras: ready, firing: firing)
        self.ready = ready
        return .prepared(ready: ready.map(\.name), down: down.map(\.name), firesOnCameraClocks: firing != nil, now: elapsed())
    }

    /// The parked commands of a slot's single exposure (a picture, a bulb exposure, a clip);
    /// nil for a bracket, whose pictures follow one another, or when no camera is up.
    private func prepareSlotVolley(frame: Int, cameras: [RigCamera], firing: ContinuousClock.Instant?) async -> Volley<SlotWork>? {
        guard !cameras.isEmpty, let command = slotCommand(firing: firing) else { return nil }
        return await volley(frame: frame, cameras: cameras, command.run)
    }

    /// The slot's deadline on the host's clock when the shot can be scheduled on the cameras'
    /// own clocks: pictures (not bulb or video) of several cameras, a run on the real clock, and
    /// every camera able to (``Camera/schedulesShots``). Nil otherwise.
    private func firingInstant(due: Duration, cameras: [RigCamera]) async -> ContinuousClock.Instant? {
        guard namesCameras, case .camera = plan.exposure, C.self == ContinuousClock.self,
              await Rig.allScheduleShots(cameras) else { return nil }
        return ContinuousClock.now + (due - elapsed())
    }

    /// What a slot of a single exposure sends to each camera, with the exposure as recorded
    /// and whether a stop ends it early.
    private func slotCommand(firing: ContinuousClock.Instant? = nil)
        -> (exposure: String?, stoppable: Bool, run: @Sendable (any Camera) async throws(CameraError) -> SlotWork)? {
        switch plan.exposure {
        case .camera:
            guard let firing else { return (nil, false, { camera throws(CameraError) in SlotWork(try await camera.shoot()) }) }
            return (nil, false, { camera throws(CameraError) in SlotWork(try await camera.shoot(at: firing)) })
        case .bulb(let milliseconds):
            return ("bulb \(milliseconds)ms", true, { camera throws(CameraError) in
                try await Self.bulbWork(camera, milliseconds: milliseconds, exposure: "bulb \(milliseconds)ms")
            })
        case .video(let milliseconds):
            return ("video \(milliseconds)ms", true, { [clock] camera throws(CameraError) in
                try await VideoClip(length: .milliseconds(milliseconds), camera: camera, clock: clock).record()
            })
        case .bracket:
            return nil
        case .ramp:
            return rampCommand()
        }
    }

    /// A bulb exposure as a slot's work: its exposure noted when a stop ended it early.
    static func bulbWork(_ camera: any Camera, milliseconds: Int64, exposure: String) async throws(CameraError) -> SlotWork {
        let bulb = try await camera.bulb(.milliseconds(milliseconds))
        guard bulb.ending == .stoppedEarly else { return SlotWork(bulb.shot) }
        return SlotWork(bulb.shot, exposure: "\(exposure), ended early" + (bulb.exposed.map { " after \($0.wholeMilliseconds)ms" } ?? ""))
    }

    /// Parks `command` for every camera of `cameras`, with the frame number set for the
    /// backend's picture names and the run's clock timing each command.
    private func volley(frame: Int, cameras: [RigCamera],
                        _ command: @escaping @Sendable (any Camera) async throws(CameraError) -> SlotWork) async -> Volley<SlotWork> {
        await Volley.prepare(cameras, stamp: stamp(), executor: thread) { camera throws(CameraError) in
            let result = await CaptureContext.$frame.withValue(frame) { () async -> Result<SlotWork, CameraError> in
                do throws(CameraError) {
                    return .success(try await command(camera))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
    }

    /// Time since `t0` on the run's clock, readable from any task.
    private func stamp() -> @Sendable () -> Duration {
        guard let anchor else { return { .zero } }
        return { [clock] in anchor.duration(to: clock.now) }
    }

    /// Follows every camera's link, so that slots lost to an outage say so. On the run's thread,
    /// as the run's camera calls are: news of an outage reaches the run before the slots it
    /// costs are given up, however busy the shared pool is.
    private func watchLinks() -> Task<Void, Never> {
        let cameras = cameras
        return Task(executorPreference: thread) { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                for member in cameras {
                    group.addTask {
                        for await event in await member.camera.events() {
                            guard case .connection(let state) = event, state != .ready else { continue }
                            await self?.feed(.linkLost(camera: member.name))
                        }
                    }
                }
            }
        }
    }

    /// A skipped record of the slot for each of its cameras.
    private func appendSkipped(_ slot: SkippedSlot) throws(TimelapseError) {
        for name in slot.cameras {
            try append(FrameRecord(frame: slot.frame, scheduledMs: slot.due.wholeMilliseconds, outcome: .skipped, error: slot.reason,
                                   camera: namesCameras ? name : nil))
        }
    }

    /// The name a record gives `member`: none in a run of one camera.
    func label(of member: RigCamera) -> String? {
        namesCameras ? member.name : nil
    }

    /// Shoots the slot on the cameras that were up for it; returns when its first command went
    /// out (after `t0`).
    private func expose(_ slot: ScheduledSlot) async throws(TimelapseError) -> Duration {
        let volley = parked
        parked = nil
        guard let command = slotCommand() else {
            guard case .bracket(let count, let stepThirds) = slot.exposure, let member = ready.first else { return elapsed() }
            return try await bracket(frame: slot.frame, due: slot.due, count: count, stepThirds: stepThirds, member: member)
        }
        let released: Volley<SlotWork>
        if let volley { released = volley } else { released = await self.volley(frame: slot.frame, cameras: ready, command.run) }
        return try await record(frame: slot.frame, part: 1, due: slot.due, exposure: command.exposure, stoppable: command.stoppable,
                                cameras: ready, volley: released)
    }

    /// A bracket: the shutter speed stepped along the camera's own ladder around the current
    /// value, then put back.
    private func bracket(frame: Int, due: Duration, count: Int, stepThirds: Int, member: RigCamera) async throws(TimelapseError) -> Duration {
        let start = elapsed()
        let camera = member.camera
        let speeds: [SettingValue]
        let original: SettingValue
        do {
            (speeds, original) = try await bracketSpeeds(count: count, stepThirds: stepThirds, camera: camera)
        } catch {
            try append(FrameRecord(frame: frame, scheduledMs: due.wholeMilliseconds, outcome: .failed, error: error.description))
            return start
        }
        var firstSent: Duration?
        for (index, speed) in speeds.enumerated() {
            let parked = await volley(frame: frame, cameras: [member]) { camera throws(CameraError) in
                if speed != original { _ = try await camera.set(speed) }
                return SlotWork(try await camera.shoot())
            }
            let sent = try await record(frame: frame, part: index + 1, due: due, exposure: speed.text, cameras: [member], volley: parked)
            firstSent = firstSent ?? sent
        }
        _ = try? await camera.set(original)
        return firstSent ?? start
    }

    /// The shutter speeds of a bracket, slowest last, and the speed to return to.
    private func bracketSpeeds(count: Int, stepThirds: Int, camera: any Camera) async throws(CameraError) -> ([SettingValue], SettingValue) {
        let settings = try await camera.settings()
        guard let shutter = settings.first(where: { $0.setting == .shutterSpeed }) else { throw .settingNotOffered(.shutterSpeed) }
        let ladder = shutter.choices.filter { if case .shutterSpeed(let speed) = $0 { !speed.isBulb } else { false } }
        guard let center = ladder.firstIndex(of: shutter.value) else {
            throw .invalidArgument("a bracket needs a shutter speed, not \(shutter.value.text)")
        }
        let half = (count - 1) / 2
        let indices = (0..<count).map { center + ($0 - half) * stepThirds }
        guard let first = indices.first, let last = indices.last, first >= 0, last < ladder.count else {
            throw .invalidArgument("a bracket of \(count) at \(stepThirds)/3 stop around \(shutter.value.text) goes beyond the camera's shutter speeds")
        }
        return (indices.map { ladder[$0] }, shutter.value)
    }

    /// Releases a slot's parked commands, times them, and journals every camera's outcome
    /// before anything else happens; returns when the first command went out. A `stoppable`
    /// command (a bulb exposure, a clip) is cancelled by ``stop(reason:)``, which ends it early
    /// rather than leave a shutter open or a camera recording.
    @discardableResult
    private func record(frame: Int, part: Int, due: Duration, exposure: String?, stoppable: Bool = false,
                        cameras: [RigCamera], volley: Volley<SlotWork>) async throws(TimelapseError) -> Duration {
        let released = elapsed()
        volley.release()
        if stoppable { stoppableWork = volley }
        if stoppable, schedule.stopReason != nil { volley.cancel() }
        let outcomes = await volley.outcomes()
        stoppableWork = nil
        let finished = elapsed()
        let spread = namesCameras ? VolleySpread(outcomes) : nil
        for (member, outcome) in zip(cameras, outcomes) {
            let sent = outcome.sentStamp ?? released
            // Only a slot's first command has a deadline; the rest of a bracket follows it.
            var entry = FrameRecord(frame: frame, part: part, scheduledMs: due.wholeMilliseconds, sentMs: sent.wholeMilliseconds,
                                    latenessMicros: part == 1 ? (sent - due).wholeMicroseconds : nil, outcome: .taken,
                                    exposure: exposure, camera: label(of: member),
                                    commandSpreadMicros: spread?.commands?.wholeMicroseconds,
                                    completionSpreadMicros: spread?.completions?.wholeMicroseconds,
                                    ramp: part == 1 ? rampRecord(of: member.name) : nil)
            if part == 1, let text = rampExposureText(of: member.name) { entry.exposure = text }
            switch outcome.result {
            case .success(let done)?:
                slotResent += done.resent
                if part == 1, done.failure == nil { rampApplied(by: member.name) }
                entry.completedMs = (outcome.completedStamp ?? finished).wholeMilliseconds
                entry.shotCounter = done.shotCounter
                entry.exposure = done.exposure ?? entry.exposure
                entry.error = done.failure ?? done.note
                if done.failure != nil { entry.outcome = .failed }
            case .failure(let error)?:
                entry.outcome = .failed
                entry.error = error.description
                if error.isLinkFailure { feed(.linkLost(camera: member.name)) }
            case nil:
                entry.outcome = .failed
                entry.error = "the command was not sent"
            }
            entry.meteredEV = await member.camera.lastMeteredEV?.text
            try append(entry)
            if let hooks, let run {
                hooks.frame(entry, t0UnixMs: run.t0UnixMs)
            }
        }
        return outcomes.compactMap(\.sentStamp).min() ?? released
    }

    /// One picture outside the schedule, on the cameras that are up, recorded as `part` of `frame`.
    private func shootExtra(frame: Int, part: Int) async throws(TimelapseError) {
        let (ready, _) = await Rig.prepareShot(cameras)
        guard !ready.isEmpty else { return }
        let parked = await volley(frame: frame, cameras: ready) { camera throws(CameraError) in
            SlotWork(try await camera.shoot())
        }
        try await record(frame: frame, part: part, due: elapsed(), exposure: "extra", cameras: ready, volley: parked)
    }

    private func append(_ entry: FrameRecord) throws(TimelapseError) {
        guard let run else { return }
        if !journalWrites.append(entry, to: run.id) {
            // The journal has not taken a record for too long: end the run before memory runs out.
            feed(.journalStalled(reason: "the run journal has not been writable for \(JournalWrites.backlogLimit) records"))
        }
    }

    // MARK: - Waiting

    /// Time since `t0`.
    private func elapsed() -> Duration {
        guard let anchor else { return .zero }
        return anchor.duration(to: clock.now)
    }

    /// Waits as the schedule asks: until `offset` after `t0` (not at all once it has passed),
    /// or with no offset until a control call; a control call ends either early.
    private func wait(until offset: Duration?) async {
        guard let offset else {
            waitSink.yield(nil)
            return await sleepUntilWoken()
        }
        guard let anchor, elapsed() < offset else { return }
        waitSink.yield(anchor.advanced(by: offset))
        await sleep(until: anchor.advanced(by: offset))
    }

    /// Sleeps until `deadline` or until a control call wakes the run.
    private func sleep(until deadline: C.Instant) async {
        let wake = Wake()
        self.wake = wake
        let cancelTimer = startTimer(until: deadline, firing: wake)
        defer { cancelTimer() }
        await withCheckedContinuation { wake.install($0) }
    }

    private func sleepUntilWoken() async {
        let wake = Wake()
        self.wake = wake
        await withCheckedContinuation { wake.install($0) }
    }

    private func wakeUp() {
        wake?.fire()
        wake = nil
    }

    /// Fires `wake` at `deadline`; returns what cancels it. Deadlines of the real clock are
    /// waited for by the run's own thread, which then continues the run without a hop; any
    /// other clock (a test's) is waited on with its own `sleep`.
    private func startTimer(until deadline: C.Instant, firing wake: Wake) -> () -> Void {
        if let deadline = deadline as? ContinuousClock.Instant {
            let timer = thread.schedule(at: deadline) { wake.fire() }
            return { [thread] in thread.cancel(timer) }
        }
        let clock = clock
        let timer = Task {
            if (try? await clock.sleep(until: deadline, tolerance: nil)) != nil { wake.fire() }
        }
        return { timer.cancel() }
    }

    private func validate() async throws(TimelapseError) {
        do throws(PlanProblem) {
            try plan.validate()
        } catch {
            throw error.timelapseError
        }
        if namesCameras, case .bracket = plan.exposure {
            throw .invalidPlan("a bracket steps one camera's own shutter speeds; run a bracket on each camera of a rig by itself")
        }
        for member in cameras {
            do throws(TimelapseError) {
                try await validate(member)
            } catch .camera(let error) {
                guard let name = label(of: member) else { throw .camera(error) }
                throw .rigCamera(name, error)
            }
        }
    }

    /// Checks the plan against one camera: the interval fits its exposure, and it can do what
    /// the plan asks. The plan's own numbers are ``RunPlan/validate()``'s.
    private func validate(_ member: RigCamera) async throws(TimelapseError) {
        let camera = member.camera
        // What a slot needs on this camera, and why; a bulb exposure's or a clip's length is
        // the plan's own.
        let needed: (time: Duration, reason: String)?
        switch plan.exposure {
        case .camera:
            let exposure = try await currentExposureTime(of: camera)
            needed = (exposure + .milliseconds(plan.minimumGapMs), English.withArticle("\(exposure.compactText) exposure") + plan.gapText)
        case .bulb, .video:
            needed = nil
        case .ramp(let ramp):
            try await startRamp(ramp, member: member)
            needed = nil
        case .bracket(let count, let step):
            let speeds: [SettingValue]
            do {
                speeds = try await bracketSpeeds(count: count, stepThirds: step, camera: camera).0
            } catch {
                throw .camera(error)
            }
            let total = speeds.reduce(Duration.zero) { $0 + Self.exposureTime($1) }
            needed = (total + .milliseconds(plan.minimumGapMs) * count, "\(count) exposures of \(total.compactText) in all, each with "
                + English.withArticle("\(Duration.milliseconds(plan.minimumGapMs).compactText) gap"))
        }
        if let needed, needed.time > .milliseconds(plan.intervalMs) {
            throw .intervalTooShort(minimumMs: max(needed.time.wholeMilliseconds, 1), reason: needed.reason)
        }
        switch plan.exposure {
        case .bulb: try await requireBulbMode(camera)
        case .video where !camera.identity.capabilities.contains(.video): throw .camera(.unsupported("video recording"))
        default: break
        }
    }

    /// A bulb run is refused before it starts, not frame after frame, when the camera is not
    /// set to bulb.
    private func requireBulbMode(_ camera: any Camera) async throws(TimelapseError) {
        let current: SettingValue
        do {
            current = try await camera.value(of: .shutterSpeed)
        } catch .unsupported, .settingNotOffered {
            // A camera that cannot say (a remote that only presses buttons) is trusted.
            return
        } catch .device(let failure) where failure.kind == .unsupported {
            // A camera remote over Bluetooth reads no settings; it says so as a device refusal.
            return
        } catch {
            throw .camera(error)
        }
        guard case .shutterSpeed(let speed) = current, speed.isBulb else { throw .camera(.notInBulbMode(current: current)) }
    }

    private func currentExposureTime(of camera: any Camera) async throws(TimelapseError) -> Duration {
        do {
            return Self.exposureTime(try await camera.value(of: .shutterSpeed))
        } catch .unsupported, .settingNotOffered {
            return .zero
        } catch .device(let failure) where failure.kind == .unsupported {
            return .zero
        } catch {
            throw .camera(error)
        }
    }

    static func exposureTime(_ value: SettingValue) -> Duration {
        guard case .shutterSpeed(let speed) = value, !speed.isBulb else { return .zero }
        return .nanoseconds(Int64(speed.numerator) * 1_000_000_000 / Int64(speed.denominator))
    }
}


extension CameraError {
    /// A failure of the link to the camera rather than of the camera: what makes the slots
    /// after it lost to an outage.
    var isLinkFailure: Bool {
        switch self {
        case .notConnected, .timedOut: true
        case .device(let failure): failure.kind == .disconnected || failure.kind == .timedOut
        default: false
        }
    }
}

/// One wait of a run, ended by its timer or by a control call, whichever comes first; the
/// other is then a no-op. A timer may fire before the wait has begun: the wait then ends at once.
private final class Wake: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case fired
    }

    private let state = Mutex(State.pending)

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        let firedAlready = state.withLock { state in
            if case .fired = state { return true }
            state = .waiting(continuation)
            return false
        }
        if firedAlready { continuation.resume() }
    }

    func fire() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .fired }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume()
    }
}
