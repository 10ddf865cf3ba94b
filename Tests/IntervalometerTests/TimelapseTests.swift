import CameraKit
import Intervalometer
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// Runs a time-lapse on a clock that moves only while the run waits, until it ends.
func runDriven(_ plan: RunPlan, camera: any Camera, clock: RunClock, journal: MemoryJournal = MemoryJournal())
    async throws -> (RunEnding, [FrameRecord]) {
    let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
    return try await drive(run, clock, journal: journal) { try await run.start(cameraName: "test") }
}

/// A run on a scripted camera whose pictures take no time, journalled in memory.
func scriptedRun<C: Clock<Duration>>(_ plan: RunPlan, clock: C) -> (Timelapse<C>, ScriptedCamera<C>, MemoryJournal) {
    let camera = ScriptedCamera(clock: clock)
    let journal = MemoryJournal()
    return (Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 }), camera, journal)
}

/// A control call a test makes at a time of the clock (since it was made).
struct ClockAction: Sendable {
    var at: Duration
    var call: @Sendable () async -> Void
}

/// Runs `body` (the run's start or resume) and moves `clock` to each deadline the run waits
/// for, making each of `actions` when its time comes first; returns the ending and the frames.
/// The run is waiting whenever it announces a wait, so time moves only then: no polling, and
/// every reading the run takes is exact.
func drive(_ run: Timelapse<RunClock>, _ clock: RunClock, journal: MemoryJournal, at actions: [ClockAction] = [],
           _ body: @escaping @Sendable () async throws -> RunEnding) async throws -> (RunEnding, [FrameRecord]) {
    let task = Task { try await body() }
    var pending = actions.sorted { $0.at < $1.at }
    for await deadline in run.waits {
        if let action = pending.first, deadline.map({ RunClock.Instant().advanced(by: action.at) < $0 }) ?? true {
            pending.removeFirst()
            await clock.advance(to: RunClock.Instant().advanced(by: action.at))
            // Every control call wakes the run, which then announces its next wait or ends.
            await action.call()
        } else if let deadline {
            await clock.advance(to: deadline)
        } else {
            Issue.record("the run waits for a control call and the test makes none")
            await run.stop(reason: "the test has no call left")
        }
    }
    let ending = try await task.value
    return (ending, try journal.frames(of: ending.run.id))
}

@Suite("Time-lapse schedule on a test clock", .timeLimit(.minutes(3)))
struct TimelapseTests {
    @Test("10,000 frames at 1 s: every slot shot, each command exactly on its deadline, no drift")
    func tenThousandFrames() async throws {
        // The flowing clock jumps to each deadline the run sleeps until, so 10,000 s pass in
        // moments; time moves only when the run waits, so any drift of ours would show exactly.
        let clock = RunClock()
        let (run, camera, journal) = scriptedRun(RunPlan(intervalMs: 1000, stop: .frames(10_000)), clock: clock)
        let ending = try await clock.flowing { try await run.start(cameraName: "test") }
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...10_000))
        #expect(frames.allSatisfy { $0.outcome == .taken })
        #expect(frames.allSatisfy { $0.sentMs == $0.scheduledMs && $0.latenessMicros == 0 })
        #expect(frames.last?.sentMs == 9_999_000, "frame 10,000 went out at t0 + 9,999 s: no drift")
        let triggered = await camera.triggeredAt
        #expect(zip(triggered, triggered.dropFirst()).allSatisfy { $1 - $0 == .seconds(1) },
                "the camera saw every command exactly 1 s after the one before")
        #expect(await camera.shotCount == 10_000)
    }

    /// Interval 1 s; picture 2 takes 3.5 s (a long write), the others 100 ms.
    static func slowSecondShot(_ n: Int) -> Duration { n == 2 ? .milliseconds(3500) : .milliseconds(100) }

    /// A camera whose pictures take ``slowSecondShot(_:)``, moving the clock by it as it works.
    static func slowSecondCamera(_ clock: RunClock) -> ScriptedCamera<RunClock> {
        ScriptedCamera(clock: clock, shotTime: slowSecondShot, passTime: { await clock.advance(by: $0) })
    }

    @Test("overrun skip: the slots passed over are recorded as skipped, frame numbers stay on the clock")
    func overrunSkip() async throws {
        let clock = RunClock()
        let (_, frames) = try await runDriven(RunPlan(intervalMs: 1000, stop: .frames(6), overrun: .skip),
                                                     camera: Self.slowSecondCamera(clock), clock: clock)
        #expect(frames.map(\.frame) == [1, 2, 3, 4, 5, 6])
        #expect(frames.map(\.outcome) == [.taken, .taken, .skipped, .skipped, .skipped, .taken])
        #expect(frames.compactMap(\.sentMs) == [0, 1000, 5000])
        #expect(frames[2].error == "the camera was still busy with frame 2")
    }

    @Test("overrun defer: the late slot is shot when the camera is ready and the schedule re-anchors there")
    func overrunDefer() async throws {
        let clock = RunClock()
        let (_, frames) = try await runDriven(RunPlan(intervalMs: 1000, stop: .frames(6), overrun: .defer),
                                                     camera: Self.slowSecondCamera(clock), clock: clock)
        #expect(frames.map(\.outcome) == Array(repeating: .taken, count: 6))
        #expect(frames.compactMap(\.sentMs) == [0, 1000, 4500, 5500, 6500, 7500])
        #expect(frames[2].latenessMicros == 2_500_000, "recorded with its lateness")
        #expect(frames[3].latenessMicros == 0, "on time against the new anchor")
    }

    @Test("overrun burst: passed slots are shot one after another until caught up")
    func overrunBurst() async throws {
        let clock = RunClock()
        let (_, frames) = try await runDriven(RunPlan(intervalMs: 1000, stop: .frames(6), overrun: .burst),
                                                     camera: Self.slowSecondCamera(clock), clock: clock)
        #expect(frames.map(\.outcome) == Array(repeating: .taken, count: 6))
        #expect(frames.compactMap(\.sentMs) == [0, 1000, 4500, 4600, 4700, 5000])
        #expect(frames.compactMap(\.scheduledMs) == [0, 1000, 2000, 3000, 4000, 5000])
    }

    @Test("stop conditions: after a duration (no slot due at or after it) and at a wall-clock time")
    func stopConditions() async throws {
        let clock = RunClock()
        let (byDuration, durationFrames) = try await runDriven(
            RunPlan(intervalMs: 3000, stop: .duration(milliseconds: 10_000)), camera: ScriptedCamera(clock: clock), clock: clock)
        #expect(byDuration.state == .finished)
        #expect(durationFrames.map(\.scheduledMs) == [0, 3000, 6000, 9000])

        let wallClock = RunClock()
        // t0 is 20 ms after the start (slot 1 lies ahead by the preparation time).
        let until = 1_700_000_000_000 + 20 + 5500
        let (_, untilFrames) = try await runDriven(
            RunPlan(intervalMs: 1000, stop: .until(unixMilliseconds: Int64(until))), camera: ScriptedCamera(clock: wallClock),
            clock: wallClock)
        #expect(untilFrames.map(\.scheduledMs) == [0, 1000, 2000, 3000, 4000, 5000])
    }

    @Test("pause holds the schedule; continuing re-anchors it so the interval holds from where it stopped")
    func pauseAndContinue() async throws {
        let clock = RunClock()
        let (run, _, journal) = scriptedRun(RunPlan(intervalMs: 1000, stop: .frames(6)), clock: clock)
        // Paused 2.5 s after t0 (t0 is 20 ms after the start), continued 4 s later.
        let (ending, frames) = try await drive(run, clock, journal: journal, at: [
            ClockAction(at: .milliseconds(2520)) { await run.pauseSchedule() },
            ClockAction(at: .milliseconds(6520)) { await run.continueSchedule() },
        ]) { try await run.start(cameraName: "test") }
        #expect(ending.state == .finished)
        #expect(frames.map(\.outcome) == Array(repeating: .taken, count: 6), "nothing is skipped while paused")
        #expect(frames.compactMap(\.sentMs) == [0, 1000, 2000, 7000, 8000, 9000],
                "slot 4 moved by the 4 s paused, and the interval holds from there")
        #expect(frames.compactMap(\.scheduledMs) == [0, 1000, 2000, 7000, 8000, 9000])
        #expect(frames.compactMap(\.latenessMicros).allSatisfy { $0 == 0 })
    }

    @Test("a stop during the start delay ends the run with no frames")
    func stopDuringStartDelay() async throws {
        let clock = RunClock()
        let (run, camera, journal) = scriptedRun(RunPlan(intervalMs: 1000, stop: .frames(6)), clock: clock)
        let (ending, frames) = try await drive(run, clock, journal: journal, at: [
            ClockAction(at: .seconds(5)) { await run.stop(reason: "changed my mind") },
        ]) { try await run.start(cameraName: "test", startDelay: .seconds(60)) }
        #expect(ending.reason == "changed my mind")
        #expect(frames.isEmpty)
        #expect(await camera.shotCount == 0)
        #expect(try journal.run(ending.run.id)?.state == .finished)
    }

    @Test("a run told a wall-clock instant journals it as t0 to the millisecond and shoots slot 1 then; an instant past starts after the preparation time")
    func startAtAnInstant() async throws {
        let clock = RunClock()
        let plan = RunPlan(intervalMs: 1000, stop: .frames(2))
        let camera = ScriptedCamera(clock: clock)
        let journal = MemoryJournal()
        let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: clock.wallClock)
        let at = RunClock.startUnixMs + 45_123
        let ending = try await clock.flowing { try await run.start(cameraName: "test", atUnixMs: at) }
        #expect(try journal.run(ending.run.id)?.t0UnixMs == at)
        #expect(try journal.frames(of: ending.run.id).compactMap(\.sentMs) == [0, 1000])
        #expect(clock.wallClock() >= at + 1000, "slot 2 went out a second after the instant")

        let late = Timelapse(plan: plan, camera: ScriptedCamera(clock: clock), journal: journal, clock: clock, wallClock: clock.wallClock)
        let asked = clock.wallClock()
        let lateEnding = try await clock.flowing { try await late.start(cameraName: "test", atUnixMs: asked - 5000) }
        #expect(try journal.run(lateEnding.run.id)?.t0UnixMs == asked + 20, "the preparation time, 20 ms, after it was asked")
    }

    @Test("an interval too short for the exposure plus the gap is refused before anything is shot, naming the minimum")
    func intervalTooShort() async throws {
        let clock = RunClock()
        let camera = ScriptedCamera(clock: clock)
        let run = Timelapse(plan: RunPlan(intervalMs: 1000, stop: .frames(5), exposure: .bulb(milliseconds: 1500), minimumGapMs: 300),
                            camera: camera, journal: MemoryJournal(), clock: clock, wallClock: { 0 })
        await #expect(throws: TimelapseError.intervalTooShort(minimumMs: 1800, reason: "a 1s500ms bulb exposure plus a 300ms gap")) {
            try await run.start(cameraName: "test")
        }
        #expect(await camera.shotCount == 0)
    }

    @Test("a 30 s link loss mid-run: the slots it covers are recorded as missed, and the schedule carries on")
    func linkLossMidRun() async throws {
        let rig = ConnectionRig(recordsStates: false)
        let camera = try await rig.camera(timing: ModuleCameraTiming(reconnectWait: .seconds(5)))
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 2000, stop: .frames(40)), camera: camera, journal: journal,
                            clock: rig.clock, wallClock: { 1_700_000_000_000 })
        let (radio, clock) = (rig.radio, rig.clock)
        Task {
            try await clock.sleep(for: .milliseconds(20_500))
            radio.loseLink(for: .seconds(30))
        }
        let ending = try await drive(rig, limit: .seconds(200)) { try await run.start(cameraName: "sim") }
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...40), "every slot recorded once, in order")
        let missed = frames.filter { $0.outcome != .taken }.map(\.frame)
        #expect(!missed.isEmpty)
        #expect(missed.allSatisfy { (11...28).contains($0) }, "only slots inside the outage and the reconnection: \(missed)")
        #expect(frames.filter { $0.frame > 28 }.allSatisfy { $0.outcome == .taken }, "the schedule continues")
        let taken = frames.filter { $0.outcome == .taken }
        #expect(taken.allSatisfy { $0.scheduledMs == Int64($0.frame - 1) * 2000 }, "on the original schedule")
        // Lateness here is on the test clock, which moves on while the machine is busy: each frame
        // went out within its own slot.
        #expect(taken.allSatisfy { ($0.latenessMicros ?? .max) < 2_000_000 }, "taken frames stay in their slots")
        #expect(await rig.module.camera.shotCounter == UInt32(taken.count))
        await camera.close()
    }
}
