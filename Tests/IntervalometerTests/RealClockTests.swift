import Intervalometer
import Testing

@Suite struct RealClockTests {
    @Test("a run on the real clock waits on its own thread: every slot shot, none before its deadline")
    func aRunOnTheRealClockIsNeverEarly() async throws {
        // Burst: on a loaded machine a late slot is still shot, so every slot can be checked.
        let plan = RunPlan(intervalMs: 40, stop: .frames(15), overrun: .burst)
        let (run, camera, journal) = scriptedRun(plan, clock: ContinuousClock())
        let ending = try await run.start(cameraName: "test")
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...15))
        #expect(frames.allSatisfy { $0.outcome == .taken })
        #expect(frames.allSatisfy { ($0.latenessMicros ?? -1) >= 0 }, "a slot went out before its deadline")
        #expect(await camera.shotCount == 15)
    }
}
