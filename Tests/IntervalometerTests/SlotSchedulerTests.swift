@testable import Intervalometer
import Testing
import UnleashedKit

private typealias Scheduler = SlotScheduler

/// A row of the table, named for the test report.
struct SchedulerRow: CustomTestStringConvertible, Sendable {
    let transition: SlotScheduler.Transition
    var testDescription: String { "\(transition.from) on \(transition.on) [\(transition.when)] → \(transition.to)" }
}

@Suite("Slot scheduler: the transition table")
struct SlotSchedulerTableTests {
    static let cameras = ["left", "right"]

    static func plan(_ overrun: OverrunPolicy = .skip, frames: Int = 10) -> RunPlan {
        RunPlan(intervalMs: 1000, stop: .frames(frames), overrun: overrun)
    }

    /// A scheduler in the row's phase where the row's guard holds and no earlier row's does,
    /// with slot 3 (due at 2 s) in hand; and the input the row is for.
    static func example(_ row: SlotScheduler.Transition) -> (SlotScheduler, SlotScheduler.Input) {
        var overrun = OverrunPolicy.skip
        if row.when == .overrunDefer { overrun = .defer }
        if row.when == .overrunBurst { overrun = .burst }
        let pausedAt: Duration? = row.when == .paused ? .milliseconds(1500) : nil
        var machine = Scheduler(plan: plan(overrun, frames: row.when == .noSlotLeft ? 2 : 10), cameras: cameras, phase: row.from,
                                slot: 3, pausedAt: pausedAt, extraFrames: row.when == .extraPending ? 1 : 0,
                                stopReason: row.when == .stopPending ? "asked" : nil,
                                stopAfterFrame: row.when == .stopAfterFramePending,
                                ready: row.when == .noCameraReady ? [] : ["left"])
        let input: SlotScheduler.Input
        switch row.on {
        case .started:
            machine = Scheduler(plan: plan(), cameras: cameras, phase: row.from)
            let resuming = row.when == .resuming ? SlotScheduler.Resumption(lastFrame: 2, lastDue: .seconds(1)) : nil
            input = .started(now: .milliseconds(3500), t0UnixMs: 0, resuming: resuming, startHookRan: nil)
        case .woke:
            switch (row.from, row.when) {
            case (.waiting, .preparationDue): input = .woke(now: .milliseconds(1950))
            case (.waiting, _): input = .woke(now: .milliseconds(1000))
            case (.armed, .slotInterrupted): input = .woke(now: .milliseconds(1990))
            default: input = .woke(now: .milliseconds(2000))
            }
        case .prepared: input = .prepared(ready: ["left"], down: ["right"], firesOnCameraClocks: false, now: .milliseconds(1950))
        case .slotShot: input = .slotShot(firstSent: .milliseconds(2500), rampInterval: nil, now: .milliseconds(5500))
        case .extraShot: input = .extraShot(now: .milliseconds(1200))
        case .pauseAsked: input = .pauseAsked(now: .milliseconds(1200))
        case .continueAsked:
            machine = Scheduler(plan: plan(), cameras: cameras, phase: row.from, slot: 3, pausedAt: .milliseconds(1200))
            input = .continueAsked(now: .milliseconds(1700))
        case .extraFrameAsked: input = .extraFrameAsked
        case .stopAsked: input = .stopAsked(reason: "asked")
        case .stopAfterFrameAsked: input = .stopAfterFrameAsked
        case .linkLost: input = .linkLost(camera: "right")
        case .journalStalled: input = .journalStalled(reason: "the journal is stuck")
        }
        return (machine, input)
    }

    @Test("every row of the transition table does what it says", arguments: SlotScheduler.transitions.map(SchedulerRow.init))
    func row(_ named: SchedulerRow) {
        let row = named.transition
        var (machine, input) = Self.example(row)
        #expect(machine.transition(for: input) == row, "the example picks this row")
        let before = machine
        let actions = machine.handle(input)
        #expect(machine.phase == row.to)
        #expect(actions.map(\.kind) == row.actions)
        checkEffect(of: row, input: input, before: before, after: machine, actions: actions)
    }

    /// What each row does beyond its phase and action kinds.
    private func checkEffect(of row: SlotScheduler.Transition, input: SlotScheduler.Input, before: SlotScheduler,
                             after: SlotScheduler, actions: [SlotScheduler.Action]) {
        let skipped = actions.flatMap { action -> [SkippedSlot] in if case .skip(let slots) = action { slots } else { [] } }
        let waits = actions.compactMap { action -> Duration?? in if case .wait(let until) = action { until } else { nil } }
        switch (row.from, row.on, row.when) {
        case (.idle, .started, .resuming):
            #expect(skipped.map(\.frame) == [3, 4], "slots 3 and 4 passed while nothing ran")
            #expect(skipped.allSatisfy { $0.reason == "the run was not running" && $0.cameras == Self.cameras })
            #expect(waits == [.milliseconds(3950)], "then slot 5's preparation")
        case (.idle, .started, _):
            #expect(waits == [.milliseconds(-50)], "slot 1's preparation time, passed already: no wait")
        case (.waiting, .woke, .stopPending):
            #expect(actions.last == .end(reason: "asked"))
        case (.waiting, .woke, .stopAfterFramePending):
            #expect(actions.last == .end(reason: "stopped after frame 2 on request"))
        case (.waiting, .woke, .noSlotLeft):
            #expect(actions.last == .end(reason: "all slots done"))
        case (.waiting, .woke, .extraPending):
            #expect(actions == [.fireExtra(frame: 2, part: 2)], "an extra picture joins the last frame as its next part")
            #expect(after.extraFrames == 0)
        case (.waiting, .woke, .paused):
            #expect(waits == [nil], "paused: only a control call ends the wait")
        case (.waiting, .woke, .preparationDue):
            #expect(actions == [.prepare(ScheduledSlot(frame: 3, due: .seconds(2), exposure: .camera))])
        case (.waiting, .woke, _):
            #expect(waits == [.milliseconds(1950)], "woken early: wait for the preparation time again")
        case (.preparing, .prepared, _):
            #expect(waits == [.seconds(2)], "parked until the deadline")
        case (.armed, .woke, .slotInterrupted):
            #expect(actions.first == .discard)
            #expect(waits == [.milliseconds(1950)])
        case (.armed, .woke, .noCameraReady):
            #expect(skipped == [SkippedSlot(frame: 3, due: .seconds(2), reason: "the camera was not connected at the slot", cameras: Self.cameras)])
            #expect(after.nextFrame == 4)
        case (.armed, .woke, _):
            #expect(actions.last == .fire(ScheduledSlot(frame: 3, due: .seconds(2), exposure: .camera)))
            #expect(skipped == [SkippedSlot(frame: 3, due: .seconds(2), reason: "the camera was not connected at the slot", cameras: ["right"])])
        case (.shooting, .slotShot, .overrunSkip):
            #expect(skipped.map(\.frame) == [4, 5, 6])
            #expect(skipped.allSatisfy { $0.reason == "the camera was still busy with frame 3" })
            #expect(after.nextFrame == 7 && after.shift == .zero)
            #expect(waits == [.milliseconds(5950)])
        case (.shooting, .slotShot, .overrunDefer):
            #expect(after.shift == .milliseconds(500), "re-anchored on the late first command")
            #expect(after.due(of: 4) == .milliseconds(3500))
        case (.shooting, .slotShot, .overrunBurst):
            #expect(after.shift == .zero && after.nextFrame == 4)
            #expect(waits == [.milliseconds(2950)], "already passed: slot 4 is shot at once")
        case (.extra, .extraShot, _):
            #expect(waits == [.milliseconds(1950)])
        case (_, .stopAsked, _):
            #expect(after.stopReason == "asked")
        case (_, .journalStalled, _):
            #expect(after.stopReason == "the journal is stuck")
        case (_, .stopAfterFrameAsked, _):
            #expect(after.stopAfterFrame)
        case (_, .extraFrameAsked, _):
            #expect(after.extraFrames == before.extraFrames + 1)
        case (_, .pauseAsked, _):
            #expect(after.pausedAt == .milliseconds(1200))
        case (_, .continueAsked, _):
            #expect(after.pausedAt == nil && after.shift == .milliseconds(500), "the schedule moves by the time paused")
        case (_, .linkLost, _):
            #expect(actions.isEmpty)
        default:
            Issue.record("no effect check for \(row)")
        }
    }

    @Test("an input no row names for the phase changes nothing and asks for nothing")
    func unlisted() {
        let listed = Set(SlotScheduler.transitions.map { "\($0.from)/\($0.on)" })
        var checked = 0
        for phase in SlotPhase.allCases {
            for kind in SlotScheduler.Input.Kind.allCases where !listed.contains("\(phase)/\(kind)") {
                let row = SlotScheduler.Transition(from: phase, on: kind, when: .always, to: phase, actions: [])
                var (machine, input) = Self.example(row)
                let before = (machine.phase, machine.nextFrame, machine.shift, machine.stopReason, machine.extraFrames, machine.pausedAt)
                #expect(machine.handle(input).isEmpty, "\(phase) on \(kind)")
                let after = (machine.phase, machine.nextFrame, machine.shift, machine.stopReason, machine.extraFrames, machine.pausedAt)
                #expect(before == after, "\(phase) on \(kind)")
                checked += 1
            }
        }
        #expect(checked > 30)
    }

    @Test("the rows of a phase and input have distinct guards, and none follows an `always` row")
    func deterministic() {
        for phase in SlotPhase.allCases {
            for kind in SlotScheduler.Input.Kind.allCases {
                let rows = SlotScheduler.transitions.filter { $0.from == phase && $0.on == kind }
                #expect(Set(rows.map(\.when)).count == rows.count, "\(phase) on \(kind): one row per guard")
                #expect(rows.dropLast().allSatisfy { $0.when != .always }, "\(phase) on \(kind): nothing after an `always` row")
            }
        }
    }

    @Test("every phase is reached from idle, and every live phase can end")
    func reachable() {
        var reached: Set<SlotPhase> = [.idle]
        var frontier: [SlotPhase] = [.idle]
        while let phase = frontier.popLast() {
            for row in SlotScheduler.transitions where row.from == phase && !reached.contains(row.to) {
                reached.insert(row.to)
                frontier.append(row.to)
            }
        }
        #expect(reached == Set(SlotPhase.allCases))
        #expect(!SlotScheduler.transitions.contains { $0.from == .ended }, "an ended run takes no input")
    }
}

@Suite("Slot scheduler: properties of the schedule")
struct SlotSchedulerPropertyTests {
    /// What a simulated run saw: every slot fired or skipped, and the waits it was asked for.
    struct Trace {
        var fired: [ScheduledSlot] = []
        var skipped: [SkippedSlot] = []
        var ending: String?
    }

    /// Drives a scheduler as a driver would, with shots that take a random time (some longer
    /// than the interval), cameras sometimes down, and random control calls; time moves only
    /// when the scheduler waits or a shot takes time.
    static func simulate(_ plan: RunPlan, seed: UInt64, cameras: [String] = ["a"], pauses: Bool = false,
                         extras: Bool = false) -> Trace {
        var random = SplitMix64(seed: seed)
        var machine = SlotScheduler(plan: plan, cameras: cameras)
        var now = Duration.zero
        var trace = Trace()
        var actions = machine.handle(.started(now: now, t0UnixMs: 1_700_000_000_000, resuming: nil, startHookRan: nil))
        var steps = 0
        while steps < 100_000 {
            steps += 1
            guard let last = actions.last else { Issue.record("no next action in \(machine.phase)"); return trace }
            for case .skip(let slots) in actions { trace.skipped += slots }
            switch last {
            case .end(let reason):
                trace.ending = reason
                return trace
            case .wait(let until):
                if let until, until > now { now = until }
                if until == nil {
                    // Paused: some time passes, then the run is continued.
                    now += .milliseconds(Int64(random.next() % 5000))
                    _ = machine.handle(.continueAsked(now: now))
                }
                if pauses, random.next() % 20 == 0 { _ = machine.handle(.pauseAsked(now: now)) }
                if extras, random.next() % 25 == 0 { _ = machine.handle(.extraFrameAsked) }
                actions = machine.handle(.woke(now: now))
            case .prepare:
                let down = cameras.filter { _ in random.next() % 10 == 0 }
                actions = machine.handle(.prepared(ready: cameras.filter { !down.contains($0) }, down: down,
                                                   firesOnCameraClocks: false, now: now))
            case .fire(let slot):
                trace.fired.append(slot)
                if machine.pausedAt == nil, machine.stopReason == nil, !machine.stopAfterFrame {
                    let after = UpcomingSlot(frame: slot.frame + 1, due: machine.due(of: slot.frame + 1))
                    let expected = machine.isScheduled(frame: after.frame, at: after.due) ? after : nil
                    #expect(machine.upcoming == expected, "seed \(seed): once a slot is fired, the slot after it is the one to come")
                }
                let sent = max(now, slot.due)
                let took = random.next() % 4 == 0 ? Int64(random.next() % 3500) : Int64(random.next() % 300)
                now = sent + .milliseconds(took)
                actions = machine.handle(.slotShot(firstSent: sent, rampInterval: nil, now: now))
            case .fireExtra:
                now += .milliseconds(100)
                actions = machine.handle(.extraShot(now: now))
            default:
                Issue.record("unexpected last action \(last)")
                return trace
            }
        }
        Issue.record("the run did not end")
        return trace
    }

    @Test("skip and burst: every deadline is t0 + (n - 1) × interval, whatever the shots take", arguments: [OverrunPolicy.skip, .burst])
    func deadlinesOnTheGrid(_ overrun: OverrunPolicy) {
        for seed in 0..<50 as Range<UInt64> {
            let trace = Self.simulate(RunPlan(intervalMs: 1000, stop: .frames(200), overrun: overrun), seed: seed)
            #expect(trace.fired.allSatisfy { $0.due == .milliseconds(1000) * ($0.frame - 1) }, "seed \(seed)")
            #expect(trace.skipped.allSatisfy { $0.due == .milliseconds(1000) * ($0.frame - 1) }, "seed \(seed)")
            if overrun == .burst { #expect(trace.skipped.allSatisfy { $0.reason.contains("not connected") }, "burst skips nothing it could shoot") }
        }
    }

    @Test("no slot is fired twice, and every slot is either fired or named as skipped, in order",
          arguments: [OverrunPolicy.skip, .defer, .burst])
    func everySlotOnce(_ overrun: OverrunPolicy) {
        for seed in 0..<50 as Range<UInt64> {
            let trace = Self.simulate(RunPlan(intervalMs: 1000, stop: .frames(120), overrun: overrun), seed: seed,
                                      cameras: ["a", "b"], pauses: true, extras: true)
            let fired = trace.fired.map(\.frame)
            #expect(Set(fired).count == fired.count, "seed \(seed): a slot fired twice")
            // A slot fired with a camera down also names that camera as skipped, and only that one.
            for skip in trace.skipped where fired.contains(skip.frame) { #expect(skip.cameras.count == 1, "seed \(seed)") }
            let all = Set(fired).union(trace.skipped.map(\.frame))
            #expect(all == Set(1...120), "seed \(seed): every slot accounted for")
            #expect(fired == fired.sorted(), "seed \(seed): slots in order")
            #expect(trace.skipped.allSatisfy { !$0.reason.isEmpty })
            #expect(trace.ending == "all slots done")
        }
    }

    /// Feeds the scheduler as a driver would, from `actions`, until it fires a slot.
    static func fireNext(_ machine: inout SlotScheduler, _ actions: [SlotScheduler.Action], now: inout Duration) -> ScheduledSlot? {
        var actions = actions
        for _ in 0..<20 {
            switch actions.last {
            case .wait(let until?):
                now = max(now, until)
                actions = machine.handle(.woke(now: now))
            case .wake: actions = machine.handle(.woke(now: now))
            case .prepare: actions = machine.handle(.prepared(ready: ["a"], down: [], firesOnCameraClocks: false, now: now))
            case .fire(let slot): return slot
            default: return nil
            }
        }
        return nil
    }

    @Test("the upcoming slot is the next one to fire, the one after once an exposure starts: moved by a pause and by defer, none while paused, once stopping or when none is left")
    func upcomingSlot() {
        var machine = SlotScheduler(plan: RunPlan(intervalMs: 1000, stop: .frames(3), overrun: .defer), cameras: ["a"])
        #expect(machine.upcoming == nil, "not started")
        var now = Duration.zero
        var actions = machine.handle(.started(now: now, t0UnixMs: 0, resuming: nil, startHookRan: nil))
        #expect(machine.upcoming == UpcomingSlot(frame: 1, due: .zero))
        #expect(Self.fireNext(&machine, actions, now: &now)?.frame == 1)
        #expect(machine.upcoming == UpcomingSlot(frame: 2, due: .seconds(1)), "once slot 1's exposure starts, slot 2 is the one to come")
        now = .milliseconds(100)
        actions = machine.handle(.slotShot(firstSent: .zero, rampInterval: nil, now: now))
        #expect(machine.upcoming == UpcomingSlot(frame: 2, due: .seconds(1)))

        now = .milliseconds(500)
        _ = machine.handle(.pauseAsked(now: now))
        #expect(machine.upcoming == nil, "paused: no slot is coming")
        #expect(machine.handle(.woke(now: now)) == [.wait(until: nil)])
        now = .milliseconds(1700)
        actions = machine.handle(.continueAsked(now: now))
        #expect(machine.upcoming == UpcomingSlot(frame: 2, due: .milliseconds(2200)), "moved by the 1.2 s paused")

        let second = Self.fireNext(&machine, actions, now: &now)
        #expect(second == ScheduledSlot(frame: 2, due: .milliseconds(2200), exposure: .camera))
        #expect(machine.upcoming == UpcomingSlot(frame: 3, due: .milliseconds(3200)), "while slot 2 is shot")
        now = .milliseconds(2800)
        actions = machine.handle(.slotShot(firstSent: .milliseconds(2700), rampInterval: nil, now: now))
        #expect(machine.upcoming == UpcomingSlot(frame: 3, due: .milliseconds(3700)), "defer: moved by the 0.5 s the command went out late")

        #expect(Self.fireNext(&machine, actions, now: &now)?.frame == 3)
        #expect(machine.upcoming == nil, "the last slot under way: none to come")
        _ = machine.handle(.slotShot(firstSent: now, rampInterval: nil, now: now + .milliseconds(100)))
        #expect(machine.upcoming == nil, "no slot left")

        var stopping = SlotScheduler(plan: RunPlan(intervalMs: 1000, stop: .never), cameras: ["a"])
        _ = stopping.handle(.started(now: .zero, t0UnixMs: 0, resuming: nil, startHookRan: nil))
        _ = stopping.handle(.stopAsked(reason: "asked"))
        #expect(stopping.upcoming == nil, "a stop is asked for")
    }

    @Test("defer: each slot is due an interval after the one before went out, or later")
    func deferReanchors() {
        for seed in 0..<50 as Range<UInt64> {
            let trace = Self.simulate(RunPlan(intervalMs: 1000, stop: .frames(100), overrun: .defer), seed: seed)
            for (earlier, later) in zip(trace.fired, trace.fired.dropFirst()) where later.frame == earlier.frame + 1 {
                #expect(later.due >= earlier.due + .seconds(1), "seed \(seed)")
            }
        }
    }

    @Test("a duration stop leaves no slot due at or after it; an until stop none at or after its wall-clock time")
    func stopConditions() {
        let byDuration = Self.simulate(RunPlan(intervalMs: 3000, stop: .duration(milliseconds: 10_000)), seed: 1)
        #expect((byDuration.fired.map(\.due) + byDuration.skipped.map(\.due)).allSatisfy { $0 < .seconds(10) })
        #expect(Set(byDuration.fired.map(\.frame) + byDuration.skipped.map(\.frame)) == [1, 2, 3, 4])
        let byTime = Self.simulate(RunPlan(intervalMs: 1000, stop: .until(unixMilliseconds: 1_700_000_005_500)), seed: 1)
        #expect(Set(byTime.fired.map(\.frame) + byTime.skipped.map(\.frame)) == Set(1...6))
    }

    /// The slots skipped after slot 3 (due at 2 s, interval 1 s), prepared at `prepared` and shot
    /// from `sent` until `done`.
    static func skippedAfterSlot3(prepared: Duration, sent: Duration, done: Duration, resent: Int = 0) -> [SkippedSlot] {
        var machine = Scheduler(plan: RunPlan(intervalMs: 1000, stop: .frames(10)), cameras: ["only"], phase: .preparing, slot: 3)
        _ = machine.handle(.prepared(ready: ["only"], down: [], firesOnCameraClocks: false, now: prepared))
        _ = machine.handle(.woke(now: max(prepared, .seconds(2))))
        return machine.handle(.slotShot(firstSent: sent, rampInterval: nil, resent: resent, now: done)).flatMap { action -> [SkippedSlot] in
            if case .skip(let slots) = action { slots } else { [] }
        }
    }

    @Test("slots lost to answers that came late while a slot was prepared say so, not that the camera was busy")
    func slowAnswersBeforeTheCommand() {
        // Ready 950 ms after its deadline (a lost request sent again after 1 s), shot in 60 ms.
        let late = Self.skippedAfterSlot3(prepared: .milliseconds(2950), sent: .milliseconds(2950), done: .milliseconds(3010))
        #expect(late.map(\.frame) == [4])
        #expect(late.map(\.reason) == ["the camera was slow to answer while frame 3 was prepared, and its command went out 950ms late"])
        // Ready on time, then a long shot: the camera was busy.
        let busy = Self.skippedAfterSlot3(prepared: .milliseconds(1960), sent: .milliseconds(2000), done: .milliseconds(3500))
        #expect(busy.map(\.reason) == ["the camera was still busy with frame 3"])
        // A little late, then a longer shot: the shot is the bigger part, so the camera was busy.
        let both = Self.skippedAfterSlot3(prepared: .milliseconds(2100), sent: .milliseconds(2100), done: .milliseconds(3400))
        #expect(both.map(\.reason) == ["the camera was still busy with frame 3"])
    }

    @Test("slots lost to a shot whose own requests were sent again say so, not that the camera was busy")
    func resentDuringTheShot() {
        // Ready on time; the trigger's answer was lost, and the copy's answer came after the next deadline.
        let once = Self.skippedAfterSlot3(prepared: .milliseconds(1960), sent: .milliseconds(2000), done: .milliseconds(3050), resent: 1)
        #expect(once.map(\.frame) == [4])
        #expect(once.map(\.reason) == ["requests of frame 3 were sent again after lost answers (once), and it ran past the next slot"])
        let twice = Self.skippedAfterSlot3(prepared: .milliseconds(1960), sent: .milliseconds(2000), done: .milliseconds(3050), resent: 2)
        #expect(twice.map(\.reason) == ["requests of frame 3 were sent again after lost answers (2 times), and it ran past the next slot"])
        // Late answers while preparing were the bigger part: that reason stands.
        let prepared = Self.skippedAfterSlot3(prepared: .milliseconds(2950), sent: .milliseconds(2950), done: .milliseconds(3010), resent: 1)
        #expect(prepared.map(\.reason) == ["the camera was slow to answer while frame 3 was prepared, and its command went out 950ms late"])
    }
}
