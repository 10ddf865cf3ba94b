import CommandCore
import Foundation
import Intervalometer
import Testing

@Suite("unleashed video record and clips on the built binary (demo, real clock)", .serialized, .timeLimit(.minutes(2)))
struct VideoCommandTests {
    @Test("video clips: one clip per slot on the original schedule, each journalled with its length, the camera left idle")
    func clips() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let result = try await fixture.run(arguments: ["--demo", "--json", "video", "clips", "300ms", "--every", "700ms", "--frames", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let end = try #require(result.stdout.split(separator: "\n").last.flatMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }?["run"] as? [String: Any])
        let runID = try #require(end["id"] as? Int)
        let frames = try fixture.frames(of: Int64(runID))
        #expect(frames.map(\.frame) == [1, 2, 3])
        #expect(frames.map(\.scheduledMs) == [0, 700, 1400])
        #expect(frames.allSatisfy { $0.outcome == .taken }, "\(frames)")
        // The camera reports each clip's length, timed on its own clock from the start command to
        // the stop command (how long, on a test clock: VideoTimerTests).
        let clips = frames.compactMap { $0.exposure.flatMap(clipMilliseconds) }
        #expect(clips.count == 3, "\(frames.map(\.exposure))")
        #expect(frames.allSatisfy { ($0.sentMs ?? .max) >= $0.scheduledMs && ($0.completedMs ?? 0) > ($0.sentMs ?? .max) }, "\(frames)")
        #expect(try fixture.record(of: Int64(runID))?.plan.exposure == .video(milliseconds: 300))
        #expect(try await fixture.run(arguments: ["--demo", "video", "stop"]).status == 65, "no recording left running")
    }

    @Test("video record with --start-in is journalled to start that far on and Ctrl-C while it waits records nothing; Ctrl-C mid-clip stops the recording and keeps the clip (130)")
    func recordLaterAndInterrupt() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let began = Int64(Date().timeIntervalSince1970 * 1000)
        let later = try fixture.launch(["--demo", "--json", "video", "record", "500ms", "--start-in", "1h"])
        try await fixture.waitForRuns(1)
        let run = try #require(try SQLiteJournal(path: fixture.journalPath).runs().first)
        // Its schedule, journalled before it waits: an hour after the command began.
        #expect(run.t0UnixMs >= began + 3_600_000, "t0 \(run.t0UnixMs), began \(began)")
        later.signal(SIGINT)
        #expect(try await later.exitStatus() == 130, "\(later.errors)")
        #expect(try fixture.frames(of: run.id).isEmpty, "nothing recorded before its start")

        let long = try fixture.launch(["--demo", "--json", "video", "record", "30s"])
        // Mid-clip: the recording is under way once its run is journalled.
        try await fixture.waitForRuns(2)
        // Real time: nothing is printed until the clip ends, so nothing says the recording has
        // begun; 500 ms into a 30 s clip.
        try await Task.sleep(for: .milliseconds(500))
        long.signal(SIGINT)
        #expect(try await long.exitStatus() == 130)
        let end = try #require(long.objects.last?["run"] as? [String: Any])
        #expect(end["reason"] as? String == "stopped by Ctrl-C")
        let runID = try #require(end["id"] as? Int)
        let frame = try #require(try fixture.frames(of: Int64(runID)).first)
        #expect(frame.outcome == .taken)
        #expect(frame.exposure?.hasPrefix("video 30000ms, ended early after ") == true, "\(frame.exposure ?? "nil")")
        #expect(try await fixture.run(arguments: ["--demo", "video", "stop"]).status == 65, "the recording was stopped")
    }

    @Test("SIGUSR1 during a clip takes a still picture once that clip has been stopped, before the next one; the help says so")
    func extraPictureBetweenClips() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let run = try fixture.launch(["--demo", "--json", "video", "clips", "3s", "--every", "6s", "--frames", "2"])
        // The run is journalled just before its first clip starts, which then lasts 3 s.
        try await fixture.waitForRuns(1)
        // Real time: nothing is printed until the clip ends, so nothing says the recording has
        // begun; 500 ms into a 3 s clip.
        try await Task.sleep(for: .milliseconds(500))
        run.signal(SIGUSR1)
        #expect(try await run.exitStatus() == 0, "\(run.errors)")
        let runID = try #require(try SQLiteJournal(path: fixture.journalPath).runs().first?.id)
        let frames = try fixture.frames(of: runID)
        let clip = try #require(frames.first { $0.frame == 1 && $0.part == 1 })
        let extra = try #require(frames.first { $0.exposure == "extra" }, "\(frames)")
        #expect(extra.frame == 1 && extra.part == 2 && extra.outcome == .taken)
        #expect((extra.sentMs ?? 0) >= (clip.completedMs ?? .max), "not while the clip was recording: \(frames)")
        let nextClip = try #require(frames.first { $0.frame == 2 && $0.part == 1 }, "\(frames)")
        #expect((extra.sentMs ?? .max) < (nextClip.sentMs ?? 0), "before the next clip: \(frames)")
        #expect(frames.filter { $0.part == 1 }.count == 2, "both clips recorded")

        let clipsHelp = try await fixture.run(arguments: ["video", "clips", "--help"])
        #expect(clipsHelp.stdout.words.contains("once the clip being recorded has been stopped"), "\(clipsHelp.stdout)")
        let recordHelp = try await fixture.run(arguments: ["video", "record", "--help"])
        #expect(recordHelp.stdout.contains("SIGUSR1"), "\(recordHelp.stdout)")
    }

    @Test("clips that cannot fit their interval, and bad lengths, are refused before recording (64)",
          arguments: [
              (["video", "clips", "1s", "--every", "1s", "--gap", "200ms", "--frames", "3"], "each slot needs at least 1s200ms"),
              (["video", "record", "later"], "is not a duration"),
          ])
    func refused(arguments: [String], message: String) async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let result = try await fixture.run(arguments: ["--demo"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(try await fixture.run(arguments: ["--demo", "video", "stop"]).status == 65, "nothing was recorded")
    }
}

/// The clip length the camera reported, from a journalled exposure like `video 300ms, clip 301ms`.
func clipMilliseconds(_ exposure: String) -> Int? {
    guard let range = exposure.range(of: ", clip "), exposure.hasSuffix("ms") else { return nil }
    return Int(exposure[range.upperBound...].dropLast(2))
}
