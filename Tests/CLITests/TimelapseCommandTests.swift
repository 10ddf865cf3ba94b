import Foundation
import Intervalometer
import Synchronization
import Testing
import UnleashedTestSupport

/// A demo camera and a journal of their own for one test.
struct RunFixture {
    let cli = CLI()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-timelapse-\(UUID())")
    var journalPath: String { directory.appendingPathComponent("journal.sqlite").path }
    var environment: [String: String] { ["UNLEASHED_JOURNAL": journalPath] }

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Starts `unleashed --demo timelapse ARGUMENTS` in the background.
    func start(_ arguments: String...) throws -> BackgroundRun {
        try launch(["--demo", "timelapse"] + arguments)
    }

    /// Starts `unleashed ARGUMENTS` in the background.
    func launch(_ arguments: [String]) throws -> BackgroundRun {
        var env = ProcessInfo.processInfo.environment
        env["UNLEASHED_DEMO_STATE"] = cli.stateFile.path
        env.merge(environment) { _, new in new }
        return try BackgroundRun(CLI.binary, arguments, environment: env)
    }

    func run(_ arguments: String...) async throws -> CLI.Result {
        try await cli.run(arguments: arguments, environment: environment)
    }

    /// The journal's frames of `run`, read through the library from the file the binary wrote.
    func frames(of run: Int64) throws -> [FrameRecord] {
        try SQLiteJournal(path: journalPath).frames(of: run)
    }

    /// Waits until the journal holds `count` runs: a run is journalled just before its first
    /// slot, so a command started in the background is then under way, however slowly it started.
    func waitForRuns(_ count: Int, timeout: Duration = .seconds(20)) async throws {
        // The journal is the command's file, written by another process.
        try await poll("run \(count) in the journal", timeout: timeout, every: .milliseconds(50)) {
            ((try? SQLiteJournal(path: journalPath).runs().count) ?? 0) >= count
        }
    }

    func record(of run: Int64) throws -> RunRecord? {
        try SQLiteJournal(path: journalPath).run(run)
    }

    /// A hook that kills the run (its parent) with SIGKILL once frame `frame` is taken, the first
    /// time only, so that a resumed run goes on.
    func crashHook(afterFrame frame: Int) throws -> String {
        let script = directory.appendingPathComponent("crash.sh").path
        try """
            #!/bin/sh
            [ "$ACTION" = frame ] && [ "$UNLEASHED_FRAME" = \(frame) ] && [ ! -e "$0.done" ] && touch "$0.done" && kill -9 $PPID
            exit 0
            """.write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        return script
    }

    func cleanUp() {
        cli.cleanUp()
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("unleashed timelapse on the built binary (demo, real clock)", .serialized, .timeLimit(.minutes(3)))
struct TimelapseCommandTests {
    @Test("kill -9 mid-run, then --resume: every reported frame is in the journal, the schedule is the original one, no number twice")
    func killAndResume() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let interval: Int64 = 500
        let frameCount = 40
        // The run kills itself from its own hook after frame 5, so the crash comes at the same
        // point however busy the machine running the tests is; 20 s of slots leave the resumed
        // run some to shoot even when this test is slow to get a CPU.
        let script = try fixture.crashHook(afterFrame: 5)
        let first = try fixture.start("--interval", "500ms", "--frames", "\(frameCount)", "--hook", script, "--json")
        #expect(try await first.exitStatus() == 128 + SIGKILL)
        // Frame 5's hook runs as its record is written, beside the printing of its line, so the
        // kill may come before that line is out.
        #expect(first.frames.count >= 4, "\(first.output)")
        let printed = first.frames
        let runID = try #require(printed.first?["run"] as? Int)

        let journalled = try fixture.frames(of: Int64(runID))
        let journalledNumbers = Set(journalled.map(\.frame))
        for frame in printed {
            #expect(journalledNumbers.contains(try #require(frame["frame"] as? Int)), "a reported frame is in the journal")
        }
        #expect(try fixture.record(of: Int64(runID))?.state == .running, "killed: still resumable")
        let lastBeforeKill = try #require(journalled.map(\.frame).max())

        // Real time: stay down for a few slots of the wall-clock schedule, so that some pass
        // while nothing runs; passing time is what is tested.
        try await Task.sleep(for: .milliseconds(1200))
        let resumed = try await fixture.run("--demo", "timelapse", "--resume", "\(runID)", "--json")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let frames = try fixture.frames(of: Int64(runID))
        #expect(frames.map(\.frame) == Array(1...frameCount), "every slot recorded once, in order, none renumbered")
        #expect(frames.allSatisfy { $0.scheduledMs == Int64($0.frame - 1) * interval }, "the original schedule")
        // A loaded machine may make the resumed run skip a slot of its own (the camera still
        // busy); the slots passed while it was down come first after the kill and say so.
        let gap = frames.filter { $0.frame > lastBeforeKill && $0.outcome == .skipped && $0.error == "the run was not running" }
        #expect(gap.count >= 2, "slots passed while the run was down are recorded as skipped: \(frames.map { ($0.frame, $0.outcome) })")
        #expect(gap.map(\.frame) == Array((lastBeforeKill + 1)..<(lastBeforeKill + 1 + gap.count)), "one stretch, right after the kill")
        let afterResume = frames.filter { $0.frame > lastBeforeKill && $0.outcome == .taken }
        #expect(!afterResume.isEmpty)
        // On the original slots, not on a schedule restarted at the resume (which would be off
        // by anything up to an interval): judged by the median, so that a shot or two delayed by
        // a busy machine cannot decide it.
        let deviations = afterResume.map { abs(($0.sentMs ?? .max) - $0.scheduledMs) }.sorted()
        #expect(deviations[deviations.count / 2] < 100,
                "the resumed run shoots on the original slots: \(afterResume.map { ($0.frame, $0.sentMs ?? -1) })")
        #expect(try fixture.record(of: Int64(runID))?.state == .finished)
        let again = try await fixture.run("--demo", "timelapse", "--resume", "\(runID)")
        #expect(again.status == 64)
        #expect(again.stderr.contains("has finished"))
    }

    @Test("a rig's run killed mid-way resumes on the same cameras without naming them again")
    func rigResume() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let frameCount = 16
        let script = try fixture.crashHook(afterFrame: 3)
        let first = try fixture.start("--camera", "a", "--camera", "b", "--interval", "400ms", "--frames", "\(frameCount)",
                                      "--hook", script, "--json")
        #expect(try await first.exitStatus() == 128 + SIGKILL)
        let runID = try #require(first.frames.first?["run"] as? Int)
        #expect(try fixture.record(of: Int64(runID))?.camera == "a,b")

        // Other cameras are refused by RigSelection.resuming (UnleashedAppTests.RigSelectionTests).
        let resumed = try await fixture.run("--demo", "timelapse", "--resume", "\(runID)", "--json")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let frames = try fixture.frames(of: Int64(runID))
        let slots = Dictionary(grouping: frames, by: \.frame)
        #expect(slots.keys.sorted() == Array(1...frameCount), "every slot recorded")
        #expect(slots.values.allSatisfy { $0.compactMap(\.camera).sorted() == ["a", "b"] },
                "every slot recorded once per body: \(frames.map { ($0.frame, $0.camera ?? "-") })")
        #expect(frames.contains { $0.frame > 3 && $0.outcome == .taken }, "the resumed run fired the rig")
        #expect(try fixture.record(of: Int64(runID))?.state == .finished)
    }

    @Test("--ramp auto sets the exposure from the meter before each slot and journals what the ramp decided")
    func rampedRun() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let result = try await fixture.run("--demo", "timelapse", "--interval", "1500ms", "--frames", "3", "--ramp", "auto",
                                           "--ramp-gap", "500ms", "--ramp-aperture", "f/4", "--max-iso", "1600", "--overrun", "defer", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let run = try #require(try SQLiteJournal(path: fixture.journalPath).runs().first)
        let frames = try fixture.frames(of: run.id)
        #expect(frames.map(\.outcome) == [.taken, .taken, .taken], "\(frames)")
        #expect(frames.allSatisfy { $0.exposure?.hasSuffix("f/4") == true && $0.ramp?.intervalMs == 1500 }, "\(frames.map(\.exposure))")
        let show = try await fixture.run("runs", "show", "\(run.id)")
        #expect(show.stdout.contains("exposure ramped to the light (ISO 100-1600, f/4)"), "\(show.stdout)")
        let csv = try await fixture.run("runs", "export", "\(run.id)", "--csv")
        #expect(csv.stdout.split(separator: "\r\n").dropFirst().allSatisfy { $0.hasSuffix(",1500") }, "\(csv.stdout)")

        let program = fixture.directory.appendingPathComponent("program.json")
        try #"{"keyframes": [{"frame": 1, "mode": "fixed", "shutter": "1/250", "iso": 200, "aperture": "f/4"}, {"frame": 3}]}"#
            .write(to: program, atomically: true, encoding: .utf8)
        let programmed = try await fixture.run("--demo", "timelapse", "--interval", "1500ms", "--frames", "3", "--ramp", "program",
                                               program.path, "--ramp-gap", "500ms", "--overrun", "defer", "--json")
        #expect(programmed.status == 0, "\(programmed.stderr)")
        let second = try #require(try SQLiteJournal(path: fixture.journalPath).runs().first)
        let exposures = try fixture.frames(of: second.id).map(\.exposure)
        #expect(exposures.prefix(2).allSatisfy { $0 == "1/250 ISO 200 f/4" }, "the fixed keyframe holds for frames 1 and 2: \(exposures)")
        try #"{"keyframes": [{"at": "0s", "mode": "fixed", "shutter": "1/250", "iso": 200}]}"#.write(to: program, atomically: true, encoding: .utf8)
        let broken = try await fixture.run("--demo", "timelapse", "--interval", "2s", "--frames", "3", "--ramp", "program", program.path)
        #expect(broken.status == 64)
        #expect(broken.stderr.contains("keyframes[0].aperture: a fixed keyframe needs an aperture"), "\(broken.stderr)")
    }

    @Test("a hook script receives ACTION, ARGUMENT and the UNLEASHED_* variables; a non-zero exit at init aborts the run")
    func hook() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let log = fixture.directory.appendingPathComponent("hook.log").path
        let script = fixture.directory.appendingPathComponent("on-frame.sh").path
        try """
            #!/bin/sh
            echo "$ACTION|$ARGUMENT|$UNLEASHED_FRAME|$UNLEASHED_SCHEDULED|$UNLEASHED_LATENESS_MS|$UNLEASHED_EXPOSURE|$UNLEASHED_EV|$UNLEASHED_OUTCOME" >> "\(log)"
            [ "$ACTION" = init ] && [ -n "$REFUSE" ] && exit 3
            exit 0
            """.write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)

        let result = try await fixture.run("--demo", "timelapse", "--interval", "300ms", "--frames", "3", "--hook", script, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        // Frame hooks run alongside the run, so the last one may still be writing after it ended.
        var lines: [[String]] = []
        _ = try await eventually(every: .milliseconds(100)) {
            lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                .map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
            return lines.filter { $0[0] == "frame" }.count >= 3
        }
        #expect(lines.first?.first == "init")
        let start = try #require(lines.first { $0[0] == "start" })
        let runID = try #require(Int64(start[1]), "ARGUMENT at start is the run id")
        let frames = lines.filter { $0[0] == "frame" }.sorted { $0[2] < $1[2] }
        #expect(frames.map { $0[1] } == ["1", "2", "3"], "ARGUMENT is the frame number")
        #expect(frames.map { $0[2] } == ["1", "2", "3"], "UNLEASHED_FRAME")
        let run = try #require(try fixture.record(of: runID))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (index, frame) in frames.enumerated() {
            let scheduled = try #require(formatter.date(from: frame[3]), "UNLEASHED_SCHEDULED is an ISO 8601 time: \(frame[3])")
            #expect(Int64((scheduled.timeIntervalSince1970 * 1000).rounded()) == run.t0UnixMs + Int64(index) * 300)
            let lateness = try #require(Double(frame[4]), "UNLEASHED_LATENESS_MS is a number: \(frame[4])")
            #expect(lateness >= 0 && lateness < 1000, "a lateness in milliseconds, not seconds or microseconds")
            #expect(frame[6] == "+12", "UNLEASHED_EV is the metered EV")
            #expect(frame[7] == "taken")
        }
        let stop = try #require(lines.last { $0[0] == "stop" })
        #expect(stop[1] == "all slots done")

        let refused = try await fixture.cli.run(arguments: ["--demo", "timelapse", "--interval", "300ms", "--frames", "3", "--hook", script],
                                          environment: fixture.environment.merging(["REFUSE": "1"]) { $1 })
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("the hook refused the run at init (exit status 3)"))
        let runs = try SQLiteJournal(path: fixture.journalPath).runs()
        #expect(runs.count == 1, "a refused run is not started")
    }

    @Test("SIGUSR1 shoots an extra frame, SIGUSR2 stops after the current frame (status 0)")
    func usr1AndUsr2() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let run = try fixture.start("--interval", "1s", "--frames", "30", "--json")
        try await run.waitFor("frame 2") { $0.frames.count >= 2 }
        run.signal(SIGUSR1)
        try await run.waitFor("the extra frame") { $0.frames.contains { ($0["part"] as? Int) == 2 } }
        run.signal(SIGUSR2)
        #expect(try await run.exitStatus() == 0)
        let end = try #require(run.objects.last?["run"] as? [String: Any])
        #expect((end["reason"] as? String)?.hasPrefix("stopped after frame") == true)
        #expect(end["state"] as? String == "finished")
        let runID = try #require(end["id"] as? Int)
        let frames = try fixture.frames(of: Int64(runID))
        let extra = try #require(frames.first { $0.exposure == "extra" })
        #expect(extra.part == 2 && extra.outcome == .taken)
        #expect(frames.count < 30, "the run stopped instead of going on to 30 frames")
        #expect(Set(frames.map { "\($0.frame).\($0.part)" }).count == frames.count, "no number used twice")
    }

    @Test("SIGTERM during a bulb exposure ends the exposure, records the frame, closes the journal, exits 143")
    func sigtermDuringBulb() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        #expect(try await fixture.run("--demo", "settings", "set", "shutter-speed", "bulb").status == 0)
        // A long exposure, so the signal lands inside it even when the machine running the tests
        // is slow to wake this test.
        let run = try fixture.start("--interval", "25s", "--frames", "3", "--bulb", "20s", "--json")
        // Real time: the command prints nothing until the frame ends, so nothing says the
        // shutter has opened; 1.5 s of a 20 s exposure.
        try await Task.sleep(for: .milliseconds(1500))
        run.signal(SIGTERM)
        #expect(try await run.exitStatus() == 143)
        let end = try #require(run.objects.last?["run"] as? [String: Any])
        #expect(end["reason"] as? String == "stopped by SIGTERM")
        let runID = try #require(end["id"] as? Int)
        let frames = try fixture.frames(of: Int64(runID))
        #expect(frames.count == 1)
        let frame = try #require(frames.first)
        #expect(frame.outcome == .taken)
        #expect(frame.exposure?.hasPrefix("bulb 20000ms, ended early after") == true, "\(frame.exposure ?? "nil")")
        #expect(try fixture.record(of: Int64(runID))?.state == .finished)
        // The camera is free again: a plain shot works right away.
        #expect(try await fixture.run("--demo", "settings", "set", "shutter-speed", "1/125").status == 0)
        #expect(try await fixture.run("--demo", "shoot").status == 0)
    }

    @Test("Ctrl-C during the start delay ends the run before any frame, exit 130")
    func interruptBeforeStart() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let run = try fixture.start("--interval", "1s", "--frames", "3", "--start-in", "30s", "--json")
        // Journalled at once, then waiting out its start delay.
        try await fixture.waitForRuns(1)
        run.signal(SIGINT)
        #expect(try await run.exitStatus() == 130)
        let end = try #require(run.objects.last?["run"] as? [String: Any])
        #expect(end["reason"] as? String == "stopped by Ctrl-C")
        #expect(run.frames.isEmpty)
    }

    /// How options become a plan or a refusal is tested on `PlanRequest`; these need the run or
    /// the camera (and one shows a refusal as the command prints it).
    @Test("plans that cannot work are refused before anything is shot, naming what to change",
          arguments: [
              (["--interval", "1s"], "say when to stop"),
              (["--interval", "20ms", "--frames", "3", "--bracket", "3x2ev"], "each slot needs at least"),
              (["--interval", "5s", "--frames", "3", "--ramp", "auto", "--ramp-aperture", "f/1.1"], "does not offer the aperture"),
              (["--interval", "1s", "--frames", "3", "--ramp", "auto"], "each slot needs at least"),
          ])
    func refusedPlans(arguments: [String], message: String) async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let result = try await fixture.run(arguments: ["--demo", "timelapse"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(try await fixture.run(arguments: ["--demo", "status", "--json"]).stdout.contains("\"shotCounter\":0"))
    }
}

extension RunFixture {
    func run(arguments: [String]) async throws -> CLI.Result {
        try await cli.run(arguments: arguments, environment: environment)
    }
}
