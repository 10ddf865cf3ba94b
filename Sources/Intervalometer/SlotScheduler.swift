/// Where a run's schedule stands, as the transition table names it.
public enum SlotPhase: String, CaseIterable, Hashable, Sendable {
    /// Not started yet: the run's hooks and journal come first.
    case idle
    /// Waiting for the next slot's preparation time (or, paused, for a control call).
    case waiting
    /// The driver asks the cameras whether they are up and parks their commands.
    case preparing
    /// The slot's commands are parked; waiting for its deadline.
    case armed
    /// The slot's exposure is under way.
    case shooting
    /// An extra picture, outside the schedule, is under way.
    case extra
    /// The run is over; nothing changes it any more.
    case ended
}

/// One slot as the scheduler hands it to its driver.
public struct ScheduledSlot: Hashable, Sendable {
    /// The slot number, from 1.
    public var frame: Int
    /// When it is due, after `t0`: `(frame - 1) * interval` plus the schedule's shift.
    public var due: Duration
    /// What it shoots: a picture, a bulb exposure, a bracket, a clip, a ramped exposure.
    public var exposure: ExposurePlan
}

/// The slot a run will shoot next and when it is due, for a countdown that follows the
/// schedule itself (pauses, `defer` re-anchoring, a ramped interval) rather than redoing it.
public struct UpcomingSlot: Hashable, Sendable {
    /// The slot number, from 1.
    public var frame: Int
    /// When it is due, after `t0`; already past for a slot a `burst` run is catching up on.
    public var due: Duration

    public init(frame: Int, due: Duration) {
        self.frame = frame
        self.due = due
    }
}

/// The schedule's next slot as a run last told it, numbered: a reader that hears it both from
/// the run's stream and by asking the run keeps the newer of the two.
public struct NextSlotNotice: Hashable, Sendable {
    /// Counts the changes the run has told, from 1; 0 before the first.
    public var sequence: Int
    /// The slot, or nil when none is to come.
    public var slot: UpcomingSlot?

    public init(sequence: Int, slot: UpcomingSlot?) {
        self.sequence = sequence
        self.slot = slot
    }
}

/// A slot the run passed over, for the journal.
public struct SkippedSlot: Hashable, Sendable {
    public var frame: Int
    public var due: Duration
    public var reason: String
    /// The cameras it is recorded for, by name.
    public var cameras: [String]
}

/// A run's slot schedule as a plain value: clock readings (durations since `t0`), the driver's
/// outcomes and control calls in, actions out. Slot n is due at `t0 + (n - 1) * interval`, moved
/// only by pauses, `defer` re-anchoring and a ramped interval; it never sleeps, reads a clock or
/// starts a task: ``Timelapse`` carries out its actions. Every rule is a row of ``transitions``;
/// an input that no row names for the phase (a late wake, a second pause) changes nothing.
public struct SlotScheduler: Sendable {
    /// What happened, as the driver saw it. Times are durations since `t0` on the run's clock.
    public enum Input: Hashable, Sendable {
        /// The run is journalled (`t0UnixMs`: the wall-clock time of slot 1), its start hook done
        /// (`startHookRan`: the hook's program and how long it ran, so that slots it held up say
        /// so); `resuming` carries on an interrupted run.
        case started(now: Duration, t0UnixMs: Int64, resuming: Resumption?, startHookRan: StartHook?)
        /// A wait the scheduler asked for ended: at its deadline, or early for a control call.
        case woke(now: Duration)
        /// The slot's cameras were asked ahead of the deadline: which are up, and whether they
        /// fire on their own clocks (so the driver does not wait for the deadline itself).
        case prepared(ready: [String], down: [String], firesOnCameraClocks: Bool, now: Duration)
        /// The slot's exposure is recorded: when its first command went out, the interval a ramp
        /// asks for until the next slot, and how many of its requests the links sent again
        /// (lost packets) while it was taken.
        case slotShot(firstSent: Duration, rampInterval: Duration?, resent: Int = 0, now: Duration)
        /// The extra picture is recorded.
        case extraShot(now: Duration)
        case pauseAsked(now: Duration)
        case continueAsked(now: Duration)
        case extraFrameAsked
        case stopAsked(reason: String)
        case stopAfterFrameAsked
        /// A camera's link went down (an event, or a command that failed on the link).
        case linkLost(camera: String)
        /// The journal has not taken a record for too long: the run ends before memory runs out.
        case journalStalled(reason: String)

        /// The input without details, as the table names it.
        public var kind: Kind {
            switch self {
            case .started: .started
            case .woke: .woke
            case .prepared: .prepared
            case .slotShot: .slotShot
            case .extraShot: .extraShot
            case .pauseAsked: .pauseAsked
            case .continueAsked: .continueAsked
            case .extraFrameAsked: .extraFrameAsked
            case .stopAsked: .stopAsked
            case .stopAfterFrameAsked: .stopAfterFrameAsked
            case .linkLost: .linkLost
            case .journalStalled: .journalStalled
            }
        }

        public enum Kind: String, CaseIterable, Hashable, Sendable {
            case started, woke, prepared, slotShot, extraShot, pauseAsked, continueAsked, extraFrameAsked,
                 stopAsked, stopAfterFrameAsked, linkLost, journalStalled
        }
    }

    /// Where an interrupted run left its schedule.
    public struct Resumption: Hashable, Sendable {
        /// The last slot recorded and when it was due, if any was.
        public var lastFrame: Int?
        public var lastDue: Duration
        /// The interval its ramp asked for after the last slot.
        public var rampInterval: Duration?

        public init(lastFrame: Int?, lastDue: Duration = .zero, rampInterval: Duration? = nil) {
            self.lastFrame = lastFrame
            self.lastDue = lastDue
            self.rampInterval = rampInterval
        }
    }

    /// A start hook that ran before slot 1.
    public struct StartHook: Hashable, Sendable {
        public var program: String
        public var ran: Duration

        public init(program: String, ran: Duration) {
            self.program = program
            self.ran = ran
        }
    }

    /// What the driver must do, in order. A wait, a preparation, a firing or an end is always
    /// last: the driver answers it with the next input.
    public enum Action: Hashable, Sendable {
        /// Sleep until this time after `t0` (at once when it has passed), or until a control
        /// call; nil: until a control call only (paused). Then feed ``Input/woke(now:)``.
        case wait(until: Duration?)
        /// Ask the cameras whether they are up and park the slot's commands; then feed
        /// ``Input/prepared(ready:down:firesOnCameraClocks:now:)``.
        case prepare(ScheduledSlot)
        /// Release the slot's parked commands on the cameras that were up; record each outcome,
        /// then feed ``Input/slotShot(firstSent:rampInterval:resent:now:)``.
        case fire(ScheduledSlot)
        /// Drop the parked commands of a slot that will not be fired now.
        case discard
        /// Shoot one picture now, recorded as `part` of `frame`; then feed ``Input/extraShot(now:)``.
        case fireExtra(frame: Int, part: Int)
        /// Journal these slots as skipped (possibly none).
        case skip([SkippedSlot])
        /// End an exposure under way early (a bulb, a clip), closing the shutter.
        case endExposure
        /// Interrupt a hook the run waits for (init, start).
        case interruptHook
        /// End the driver's wait, so that it feeds ``Input/woke(now:)`` at once.
        case wake
        /// The run is over.
        case end(reason: String)

        /// The action without details, as the table names it.
        public var kind: Kind {
            switch self {
            case .wait: .wait
            case .prepare: .prepare
            case .fire: .fire
            case .discard: .discard
            case .fireExtra: .fireExtra
            case .skip: .skip
            case .endExposure: .endExposure
            case .interruptHook: .interruptHook
            case .wake: .wake
            case .end: .end
            }
        }

        public enum Kind: String, CaseIterable, Hashable, Sendable {
            case wait, prepare, fire, discard, fireExtra, skip, endExposure, interruptHook, wake, end
        }
    }

    /// A condition on the schedule, for inputs whose outcome depends on it. Rows of one phase and
    /// input are tried in order; the first whose guard holds applies.
    public enum Guard: String, CaseIterable, Hashable, Sendable {
        case always
        /// A resumed run: slots that passed while nothing ran are recorded as skipped.
        case resuming
        case stopPending
        case stopAfterFramePending
        /// The stop condition leaves no slot after the last one.
        case noSlotLeft
        case extraPending
        case paused
        case notPaused
        /// It is time to prepare the next slot.
        case preparationDue
        /// A stop, an extra picture, a pause or a moved schedule came between preparing the slot
        /// and its deadline, or the deadline has not come: the parked commands are dropped.
        case slotInterrupted
        /// No camera was up when the slot was prepared.
        case noCameraReady
        case overrunSkip
        case overrunDefer
        case overrunBurst
    }

    /// One rule: in phase `from`, on `on` (when `when` holds), go to `to` and do `actions`.
    public struct Transition: Hashable, Sendable {
        public let from: SlotPhase
        public let on: Input.Kind
        public let when: Guard
        public let to: SlotPhase
        public let actions: [Action.Kind]
    }

    /// Every rule of the schedule.
    public static let transitions: [Transition] = {
        var rows: [Transition] = []
        func row(_ from: SlotPhase, _ on: Input.Kind, _ when: Guard = .always, to: SlotPhase, _ actions: [Action.Kind] = []) {
            rows.append(Transition(from: from, on: on, when: when, to: to, actions: actions))
        }

        row(.idle, .started, .resuming, to: .waiting, [.skip, .wait])
        row(.idle, .started, to: .waiting, [.wait])

        // Whenever a wait ends, the next thing to do: end, an extra picture, hold, prepare the
        // slot, or wait some more.
        row(.waiting, .woke, .stopPending, to: .ended, [.end])
        row(.waiting, .woke, .stopAfterFramePending, to: .ended, [.end])
        row(.waiting, .woke, .noSlotLeft, to: .ended, [.end])
        row(.waiting, .woke, .extraPending, to: .extra, [.fireExtra])
        row(.waiting, .woke, .paused, to: .waiting, [.wait])
        row(.waiting, .woke, .preparationDue, to: .preparing, [.prepare])
        row(.waiting, .woke, to: .waiting, [.wait])

        row(.preparing, .prepared, to: .armed, [.wait])

        row(.armed, .woke, .slotInterrupted, to: .waiting, [.discard, .wait])
        row(.armed, .woke, .noCameraReady, to: .waiting, [.skip, .wait])
        row(.armed, .woke, to: .shooting, [.skip, .fire])

        row(.shooting, .slotShot, .overrunSkip, to: .waiting, [.skip, .wait])
        row(.shooting, .slotShot, .overrunDefer, to: .waiting, [.wait])
        row(.shooting, .slotShot, .overrunBurst, to: .waiting, [.wait])

        row(.extra, .extraShot, to: .waiting, [.wait])

        // Control calls and link news, in any phase of a live run.
        for phase in SlotPhase.allCases where phase != .ended {
            row(phase, .stopAsked, to: phase, [.endExposure, .interruptHook, .wake])
            row(phase, .stopAfterFrameAsked, to: phase, [.wake])
            row(phase, .extraFrameAsked, to: phase, [.wake])
            row(phase, .pauseAsked, .notPaused, to: phase, [.wake])
            row(phase, .continueAsked, .paused, to: phase, [.wake])
            row(phase, .linkLost, to: phase)
            row(phase, .journalStalled, to: phase)
        }
        return rows
    }()

    private static let table: [SlotPhase: [Input.Kind: [Transition]]] = Dictionary(
        grouping: transitions, by: \.from
    ).mapValues { Dictionary(grouping: $0, by: \.on) }

    /// How far ahead of its deadline a slot is prepared.
    public static let defaultPreparation = Duration.milliseconds(50)

    public let plan: RunPlan
    /// The run's cameras by name, for the records of skipped slots.
    public let cameras: [String]
    /// The wall-clock time of `t0` (Unix milliseconds), for an `until` stop.
    public private(set) var t0UnixMs: Int64 = 0
    public let preparation: Duration

    public private(set) var phase: SlotPhase = .idle
    /// The slot to shoot next.
    public private(set) var nextFrame = 1
    /// How far the schedule has moved from `t0 + (n - 1) * interval`: by `defer` re-anchoring,
    /// by pauses and by a ramped interval.
    public private(set) var shift = Duration.zero
    /// Why the run is to end, once it is.
    public private(set) var stopReason: String?
    public private(set) var stopAfterFrame = false
    public private(set) var extraFrames = 0
    public private(set) var pausedAt: Duration?
    /// How much longer than the plan's interval the last ramped slot was: slots passed over are
    /// spaced by it too.
    private var rampIntervalExtra: Duration?
    /// Extra pictures recorded per frame, so that each gets a part number of its own.
    private var extraParts: [Int: Int] = [:]
    /// What held up a slot's command (a slow start hook, slow answers while it was prepared),
    /// for the slots it cost.
    private var slotDelay: (frame: Int, reason: String)?
    /// How long after its deadline the slot in hand was ready to fire.
    private var preparedLate: (frame: Int, late: Duration)?
    /// Cameras whose link went down since the current slot began.
    private var linkLost: Set<String> = []
    /// The slot being prepared, armed or shot, and which cameras were up for it.
    private var slot: ScheduledSlot?
    private var ready: [String] = []
    private var down: [String] = []
    private var firesOnCameraClocks = false

    /// A run's schedule, `idle` until ``Input/started(now:t0UnixMs:resuming:startHookRan:)``.
    public init(plan: RunPlan, cameras: [String], preparation: Duration = Self.defaultPreparation) {
        self.plan = plan
        self.cameras = cameras
        self.preparation = preparation
    }

    /// A scheduler placed in `phase` with slot `frame` in hand: for tests that walk the table.
    init(plan: RunPlan, cameras: [String], phase: SlotPhase, slot frame: Int = 1, pausedAt: Duration? = nil,
         extraFrames: Int = 0, stopReason: String? = nil, stopAfterFrame: Bool = false, ready: [String]? = nil,
         firesOnCameraClocks: Bool = false) {
        self.init(plan: plan, cameras: cameras)
        self.phase = phase
        nextFrame = frame
        self.pausedAt = pausedAt
        self.extraFrames = extraFrames
        self.stopReason = stopReason
        self.stopAfterFrame = stopAfterFrame
        self.ready = ready ?? cameras
        down = cameras.filter { !self.ready.contains($0) }
        self.firesOnCameraClocks = firesOnCameraClocks
        if [.preparing, .armed, .shooting].contains(phase) { slot = scheduledSlot(frame) }
    }

    private var interval: Duration { .milliseconds(plan.intervalMs) }

    /// When slot `frame` is due after `t0`.
    public func due(of frame: Int) -> Duration {
        interval * (frame - 1) + shift
    }

    /// Whether slot `frame`, due at `due`, lies within the run's stop condition.
    public func isScheduled(frame: Int, at due: Duration) -> Bool {
        switch plan.stop {
        case .frames(let count): frame <= count
        case .duration(let milliseconds): due < .milliseconds(milliseconds)
        case .until(let unix): t0UnixMs + due.wholeMilliseconds < unix
        case .never: true
        }
    }

    /// The slot to shoot next, while one is to come: the slot in hand until its exposure
    /// starts, then the one after it (a long bulb or clip counts down to the next slot, not to
    /// one under way). Nil before the start and once the run ends, while paused, once a stop is
    /// asked for, and when the stop condition leaves none.
    public var upcoming: UpcomingSlot? {
        guard phase != .idle, phase != .ended, pausedAt == nil, stopReason == nil, !stopAfterFrame else { return nil }
        let frame = phase == .shooting ? nextFrame + 1 : nextFrame
        let due = due(of: frame)
        guard isScheduled(frame: frame, at: due) else { return nil }
        return UpcomingSlot(frame: frame, due: due)
    }

    /// The row that applies to `input` now, if any.
    public func transition(for input: Input) -> Transition? {
        Self.table[phase]?[input.kind]?.first { holds($0.when, for: input) }
    }

    /// Applies `input`: moves to the next phase and returns what the driver must do.
    public mutating func handle(_ input: Input) -> [Action] {
        guard let row = transition(for: input) else { return [] }
        let now = input.now
        apply(input)
        var actions: [Action] = []
        for kind in row.actions {
            actions.append(action(kind, row: row, input: input, now: now))
        }
        phase = row.to
        return actions
    }

    // MARK: - Guards

    private func holds(_ condition: Guard, for input: Input) -> Bool {
        let now = input.now ?? .zero
        switch condition {
        case .always: return true
        case .resuming:
            if case .started(_, _, .some, _) = input { return true }
            return false
        case .stopPending: return stopReason != nil
        case .stopAfterFramePending: return stopAfterFrame
        case .noSlotLeft: return !isScheduled(frame: nextFrame, at: due(of: nextFrame))
        case .extraPending: return extraFrames > 0
        case .paused: return pausedAt != nil
        case .notPaused: return pausedAt == nil
        case .preparationDue: return now >= due(of: nextFrame) - preparation
        case .slotInterrupted:
            guard let slot else { return true }
            return stopReason != nil || stopAfterFrame || extraFrames > 0 || pausedAt != nil
                || slot.due != due(of: nextFrame) || (!firesOnCameraClocks && now < slot.due)
        case .noCameraReady: return ready.isEmpty
        case .overrunSkip: return plan.overrun == .skip
        case .overrunDefer: return plan.overrun == .defer
        case .overrunBurst: return plan.overrun == .burst
        }
    }

    // MARK: - Effects

    /// What an input changes before the row's actions are worked out.
    private mutating func apply(_ input: Input) {
        switch input {
        case .started(let now, let t0UnixMs, let resuming, let hook):
            self.t0UnixMs = t0UnixMs
            if let resuming {
                if let last = resuming.lastFrame {
                    nextFrame = last + 1
                    // A deferred or paused schedule carries on from where the last slot was due.
                    shift = resuming.lastDue - interval * (last - 1)
                }
                if let rampInterval = resuming.rampInterval { applyRampInterval(rampInterval) }
            }
            // The hook ran past the first slot's time: the slots it cost are its, not the camera's.
            if let hook, now > due(of: nextFrame) {
                slotDelay = (nextFrame, "the start hook \(hook.program) ran for \(hook.ran.compactText) and held up frame \(nextFrame)")
            }
        case .prepared(let ready, let down, let firesOnCameraClocks, let now):
            self.ready = ready
            self.down = down
            self.firesOnCameraClocks = firesOnCameraClocks
            preparedLate = slot.map { ($0.frame, now - $0.due) }
        case .pauseAsked(let now):
            pausedAt = now
        case .continueAsked(let now):
            if let pausedAt { shift += now - pausedAt }
            pausedAt = nil
        case .extraFrameAsked:
            extraFrames += 1
        case .stopAsked(let reason), .journalStalled(let reason):
            stopReason = stopReason ?? reason
        case .stopAfterFrameAsked:
            stopAfterFrame = true
        case .linkLost(let camera):
            linkLost.insert(camera)
        case .slotShot(let firstSent, let rampInterval, let resent, let now):
            guard let slot else { break }
            // Preparing asks the cameras for their state. When answers came so late (a request the
            // link lost, sent again) that the command waited longer than the slot's work took, the
            // slots it costs are theirs, not a busy camera's.
            if let preparedLate, preparedLate.frame == slot.frame, preparedLate.late > now - firstSent, slotDelay?.frame != slot.frame {
                slotDelay = (slot.frame, "the camera was slow to answer while frame \(slot.frame) was prepared, "
                    + "and its command went out \(preparedLate.late.compactText) late")
            }
            // A request of the shot itself went again (its packet or its answer was lost): the
            // time the shot took was the link's, not a busy camera's.
            if resent > 0, slotDelay?.frame != slot.frame {
                slotDelay = (slot.frame, "requests of frame \(slot.frame) were sent again after lost answers "
                    + (resent == 1 ? "(once)" : "(\(resent) times)") + ", and it ran past the next slot")
            }
            finishSlot(slot, firstSent: firstSent, rampInterval: rampInterval)
        case .woke, .extraShot:
            break
        }
    }

    private mutating func action(_ kind: Action.Kind, row: Transition, input: Input, now: Duration?) -> Action {
        let now = now ?? .zero
        switch kind {
        case .wait:
            return .wait(until: waitDeadline(row: row, input: input, now: now))
        case .prepare:
            let slot = scheduledSlot(nextFrame)
            self.slot = slot
            return .prepare(slot)
        case .fire:
            let slot = slot ?? scheduledSlot(nextFrame)
            linkLost = []
            return .fire(slot)
        case .discard:
            slot = nil
            return .discard
        case .fireExtra:
            extraFrames -= 1
            let frame = max(nextFrame - 1, 0)
            let part = (extraParts[frame] ?? partsPerSlot) + 1
            extraParts[frame] = part
            return .fireExtra(frame: frame, part: part)
        case .skip:
            return .skip(skipped(row: row, input: input, now: now))
        case .endExposure: return .endExposure
        case .interruptHook: return .interruptHook
        case .wake: return .wake
        case .end:
            if stopReason == nil, stopAfterFrame { stopReason = "stopped after frame \(nextFrame - 1) on request" }
            return .end(reason: stopReason ?? "all slots done")
        }
    }

    /// The slots a row records as skipped, moving the schedule past them.
    private mutating func skipped(row: Transition, input: Input, now: Duration) -> [SkippedSlot] {
        switch (row.from, input) {
        case (.idle, _):
            return skipMissed(upTo: now, reason: "the run was not running")
        case (.armed, _):
            guard let slot else { return [] }
            var skipped: [SkippedSlot] = []
            if !down.isEmpty {
                skipped.append(SkippedSlot(frame: slot.frame, due: slot.due, reason: "the camera was not connected at the slot", cameras: down))
            }
            if ready.isEmpty {
                nextFrame = slot.frame + 1
                if let extra = rampIntervalExtra { shift += extra }
                self.slot = nil
                skipped += skipMissed(upTo: now, reason: "the camera was not connected")
            }
            return skipped
        case (.shooting, .slotShot):
            return skipMissed(upTo: now + .milliseconds(plan.minimumGapMs), reason: overrunReason(frame: nextFrame - 1))
        default:
            return []
        }
    }

    /// Where the driver waits next, worked out after the row's other effects.
    private mutating func waitDeadline(row: Transition, input: Input, now: Duration) -> Duration? {
        if row.to == .armed {
            // Parked: wait for the deadline, unless the cameras fire on their own clocks.
            if stopReason != nil || stopAfterFrame || extraFrames > 0 { return now }
            if pausedAt != nil { return nil }
            return firesOnCameraClocks ? now : slot?.due ?? now
        }
        // Something to do at once: the next wake decides what.
        if stopReason != nil || stopAfterFrame || extraFrames > 0 || !isScheduled(frame: nextFrame, at: due(of: nextFrame)) {
            return now
        }
        if pausedAt != nil { return nil }
        let preparationTime = due(of: nextFrame) - preparation
        if case .slotShot = input, plan.overrun != .skip, plan.minimumGapMs > 0 {
            // Slots keep their times, but never closer than the gap to the previous work.
            let ready = now + .milliseconds(plan.minimumGapMs)
            if ready > due(of: nextFrame) { return ready }
        }
        return preparationTime
    }

    /// Moves the schedule past a shot slot: a ramped interval, and `defer` re-anchoring on a
    /// late first command.
    private mutating func finishSlot(_ slot: ScheduledSlot, firstSent: Duration, rampInterval: Duration?) {
        nextFrame = slot.frame + 1
        self.slot = nil
        if let rampInterval { applyRampInterval(rampInterval) }
        if plan.overrun == .defer, firstSent > slot.due { shift += firstSent - slot.due }
    }

    private mutating func applyRampInterval(_ rampInterval: Duration) {
        let extra = rampInterval - interval
        shift += extra
        rampIntervalExtra = extra
    }

    /// Every slot due before `limit` from `nextFrame` on, moving past them.
    private mutating func skipMissed(upTo limit: Duration, reason: String) -> [SkippedSlot] {
        var skipped: [SkippedSlot] = []
        while true {
            let due = due(of: nextFrame)
            guard due < limit, isScheduled(frame: nextFrame, at: due) else { return skipped }
            skipped.append(SkippedSlot(frame: nextFrame, due: due, reason: reason, cameras: cameras))
            nextFrame += 1
            if let extra = rampIntervalExtra { shift += extra }
        }
    }

    /// Why the slots after `frame` were passed over: a slow hook or slow answers before its
    /// command, a link that went down during the slot, or the camera still at work.
    private func overrunReason(frame: Int) -> String {
        if let slotDelay, slotDelay.frame == frame { return slotDelay.reason }
        if !linkLost.isEmpty {
            let whose = cameras.count > 1 ? " to " + linkLost.sorted().joined(separator: ", ") : " to the camera"
            return "the link\(whose) was lost during frame \(frame)"
        }
        return "the camera was still busy with frame \(frame)"
    }

    private func scheduledSlot(_ frame: Int) -> ScheduledSlot {
        ScheduledSlot(frame: frame, due: due(of: frame), exposure: plan.exposure)
    }

    private var partsPerSlot: Int {
        if case .bracket(let count, _) = plan.exposure { return count }
        return 1
    }
}

extension SlotScheduler.Input {
    /// The clock reading an input carries, if any.
    var now: Duration? {
        switch self {
        case .started(let now, _, _, _), .woke(let now), .prepared(_, _, _, let now), .slotShot(_, _, _, let now),
             .extraShot(let now), .pauseAsked(let now), .continueAsked(let now): now
        case .extraFrameAsked, .stopAsked, .stopAfterFrameAsked, .linkLost, .journalStalled: nil
        }
    }
}
