import Intervalometer
import Testing
import UnleashedKit
import UnleashedTestSupport

/// A video run on `clock` with a scripted camera whose first `failingStops` stops fail.
private func videoRun<C: Clock<Duration>>(_ plan: RunPlan, clock: C, failingStops: Int = 0)
    -> (Timelapse<C>, ScriptedCamera<C>, MemoryJournal) {
    let camera = ScriptedCamera(clock: clock, failingStops: failingStops)
    let journal = MemoryJournal()
    return (Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 }), camera, journal)
}

@Suite("Video timers on a test clock", .timeLimit(.minutes(2)))
struct VideoTimerTests {
    @Test("clips: recording starts on each slot's deadline and stops exactly the clip length later")
    func clipsOnSchedule() async throws {
        // The clock moves only when something waits, so every time below is exact.
        let clock = RunClock()
        let (run, camera, journal) = videoRun(RunPlan(intervalMs: 2000, stop: .frames(3), exposure: .video(milliseconds: 500)), clock: clock)
        let ending = try await clock.flowing { try await run.start(cameraName: "test") }
        #expect(ending.state == .finished)
        // Slot 1 lies 20 ms after the start.
        #expect(await camera.videoStarts == [.milliseconds(20), .milliseconds(2020), .milliseconds(4020)])
        #expect(await camera.videoStops == [.milliseconds(520), .milliseconds(2520), .milliseconds(4520)])
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == [1, 2, 3])
        #expect(frames.allSatisfy { $0.outcome == .taken && $0.error == nil })
        #expect(frames.map(\.exposure) == Array(repeating: "video 500ms, clip 500ms", count: 3))
        #expect(frames.map(\.sentMs) == [0, 2000, 4000])
        #expect(frames.map(\.completedMs) == [500, 2500, 4500])
        #expect(frames.allSatisfy { $0.latenessMicros == 0 })
    }

    @Test("an interval too short for the clip plus the gap is refused before recording, naming the minimum")
    func tooShort() async throws {
        let clock = RunClock()
        let (run, camera, _) = videoRun(RunPlan(intervalMs: 5000, stop: .frames(3), exposure: .video(milliseconds: 5000), minimumGapMs: 500),
                                        clock: clock)
        await #expect(throws: TimelapseError.intervalTooShort(minimumMs: 5500, reason: "a 5s clip plus a 500ms gap")) {
            try await run.start(cameraName: "test")
        }
        #expect(await camera.videoStarts.isEmpty)
    }

    @Test("a camera that cannot record video is refused before the run starts")
    func unsupported() async throws {
        let clock = RunClock()
        let camera = ScriptedCamera(clock: clock, capabilities: [.shoot])
        let run = Timelapse(plan: RunPlan(intervalMs: 2000, stop: .frames(1), exposure: .video(milliseconds: 500)), camera: camera,
                            journal: MemoryJournal(), clock: clock, wallClock: { 0 })
        await #expect(throws: TimelapseError.camera(.unsupported("video recording"))) { try await run.start(cameraName: "test") }
    }

    @Test("a stop in the middle of a clip stops the recording at once and journals how long it ran")
    func stopMidClip() async throws {
        let clock = RunClock()
        let (run, camera, journal) = videoRun(RunPlan(intervalMs: 120_000, stop: .frames(3), exposure: .video(milliseconds: 60_000)),
                                              clock: clock)
        let started = Task { try await run.start(cameraName: "test") }
        // Slot 1 is due 20 ms after the start: time flows (never past the stop) until clip 1
        // sleeps through its minute, and the stop comes 10 s after the start, in the middle of it.
        let stopAt = RunClock.Instant().advanced(by: .seconds(10))
        try await clock.advance(to: stopAt, whileSleepingUntil: RunClock.Instant().advanced(by: .milliseconds(60_020)))
        await run.stop(reason: "stopped by SIGTERM")
        let ending = try await clock.flowing { try await started.value }
        let frames = try journal.frames(of: ending.run.id)
        #expect(ending.reason == "stopped by SIGTERM")
        #expect(await !camera.isRecording, "the camera is not left recording")
        let starts = await camera.videoStarts, stops = await camera.videoStops
        #expect(starts.count == 1 && stops.count == 1)
        let length = try #require(stops.first) - (try #require(starts.first))
        #expect(length > .milliseconds(9900) && length < .milliseconds(10_100), "stopped at the stop, not after 60 s: \(length)")
        let frame = try #require(frames.first)
        #expect(frames.count == 1)
        #expect(frame.outcome == .taken)
        #expect(frame.exposure?.hasPrefix("video 60000ms, ended early after ") == true, "\(frame.exposure ?? "nil")")
    }

    @Test("a stop that fails is retried until it works; the frame says it took retries")
    func stopRetried() async throws {
        let clock = RunClock()
        let (run, camera, journal) = videoRun(RunPlan(intervalMs: 5000, stop: .frames(2), exposure: .video(milliseconds: 1000)),
                                              clock: clock, failingStops: 2)
        let ending = try await clock.flowing { try await run.start(cameraName: "test") }
        // Two failures 500 ms apart: the recording stops 1 s late, on the third attempt.
        #expect(await camera.videoStops.first == .milliseconds(20 + 1000 + 1000))
        #expect(await camera.stopAttempts == 4, "three for clip 1, one for clip 2")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.outcome) == [.taken, .taken])
        #expect(frames[0].error?.hasPrefix("the recording stopped on attempt 3") == true, "\(frames[0].error ?? "nil")")
        #expect(frames[1].error == nil)
        #expect(frames[1].sentMs == 5000, "the next clip keeps its slot")
    }

    @Test("a stop that never works gives up at the safety deadline: the frame fails, the run does not hang")
    func safetyDeadline() async throws {
        let clock = RunClock()
        let (run, camera, journal) = videoRun(RunPlan(intervalMs: 5000, stop: .frames(1), exposure: .video(milliseconds: 1000)),
                                              clock: clock, failingStops: .max)
        let ending = try await clock.flowing { try await run.start(cameraName: "test") }
        #expect(ending.state == .finished)
        // Attempts every 500 ms from the clip's end (1 s) to the safety deadline (1 s + 10 s).
        #expect(await camera.stopAttempts == 21)
        let frame = try #require(try journal.frames(of: ending.run.id).first)
        #expect(frame.outcome == .failed)
        #expect(frame.error?.contains("could not be stopped in 21 attempts up to the safety deadline, 11s after it started") == true,
                "\(frame.error ?? "nil")")
    }

    @Test("resuming a video run after a crash mid-clip first stops the recording the crash left running")
    func resumeStopsLeftoverRecording() async throws {
        let clock = RunClock()
        let plan = RunPlan(intervalMs: 2000, stop: .frames(4), exposure: .video(milliseconds: 500))
        let camera = ScriptedCamera(clock: clock)
        let journal = MemoryJournal()
        // The crashed run: t0 4.5 s ago, clips 1 and 2 journalled, clip 3 recording when it died.
        let crashed = try journal.begin(plan: plan, t0UnixMs: 1_700_000_000_000, camera: "test")
        for frame in 1...2 {
            try journal.append(FrameRecord(frame: frame, scheduledMs: Int64(frame - 1) * 2000, sentMs: Int64(frame - 1) * 2000,
                                           outcome: .taken, exposure: "video 500ms, clip 500ms"), to: crashed.id)
        }
        try await camera.startVideo()
        let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_004_500 })
        let ending = try await clock.flowing { try await run.resume(crashed) }
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: crashed.id)
        #expect(frames.map(\.frame) == [1, 2, 3, 4])
        #expect(frames[2].outcome == .skipped, "slot 3 passed while the run was down")
        #expect(frames[3].outcome == .taken, "clip 4 could start: \(frames[3])")
        #expect(await camera.videoStarts.count == 2, "the leftover recording, and clip 4")
        #expect(await camera.videoStops.count == 2)
        #expect(await !camera.isRecording)
    }
}
