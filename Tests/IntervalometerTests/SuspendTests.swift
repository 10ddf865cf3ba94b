import Intervalometer
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedTestSupport

@Suite("Suspending a run for a daemon restart", .timeLimit(.minutes(2)))
struct SuspendTests {
    @Test("suspend ends a clip at once and records it, leaves the run resumable, and a resume carries on the original schedule")
    func suspendAndResume() async throws {
        let plan = RunPlan(intervalMs: 1000, stop: .frames(10), exposure: .video(milliseconds: 800))
        let journal = MemoryJournal()
        let clock = RunClock()
        let camera = ScriptedCamera(clock: clock)
        let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
        let started = Task { try await run.start(cameraName: "test") }
        // Slot 1 is due 20 ms after the start, so clip 4 records from 3.02 s to 3.82 s: time
        // flows (never past the suspension) until clip 4 sleeps, and the suspension comes at 3.3 s.
        let suspendAt = RunClock.Instant().advanced(by: .milliseconds(3300))
        try await clock.advance(to: suspendAt, whileSleepingUntil: RunClock.Instant().advanced(by: .milliseconds(3820)))
        await run.suspend(reason: "the daemon is stopping")
        let ending = try await clock.flowing { try await started.value }
        let frames = try journal.frames(of: ending.run.id)
        #expect(ending.state == .running, "a suspended run is not ended")
        #expect(ending.reason == "the daemon is stopping")
        #expect(frames.map(\.frame) == [1, 2, 3, 4], "the clip under way was recorded")
        #expect(frames.last?.sentMs == 3000)
        let lastCompleted = try #require(frames.last?.completedMs)
        #expect(lastCompleted < 3800, "clip 4 was ended early, at \(lastCompleted) ms")
        #expect(await !camera.isRecording)
        let record = try #require(try journal.run(ending.run.id))
        #expect(record.state == .running)
        #expect(record.endReason == nil)

        // Back 6.5 s after t0: slots 5 to 7 passed while nothing ran.
        let later = RunClock()
        let resumed = Timelapse(plan: plan, camera: ScriptedCamera(clock: later), journal: journal, clock: later,
                                wallClock: { record.t0UnixMs + 6500 })
        let second = try await later.flowing { try await resumed.resume(record) }
        let all = try journal.frames(of: second.run.id)
        #expect(second.state == .finished)
        #expect(all.map(\.frame) == Array(1...10))
        #expect(all[4...6].allSatisfy { $0.outcome == .skipped })
        #expect(all[7...].map(\.outcome) == [.taken, .taken, .taken])
        #expect(all[7...].compactMap(\.sentMs) == [7000, 8000, 9000], "the original schedule, not one re-anchored at the resume")
        #expect(try journal.run(record.id)?.state == .finished)
    }

    @Test("a run refused before it is journalled ends its begun stream empty; a started one reports its record first")
    func begunStream() async throws {
        let clock = RunClock()
        let (refused, _, _) = scriptedRun(RunPlan(intervalMs: 0, stop: .frames(1)), clock: clock)
        await #expect(throws: TimelapseError.self) { try await refused.start(cameraName: "test") }
        var none = refused.begun.makeAsyncIterator()
        #expect(await none.next() == nil)

        let (run, _, _) = scriptedRun(RunPlan(intervalMs: 1000, stop: .frames(2)), clock: clock)
        let ending = try await clock.flowing { try await run.start(cameraName: "test") }
        var begun = run.begun.makeAsyncIterator()
        #expect(await begun.next()?.id == ending.run.id)
        #expect(await begun.next() == nil)
    }
}
