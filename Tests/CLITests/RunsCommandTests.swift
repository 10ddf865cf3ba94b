import CameraKit
import Foundation
import Intervalometer
import Testing

/// A journal file of its own, filled through the library as a run would fill it.
private struct JournalFixture {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-runs-\(UUID())")
    var path: String { directory.appendingPathComponent("journal.sqlite").path }
    var environment: [String: String] { ["UNLEASHED_JOURNAL": path] }

    /// Run 1: finished, 3 frames (taken, skipped, failed with an awkward message); run 2: a
    /// bracket still running, one slot of 3 pictures.
    func fill() throws -> SQLiteJournal {
        let journal = try SQLiteJournal(path: path)
        let first = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(3)), t0UnixMs: 1_795_000_000_000,
                                      camera: "SIM0001")
        try journal.append(FrameRecord(frame: 1, scheduledMs: 0, sentMs: 1, completedMs: 61, latenessMicros: 1500,
                                       outcome: .taken, exposure: "1/125", meteredEV: "+12", shotCounter: 41),
                           to: first.id)
        try journal.append(FrameRecord(frame: 2, scheduledMs: 5000, outcome: .skipped, error: "overrun"), to: first.id)
        try journal.append(FrameRecord(frame: 3, scheduledMs: 10_000, sentMs: 10_002, latenessMicros: 2000,
                                       outcome: .failed, error: "refused, \"busy\""), to: first.id)
        try journal.finish(run: first.id, state: .finished, reason: "all 3 frames")
        let second = try journal.begin(
            plan: RunPlan(intervalMs: 90_000, stop: .never, exposure: .bracket(count: 3, stepThirds: 3)),
            t0UnixMs: 1_795_000_600_000, camera: "SIM0002")
        for part in 1...3 {
            try journal.append(FrameRecord(frame: 1, part: part, scheduledMs: 0, sentMs: 2, completedMs: 70,
                                           latenessMicros: 2000, outcome: .taken, exposure: ["-1", "0", "+1"][part - 1],
                                           shotCounter: 41 + part), to: second.id)
        }
        return journal
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}

@Suite("unleashed runs: reading the run journal", .timeLimit(.minutes(2)))
struct RunsCommandTests {
    @Test("list shows every run, newest first, with its counts; no module needed")
    func list() async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        let journal = try fixture.fill()
        let human = try await cli.run("runs", "list", environment: fixture.environment)
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout == """
            ID  STATE     CAMERA   INTERVAL  TAKEN  FAILED  SKIPPED  STARTED
             2  running   SIM0002  1m30s         3       0        0  2026-11-18T11:16:40.000Z
             1  finished  SIM0001  5s            1       1        1  2026-11-18T11:06:40.000Z

            """)
        let json = try await cli.run("runs", "list", "--json", environment: fixture.environment)
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(runs.map { $0["id"] as? Int } == [2, 1])
        #expect(runs[1]["state"] as? String == "finished")
        #expect(runs[1]["endReason"] as? String == "all 3 frames")
        #expect(runs[1]["intervalMs"] as? Int == 5000)
        #expect(runs[1]["taken"] as? Int == 1 && runs[1]["failed"] as? Int == 1 && runs[1]["skipped"] as? Int == 1)
        #expect(runs[0]["taken"] as? Int == 3)

        // The journal is still open here, as during a run: what it appends shows at once.
        try journal.append(FrameRecord(frame: 2, scheduledMs: 90_000, outcome: .skipped), to: 2)
        let later = try await cli.run("runs", "list", environment: fixture.environment)
        #expect(later.stdout.contains(" 2  running   SIM0002  1m30s         3       0        1  "), "\(later.stdout)")
    }

    @Test("list without a journal file says there are no runs and creates nothing")
    func listEmpty() async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        let result = try await cli.run("runs", "list", environment: fixture.environment)
        #expect(result.status == 0)
        #expect(result.stdout == "No runs in \(fixture.path)\n")
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
        #expect(try await cli.run("--json", "runs", "list", environment: fixture.environment).stdout == "[]\n")
    }

    @Test("show prints the plan and one line per frame")
    func show() async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        _ = try fixture.fill()
        let first = try await cli.run("runs", "show", "1", environment: fixture.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == """
            Run 1  finished (all 3 frames)
            Camera   SIM0001
            Started  2026-11-18T11:06:40.000Z
            Plan     every 5s, 3 frames, one picture at the camera's shutter speed, overrun skip
            Frames   1 taken, 1 failed, 1 skipped
            Lateness p50 1.500 ms, p99 2.000 ms, max 2.000 ms
            1  due 0s  taken  late 1.500 ms  1/125  EV +12  shot 41
            2  due 5s  skipped  (overrun)
            3  due 10s  failed  late 2.000 ms  (refused, "busy")

            """)
        let bracket = try await cli.run("runs", "show", "2", environment: fixture.environment)
        #expect(bracket.stdout.contains("Plan     every 1m30s, until stopped, bracket of 3, 1 EV apart, overrun skip\n"))
        #expect(bracket.stdout.hasSuffix("1.3  due 0s  taken  late 2.000 ms  +1  shot 44\n"))

        let json = try #require(try await cli.run("runs", "show", "1", "--json", environment: fixture.environment).json)
        let run = try #require(json["run"] as? [String: Any])
        #expect(run["id"] as? Int == 1)
        #expect((run["plan"] as? [String: Any])?["intervalMs"] as? Int == 5000)
        #expect((run["summary"] as? [String: Any])?["p99LatenessMicros"] as? Int == 2000)
        let frames = try #require(json["frames"] as? [[String: Any]])
        #expect(frames.map { $0["outcome"] as? String } == ["taken", "skipped", "failed"])
        #expect(frames[2]["error"] as? String == "refused, \"busy\"")
    }

    @Test("export --csv writes the frames as CSV to standard output or to a file")
    func export() async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        let journal = try fixture.fill()
        let expected = try journal.csv(of: 1)
        #expect(expected.hasPrefix(
            "frame,part,scheduled_ms,sent_ms,completed_ms,lateness_us,outcome,error,exposure,metered_ev,shot_counter,"
                + "camera,command_spread_us,completion_spread_us,ramp_target_ev,ramp_scene_ev,ramp_residual_ev,"
                + "ramp_rate_ev_per_hour,interval_ms\r\n"))
        #expect(expected.contains("\r\n3,1,10000,10002,,2000,failed,\"refused, \"\"busy\"\"\",,,,,,,,,,,\r\n"))
        let stdout = try await cli.run("runs", "export", "1", "--csv", environment: fixture.environment)
        #expect(stdout.status == 0, "\(stdout.stderr)")
        #expect(stdout.stdout == expected)

        let file = fixture.directory.appendingPathComponent("run1.csv")
        let written = try await cli.run("runs", "export", "1", "--csv", "--output", file.path, environment: fixture.environment)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout == "Wrote run 1 to \(file.path)\n")
        #expect(try String(contentsOf: file, encoding: .utf8) == expected)

        let noFormat = try await cli.run("runs", "export", "1", environment: fixture.environment)
        #expect(noFormat.status == 64)
        #expect(noFormat.stderr.contains("--csv"))
    }

    /// Which ids are unknown (a journal without the run, or no journal file at all) is
    /// `RunQueries`' answer, tested in UnleashedAppTests; here how the CLI says it.
    @Test("an unknown run id is a usage error (64) that points at runs list", arguments: [
        ["runs", "show", "7"],
    ])
    func unknownRun(arguments: [String]) async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        _ = try fixture.fill()
        let human = try await cli.run(arguments: arguments, environment: fixture.environment)
        #expect(human.status == 64)
        #expect(human.stderr == "error: there is no run 7; `unleashed runs list` shows them\n")
        #expect(human.stdout.isEmpty)
        let json = try await cli.run(arguments: arguments + ["--json"], environment: fixture.environment)
        #expect(json.status == 64)
        #expect((json.json?["error"] as? [String: Any])?["code"] as? String == "noSuchRun")
    }

    @Test("a journal that cannot be opened exits 69, naming the file")
    func unreadableJournal() async throws {
        let (cli, fixture) = (CLI(), JournalFixture())
        defer { cli.cleanUp(); fixture.cleanUp() }
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        try Data(repeating: 0xA5, count: 4096).write(to: URL(fileURLWithPath: fixture.path))
        for arguments in [["runs", "list"], ["runs", "show", "1"], ["runs", "export", "1", "--csv"]] {
            let result = try await cli.run(arguments: arguments, environment: fixture.environment)
            #expect(result.status == 69, "\(arguments)")
            #expect(result.stderr.hasPrefix("error: the run journal \(fixture.path) is damaged"), "\(result.stderr)")
        }
        let json = try #require(try await cli.run("--json", "runs", "list", environment: fixture.environment).json)
        #expect((json["error"] as? [String: Any])?["code"] as? String == "journal")
    }
}
