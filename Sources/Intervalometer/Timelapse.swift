public import CameraKit
import Foundation
import Synchronization
public import UnleashedKit
import UnleashedProtocol

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

/// A time-lapse run: slots on absolute deadlines `t0 + (n - 1) * interval` of an injected
/// monotonic clock, never a sleep after a shot, so that no error accumulates. Every slot is
/// journalled (durably) in order on a thread apart, so that a slow disk sync does not hold up
/// the next slot; the run ends only once every record is written.
public actor Timelapse<C: Clock> where C.Duration == Duration {
    /// Every frame record as it is journalled, for live displays. One consumer.
    public nonisolated let records: AsyncStream<FrameRecord>
    /// The run once it is journalled (begun or resumed), then the end of the stream; a run
    /// refused before it was journalled ends the stream with nothing. Lets a caller learn the
    /// run's id while the run goes on, without polling ``current``. One consumer.
    public nonisolated let begun: AsyncStream<RunRecord>

    let plan: RunPlan
    /// The cameras every slot fires, together (a ``Volley``).
    let cameras: [RigCamera]
    /// Whether records name their camera and carry the slot's spread: a run of a rig.
    let isRig: Bool
    private let journal: any RunJournal
    /// Frame records on their way to `journal`, written off the run's thread.
    private let journalWrites: JournalWrites
    private let clock: C
    private let wallClock: @Sendable () -> Int64
    private let hooks: HookRunner?
    private let recordSink: AsyncStream<FrameRecord>.Continuation
    private let begunSink: AsyncStream<RunRecord>.Continuation

    private var run: RunRecord?
    /// The monotonic instant of `t0`.
    private var anchor: C.Instant?
    /// How far the schedule has moved from `t0 + (n - 1) * interval`: by `defer` re-anchoring
    /// and by pauses.
    private var shift = Duration.zero
    /// Slot number of the next slot to shoot.
    private var nextFrame = 1
    private var stopReason: String?
    private var stopAfterFrame = false
    /// Set by ``suspend(reason:)``: the run ends without being marked ended in the journal.
    private var suspended = false
    private var extraFrames = 0
    private var extraParts: [Int: Int] = [:]
    private var pausedAt: C.Instant?
    /// The wait under way, for a control call to end early.
    private var wake: Wake?
    /// The exposure under way that a stop ends early (a bulb, a clip).
    private var stoppableWork: Volley<SlotWork>?
    /// A ramped run's ramps, one per camera (by name): each follows its own camera's light.
    var ramps: [String: CameraRamp] = [:]
    /// How much longer than the plan's interval the last ramped slot was: slots passed over
    /// (skipped, or the camera down) are spaced by it too, as the ramp had them.
    private var rampIntervalExtra: Duration?
    private let thread = ExecutorThread(name: "unleashed run", niceness: Timelapse.threadNiceness)
    /// What held up a slot other than the camera's own work (a slow start hook), for the
    /// records of the slots it made the run skip.
    private var slotDelay: (frame: Int, reason: String)?
    /// Cameras whose link went down since the current slot began: the slots skipped after it
    /// were lost to the outage, not to a busy camera.
    private var linkLost: Set<String> = []

    /// The run executes on a thread of its own, so that a busy process (a daemon serving its
    /// API) does not make slots late: see ``ExecutorThread``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// How far ahead of the start command slot 1 is placed.
    static var preparationTime: Duration { .milliseconds(20) }

    /// The nice value the run's thread asks for, where the process may raise it (root, or the
    /// system unit's `LimitNICE=-10`): at a deadline on a busy machine it gets a CPU first.
    static var threadNiceness: Int32 { -10 }

    /// How far ahead of its deadline a slot is prepared: the camera is asked then whether it is
    /// ready, so that at the deadline the command goes out without a round trip first.
    static var slotPreparation: Duration { .milliseconds(50) }

    /// A new run.
    ///
    /// - Parameters:
    ///   - wallClock: Unix milliseconds now; only used to label `t0` for resuming and for
    ///     `until` stops, never to time slots.
    public init(plan: RunPlan, camera: any Camera, journal: any RunJournal, clock: C,
                wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner? = nil) {
        self.init(plan: plan, cameras: [RigCamera(name: camera.identity.name, camera: camera)], isRig: false,
                  journal: journal, clock: clock, wallClock: wallClock, hooks: hooks)
    }

    /// A run of a rig: every slot fires all of its cameras together; each camera gets a record
    /// per slot (a camera that is down is recorded as skipped while the others fire), and every
    /// record carries the slot's command and completion spread.
    public init(plan: RunPlan, rig: Rig, journal: any RunJournal, clock: C,
                wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner? = nil) {
        self.init(plan: plan, cameras: rig.members, isRig: true, journal: journal, clock: clock, wallClock: wallClock, hooks: hooks)
    }

    private init(plan: RunPlan, cameras: [RigCamera], isRig: Bool, journal: any RunJournal, clock: C,
                 wallClock: @escaping @Sendable () -> Int64, hooks: HookRunner?) {
        self.plan = plan
        self.cameras = cameras
        self.isRig = isRig
        self.journal = journal
        let (records, recordSink) = AsyncStream.makeStream(of: FrameRecord.self, bufferingPolicy: .bufferingNewest(4096))
        self.records = records
        self.recordSink = recordSink
        // A record reaches displays once it is on disk (or waits for a journal that failed).
        journalWrites = JournalWrites(journal: journal) { recordSink.yield($0) }
        self.clock = clock
        self.wallClock = wallClock
        self.hooks = hooks
        (begun, begunSink) = AsyncStream.makeStream()
    }

    /// The run as journalled, once it has begun (or been resumed).
    public var current: RunRecord? { run }

    // MARK: - Control (from signals, the CLI, the daemon)

    /// Ends the run: at once between slots, after the current shot, and a bulb exposure at once
    /// (the shutter is closed and the frame recorded).
    public func stop(reason: String) {
        stopReason = stopReason ?? reason
        stoppableWork?.cancel()
        // A hook the run waits for (init, start) must not hold up the stop.
        hooks?.interrupt()
        wakeUp()
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
        stopAfterFrame = true
        wakeUp()
    }

    /// Shoots one extra picture now, outside the schedule (SIGUSR1).
    public func shootExtraFrame() {
        extraFrames += 1
        wakeUp()
    }

    /// Holds the schedule; ``continueSchedule()`` re-anchors it so that the slots keep their
    /// interval from where they stopped.
    public func pauseSchedule() {
        guard pausedAt == nil else { return }
        pausedAt = clock.now
        wakeUp()
    }

    /// Continues a paused run, shifting the schedule by the time paused.
    public func continueSchedule() {
        guard let pausedAt else { return }
        shift += pausedAt.duration(to: clock.now)
        self.pausedAt = nil
        wakeUp()
    }

    // MARK: - Running

    /// Checks the plan against the camera, journals the run, waits `startDelay`, and runs it to
    /// its end.
    public func start(cameraName: String, startDelay: Duration = .zero) async throws(TimelapseError) -> RunEnding {
        defer { recordSink.finish(); begunSink.finish() }
        try await validate()
        if let hooks {
            let status = await hooks.run(.initialize, frame: nil, environment: [:])
            if let stopReason { throw .stoppedBeforeStart(stopReason) }
            if let status, status != 0 { throw .hookRefused(status: status) }
        }
        // Slot 1 lies a little ahead, so that journalling the run (a disk sync) does not make
        // it late; a stop while waiting for it ends the run with no frames.
        let lead = max(startDelay, Self.preparationTime)
        let t0 = clock.now.advanced(by: lead)
        let t0Wall = wallClock() + lead.wholeMilliseconds
        do {
            run = try journal.begin(plan: plan, t0UnixMs: t0Wall, camera: cameraName)
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
        defer { recordSink.finish(); begunSink.finish() }
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
        if isRig, let last {
            // The crash may have come between two cameras' records of the last slot: the others
            // are recorded as not known, so that every slot has a record per camera.
            let names = Set(recorded.filter { $0.frame == last.frame }.compactMap(\.camera))
            try appendSkipped(frame: last.frame, due: .milliseconds(last.scheduledMs),
                              reason: "the run stopped before this camera's outcome was recorded",
                              cameras: cameras.filter { !names.contains($0.name) })
        }
        let sinceT0 = Duration.milliseconds(wallClock() - record.t0UnixMs)
        anchor = clock.now.advanced(by: .zero - sinceT0)
        if let last {
            nextFrame = last.frame + 1
            // A deferred or paused schedule carries on from where the last slot was due.
            shift = .milliseconds(last.scheduledMs) - .milliseconds(plan.intervalMs) * (last.frame - 1)
        }
        // The slot after the last one is due its recorded interval later, as in the run before.
        if let interval = resumeRamps(from: recorded, last: last) { applyRampInterval(extra: interval - .milliseconds(plan.intervalMs)) }
        if let hooks { _ = await hooks.run(.initialize, frame: nil, environment: [:]) }
        // A clip cut off by the crash may still be recording, and would make every clip after
        // it fail to start: stop it first ("not recording" is fine too).
        if case .video = plan.exposure {
            for member in cameras { _ = try? await member.camera.stopVideo() }
        }
        return try await runSlots(resumed: true)
    }

    /// Adds to the journal the records an earlier run of `run` left in a recovery file when its
    /// journal could not take them, then removes the file.
    private func importRecovered(run: Int64) throws {
        let files = journal.recoveryFiles(of: run).filter { FileManager.default.fileExists(atPath: $0) }
        guard !files.isEmpty else { return }
        for record in JournalRecovery.records(in: files) { try journal.appendUnlessRecorded(record, to: run) }
        JournalRecovery.remove(files)
    }

    private func runSlots(resumed: Bool = false) async throws(TimelapseError) -> RunEnding {
        guard let run else { preconditionFailure("no run") }
        if let hooks {
            let started = elapsed()
            _ = await hooks.run(.start, frame: nil, environment: ["ARGUMENT": "\(run.id)"])
            // The hook ran past the first slot's time: the slots it cost are its, not the camera's.
            if elapsed() > scheduledOffset(of: nextFrame) {
                let ran = (elapsed() - started).compactText
                slotDelay = (nextFrame, "the start hook \(hooks.program) ran for \(ran) and held up frame \(nextFrame)")
            }
        }
        let linkWatch = watchLinks()
        defer { linkWatch.cancel() }
        var downloads: [(DownloadHookRelay, any Camera)] = []
        if let hooks {
            for member in cameras { downloads.append((DownloadHookRelay(hooks: hooks, events: await member.camera.events()), member.camera)) }
        }
        var failure: TimelapseError?
        do throws(TimelapseError) {
            if resumed { try recordMissedSlots(upTo: elapsed(), reason: "the run was not running") }
            try await slots()
        } catch {
            failure = error
        }
        let (unwritten, writeFailure) = await journalWrites.drain()
        // A suspended run stays `.running` in the journal: it is to be resumed, not ended.
        var state: RunState = failure != nil ? .failed : suspended ? .running : .finished
        var reason = failure?.description ?? stopReason ?? "all slots done"
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

    private func slots() async throws(TimelapseError) {
        while stopReason == nil {
            if stopAfterFrame {
                stopReason = "stopped after frame \(nextFrame - 1) on request"
                return
            }
            let due = scheduledOffset(of: nextFrame)
            guard isScheduled(frame: nextFrame, at: due) else { return }
            await waitForSlot(at: due - Self.slotPreparation)
            if stopReason != nil || stopAfterFrame { continue }
            if extraFrames > 0 {
                extraFrames -= 1
                try await shootExtra()
                continue
            }
            if pausedAt != nil { continue }
            // Woken early, or the schedule moved (continued after a pause): wait again.
            guard due == scheduledOffset(of: nextFrame), elapsed() >= due - Self.slotPreparation else { continue }
            // Ahead of the deadline: which cameras are up, and their commands parked, ready to go.
            let (ready, down) = await Rig.prepareShot(cameras)
            await prepareRamps(due: due, cameras: ready)
            // Cameras that press on their own clocks are told the deadline now; the others'
            // commands are released at it.
            let firing = await firingInstant(due: due, cameras: ready)
            let volley = await prepareSlotVolley(frame: nextFrame, cameras: ready, firing: firing)
            if firing == nil { await waitForSlot(at: due) }
            guard stopReason == nil, !stopAfterFrame, extraFrames == 0, pausedAt == nil,
                  due == scheduledOffset(of: nextFrame), firing != nil || elapsed() >= due else {
                volley?.discard()
                continue
            }
            try await shootSlot(nextFrame, due: due, ready: ready, down: down, volley: volley)
        }
    }

    /// The parked commands of a slot's single exposure (a picture, a bulb exposure, a clip);
    /// nil for a bracket, whose pictures follow one another, or when no camera is up.
    private func prepareSlotVolley(frame: Int, cameras: [RigCamera], firing: ContinuousClock.Instant?) async -> Volley<SlotWork>? {
        guard !cameras.isEmpty, let command = slotCommand(firing: firing) else { return nil }
        return await volley(frame: frame, cameras: cameras, command.run)
    }

    /// The slot's deadline on the host's clock when a rig's shot can be scheduled on the
    /// cameras' own clocks: pictures (not bulb or video), a run on the real clock, and every
    /// camera able to (``Camera/schedulesShots``). Nil otherwise.
    private func firingInstant(due: Duration, cameras: [RigCamera]) async -> ContinuousClock.Instant? {
        guard isRig, case .camera = plan.exposure, C.self == ContinuousClock.self,
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
        await Volley.prepare(cameras, stamp: stamp()) { camera throws(CameraError) in
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

    /// Work for one slot, then the choice of the next slot by the overrun policy.
    private func shootSlot(_ frame: Int, due: Duration, ready: [RigCamera], down: [RigCamera],
                           volley: Volley<SlotWork>?) async throws(TimelapseError) {
        try appendSkipped(frame: frame, due: due, reason: "the camera was not connected at the slot", cameras: down)
        if ready.isEmpty {
            nextFrame = frame + 1
            if let extra = rampIntervalExtra { shift += extra }
            try recordMissedSlots(upTo: elapsed(), reason: "the camera was not connected")
            return
        }
        linkLost = []
        let sent = try await expose(frame: frame, due: due, cameras: ready, volley: volley)
        nextFrame = frame + 1
        // A ramped interval: the next slot is due this slot's interval after it.
        if let interval = rampInterval() { applyRampInterval(extra: interval - .milliseconds(plan.intervalMs)) }
        switch plan.overrun {
        case .skip:
            let ready = elapsed() + .milliseconds(plan.minimumGapMs)
            try recordMissedSlots(upTo: ready, reason: overrunReason(frame: frame))
        case .defer:
            // Re-anchor on the late shot: the interval holds from when it actually went out.
            if sent > due { shift += sent - due }
        case .burst:
            break
        }
        if plan.overrun != .skip, plan.minimumGapMs > 0 {
            // Slots keep their times, but never closer than the gap to the previous work.
            let ready = elapsed() + .milliseconds(plan.minimumGapMs)
            if let anchor, ready > scheduledOffset(of: nextFrame) { await sleep(until: anchor.advanced(by: ready)) }
        }
    }

    /// Why the slots after `frame` were passed over: a slow hook, a link that went down during
    /// the slot, or the camera still at work.
    private func overrunReason(frame: Int) -> String {
        if let slotDelay, slotDelay.frame == frame { return slotDelay.reason }
        if !linkLost.isEmpty {
            let whose = isRig ? " to " + linkLost.sorted().joined(separator: ", ") : " to the camera"
            return "the link\(whose) was lost during frame \(frame)"
        }
        return "the camera was still busy with frame \(frame)"
    }

    /// Follows every camera's link, so that slots lost to an outage say so.
    private func watchLinks() -> Task<Void, Never> {
        let cameras = cameras
        return Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                for member in cameras {
                    group.addTask {
                        for await event in await member.camera.events() {
                            guard case .connection(let state) = event, state != .ready else { continue }
                            await self?.noteLinkLost(member.name)
                        }
                    }
                }
            }
        }
    }

    private func noteLinkLost(_ name: String) {
        linkLost.insert(name)
    }

    /// Journals as skipped every slot due before `limit` from `nextFrame` on.
    private func recordMissedSlots(upTo limit: Duration, reason: String) throws(TimelapseError) {
        while true {
            let due = scheduledOffset(of: nextFrame)
            guard due < limit, isScheduled(frame: nextFrame, at: due) else { return }
            try appendSkipped(frame: nextFrame, due: due, reason: reason, cameras: cameras)
            nextFrame += 1
            if let extra = rampIntervalExtra { shift += extra }
        }
    }

    /// Moves the next slot `extra` later than the plan's interval puts it: a ramped interval.
    private func applyRampInterval(extra: Duration) {
        shift += extra
        rampIntervalExtra = extra
    }

    /// A skipped record of the slot for each of `cameras`.
    private func appendSkipped(frame: Int, due: Duration, reason: String, cameras: [RigCamera]) throws(TimelapseError) {
        for member in cameras {
            try append(FrameRecord(frame: frame, scheduledMs: due.wholeMilliseconds, outcome: .skipped, error: reason,
                                   camera: isRig ? member.name : nil))
        }
    }

    /// Shoots one slot on `cameras`; returns when its first command went out (after `t0`).
    private func expose(frame: Int, due: Duration, cameras: [RigCamera], volley: Volley<SlotWork>?) async throws(TimelapseError) -> Duration {
        guard let command = slotCommand() else {
            guard case .bracket(let count, let stepThirds) = plan.exposure, let member = cameras.first else { return elapsed() }
            return try await bracket(frame: frame, due: due, count: count, stepThirds: stepThirds, member: member)
        }
        let parked: Volley<SlotWork>
        if let volley { parked = volley } else { parked = await self.volley(frame: frame, cameras: cameras, command.run) }
        return try await record(frame: frame, part: 1, due: due, exposure: command.exposure, stoppable: command.stoppable,
                                cameras: cameras, volley: parked)
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
        if stoppable, stopReason != nil { volley.cancel() }
        let outcomes = await volley.outcomes()
        stoppableWork = nil
        let finished = elapsed()
        let spread = isRig ? VolleySpread(outcomes) : nil
        for (member, outcome) in zip(cameras, outcomes) {
            let sent = outcome.sentStamp ?? released
            // Only a slot's first command has a deadline; the rest of a bracket follows it.
            var entry = FrameRecord(frame: frame, part: part, scheduledMs: due.wholeMilliseconds, sentMs: sent.wholeMilliseconds,
                                    latenessMicros: part == 1 ? (sent - due).wholeMicroseconds : nil, outcome: .taken,
                                    exposure: exposure, camera: isRig ? member.name : nil,
                                    commandSpreadMicros: spread?.commands?.wholeMicroseconds,
                                    completionSpreadMicros: spread?.completions?.wholeMicroseconds,
                                    ramp: part == 1 ? rampRecord(of: member.name) : nil)
            if part == 1, let text = rampExposureText(of: member.name) { entry.exposure = text }
            switch outcome.result {
            case .success(let done)?:
                if part == 1, done.failure == nil { rampApplied(by: member.name) }
                entry.completedMs = (isRig ? outcome.completedStamp ?? finished : finished).wholeMilliseconds
                entry.shotCounter = done.shotCounter
                entry.exposure = done.exposure ?? entry.exposure
                entry.error = done.failure ?? done.note
                if done.failure != nil { entry.outcome = .failed }
            case .failure(let error)?:
                entry.outcome = .failed
                entry.error = error.description
                if error.isLinkFailure { linkLost.insert(member.name) }
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

    private func shootExtra() async throws(TimelapseError) {
        let frame = max(nextFrame - 1, 0)
        let part = (extraParts[frame] ?? partsPerSlot) + 1
        extraParts[frame] = part
        let (ready, _) = await Rig.prepareShot(cameras)
        guard !ready.isEmpty else { return }
        let parked = await volley(frame: frame, cameras: ready) { camera throws(CameraError) in
            SlotWork(try await camera.shoot())
        }
        try await record(frame: frame, part: part, due: elapsed(), exposure: "extra", cameras: ready, volley: parked)
    }

    private var partsPerSlot: Int {
        if case .bracket(let count, _) = plan.exposure { return count }
        return 1
    }

    private func append(_ entry: FrameRecord) throws(TimelapseError) {
        guard let run else { return }
        if !journalWrites.append(entry, to: run.id), stopReason == nil {
            // The journal has not taken a record for too long: end the run before memory runs out.
            stopReason = "the run journal has not been writable for \(JournalWrites.backlogLimit) records"
        }
    }

    // MARK: - Schedule

    private func scheduledOffset(of frame: Int) -> Duration {
        .milliseconds(plan.intervalMs) * (frame - 1) + shift
    }

    private func isScheduled(frame: Int, at offset: Duration) -> Bool {
        switch plan.stop {
        case .frames(let count): frame <= count
        case .duration(let milliseconds): offset < .milliseconds(milliseconds)
        case .until(let unix): (run?.t0UnixMs ?? 0) + offset.wholeMilliseconds < unix
        case .never: true
        }
    }

    /// Time since `t0`.
    private func elapsed() -> Duration {
        guard let anchor else { return .zero }
        return anchor.duration(to: clock.now)
    }

    private func waitForSlot(at offset: Duration) async {
        guard let anchor, elapsed() < offset, extraFrames == 0, pausedAt == nil else {
            if pausedAt != nil, extraFrames == 0, stopReason == nil { await sleepUntilWoken() }
            return
        }
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
        guard plan.intervalMs > 0 else { throw .invalidPlan("the interval must be longer than 0") }
        guard plan.minimumGapMs >= 0 else { throw .invalidPlan("the minimum gap cannot be negative") }
        switch plan.stop {
        case .frames(let count) where count < 1: throw .invalidPlan("a run needs at least 1 frame")
        case .duration(let milliseconds) where milliseconds <= 0: throw .invalidPlan("the duration must be longer than 0")
        default: break
        }
        if isRig, case .bracket = plan.exposure {
            throw .invalidPlan("a bracket steps one camera's own shutter speeds; run a bracket on each camera of a rig by itself")
        }
        for member in cameras {
            do throws(TimelapseError) {
                try await validate(member)
            } catch .camera(let error) where isRig {
                throw .rigCamera(member.name, error)
            }
        }
    }

    /// Checks the plan against one camera: the interval fits its exposure, and it can do what
    /// the plan asks.
    private func validate(_ member: RigCamera) async throws(TimelapseError) {
        let camera = member.camera
        let needed: Duration
        let reason: String
        switch plan.exposure {
        case .camera:
            let exposure = try await currentExposureTime(of: camera)
            needed = exposure + .milliseconds(plan.minimumGapMs)
            reason = English.withArticle("\(exposure.compactText) exposure") + gapText
        case .bulb(let milliseconds):
            (needed, reason) = try timedSlot(milliseconds, "bulb exposure")
        case .video(let milliseconds):
            (needed, reason) = try timedSlot(milliseconds, "clip")
        case .ramp(let ramp):
            try await startRamp(ramp, member: member)
            needed = .milliseconds(ramp.gapMs + 1)
            reason = "the \(Duration.milliseconds(ramp.gapMs).compactText) gap the ramp leaves after each exposure"
        case .bracket(let count, let step):
            guard count >= 2, count % 2 == 1 else { throw .invalidPlan("a bracket has an odd number of frames, 3 or more") }
            guard step >= 1 else { throw .invalidPlan("a bracket steps by at least 1/3 stop") }
            let speeds: [SettingValue]
            do {
                speeds = try await bracketSpeeds(count: count, stepThirds: step, camera: camera).0
            } catch {
                throw .camera(error)
            }
            let total = speeds.reduce(Duration.zero) { $0 + Self.exposureTime($1) }
            needed = total + .milliseconds(plan.minimumGapMs) * count
            reason = "\(count) exposures of \(total.compactText) in all, each with "
                + English.withArticle("\(Duration.milliseconds(plan.minimumGapMs).compactText) gap")
        }
        if needed > .milliseconds(plan.intervalMs) {
            throw .intervalTooShort(minimumMs: max(needed.wholeMilliseconds, 1), reason: reason)
        }
        switch plan.exposure {
        case .bulb: try await requireBulbMode(camera)
        case .video where !camera.identity.capabilities.contains(.video): throw .camera(.unsupported("video recording"))
        default: break
        }
    }

    /// The time a slot of fixed length (a bulb exposure, a clip) needs, and why.
    private func timedSlot(_ milliseconds: Int64, _ what: String) throws(TimelapseError) -> (Duration, String) {
        guard milliseconds >= 1 else { throw .invalidPlan("\(English.withArticle(what)) lasts at least 1 ms") }
        return (.milliseconds(milliseconds + plan.minimumGapMs), English.withArticle("\(Duration.milliseconds(milliseconds).compactText) \(what)") + gapText)
    }

    /// ` plus a 300ms gap`, or nothing without a gap.
    private var gapText: String {
        plan.minimumGapMs > 0 ? " plus " + English.withArticle("\(Duration.milliseconds(plan.minimumGapMs).compactText) gap") : ""
    }

    /// A bulb run is refused before it starts, not frame after frame, when the camera is not
    /// set to bulb.
    private func requireBulbMode(_ camera: any Camera) async throws(TimelapseError) {
        let current: SettingValue
        do {
            current = try await camera.value(of: .shutterSpeed)
        } catch .unsupported {
            return
        } catch {
            throw .camera(error)
        }
        guard case .shutterSpeed(let speed) = current, speed.isBulb else { throw .camera(.notInBulbMode(current: current)) }
    }

    private func currentExposureTime(of camera: any Camera) async throws(TimelapseError) -> Duration {
        do {
            return Self.exposureTime(try await camera.value(of: .shutterSpeed))
        } catch .unsupported {
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
