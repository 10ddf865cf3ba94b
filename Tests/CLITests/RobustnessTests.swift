import Foundation
import Testing
import UnleashedTestSupport

/// The CLI's environment for a command run by hand (a shell, tmux): its own demo state and journal.
private func environment(_ cli: CLI) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["UNLEASHED_DEMO_STATE"] = cli.stateFile.path
    environment["UNLEASHED_DEMO"] = nil
    environment["UNLEASHED_JOURNAL"] = cli.journalFile.path
    environment["XDG_STATE_HOME"] = cli.stateFile.deletingLastPathComponent().appendingPathComponent("no-state-\(UUID())").path
    return environment
}

/// Runs `script` with bash, `$0` being the built `unleashed`.
private func shell(_ cli: CLI, _ script: String) async throws -> CommandResult {
    try await runProgram(URL(fileURLWithPath: "/bin/bash"), ["-c", script, CLI.binary.path], environment: environment(cli))
}

@Suite("Output that cannot be written, signals, narrow terminals, runs that took nothing", .serialized)
struct RobustnessTests {
    @Test("output to a full disk exits 74 with a message, for runs list, show and export and watch")
    func fullDisk() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let run = try await cli.run("--demo", "timelapse", "--interval", "200ms", "--frames", "2")
        #expect(run.status == 0, "\(run.stderr)")
        for command in ["runs list", "runs show 1", "runs export 1 --csv", "--json runs list", "--demo watch --for 2s"] {
            let result = try await shell(cli, "\"$0\" \(command) > /dev/full")
            #expect(result.status == 74, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("cannot write to standard output"), "\(command): \(result.stderr)")
        }
    }

    @Test("output into a closed pipe exits 74 with a message, not a silent death by SIGPIPE")
    func closedPipe() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await shell(cli, "\"$0\" --demo --json watch --for 5s | true; echo \"status ${PIPESTATUS[0]}\"")
        #expect(result.stdout.contains("status 74"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("standard output was closed"), "\(result.stderr)")
    }

    @Test("watch --json writes each line as it comes into a pipe, and SIGTERM ends it as Ctrl-C does")
    func watchStreamsAndTerminates() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let watch = try BackgroundRun(CLI.binary, ["--demo", "--json", "watch"], environment: environment(cli))
        try await watch.waitFor("the first event line", timeout: .seconds(20)) { !$0.objects.isEmpty }
        watch.signal(SIGTERM)
        #expect(try await watch.exitStatus() == 0, "\(watch.errors)")
    }

    @Test("SIGTERM ends a bulb exposure as Ctrl-C does: the shutter closed, its closing line, exit 143")
    func bulbTerminated() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        #expect(try await cli.run("--demo", "settings", "set", "shutter-speed", "bulb").status == 0)
        let bulb = try BackgroundRun(CLI.binary, ["--demo", "bulb", "30s"], environment: environment(cli))
        // Real time: the command prints nothing until the exposure ends (its clock line is for a
        // terminal), so nothing says the shutter has opened; 3 s of a 30 s exposure.
        try await Task.sleep(for: .seconds(3))
        bulb.signal(SIGTERM)
        #expect(try await bulb.exitStatus() == 143, "\(bulb.output) \(bulb.errors)")
        #expect(bulb.output.contains { $0.contains("stopped early") }, "\(bulb.output)")
    }

    @Test("a time-lapse whose every frame failed (the card full from the start) exits non-zero")
    func everyFrameFailed() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        #expect(try await cli.run("--demo", "status").status == 0)
        let data = try Data(contentsOf: cli.stateFile)
        var state = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(state["shotsRemaining"] != nil, "\(state.keys)")
        state["shotsRemaining"] = 0
        try JSONSerialization.data(withJSONObject: state).write(to: cli.stateFile)
        let run = try await cli.run("--demo", "timelapse", "--interval", "500ms", "--frames", "3")
        #expect(run.stdout.contains("0 taken, 3 failed"), "\(run.stdout) \(run.stderr)")
        #expect(run.status == 65, "\(run.stdout) \(run.stderr)")
    }

    @Test("the live line fits the terminal at 60, 80 and 132 columns: one row, never a new line per refresh")
    func liveLineFits() async throws {
        let tmux = "/usr/bin/tmux"
        #expect(FileManager.default.isExecutableFile(atPath: tmux), "tmux is installed by scripts/setup")
        for width in [60, 80, 132] {
            let cli = CLI()
            defer { cli.cleanUp() }
            let session = "unleashed-\(UUID().uuidString.prefix(8))"
            let socket = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(session)").path
            var env = environment(cli)
            env["TERM"] = "xterm"
            let command = "'\(CLI.binary.path)' --demo timelapse --interval 1s --frames 30; sleep 30"
            // The tmux server forked by this client lives on with the session and inherits what
            // Foundation watches to learn that the client ended: the client is not waited for.
            let starter = Process()
            starter.executableURL = URL(fileURLWithPath: tmux)
            starter.arguments = ["-S", socket, "new-session", "-d", "-s", session, "-x", "\(width)", "-y", "30", command]
            starter.environment = env
            starter.standardOutput = FileHandle.nullDevice
            starter.standardError = FileHandle.nullDevice
            try ChildProcesses.run(starter)
            defer {
                let killer = Process()
                killer.executableURL = URL(fileURLWithPath: tmux)
                killer.arguments = ["-S", socket, "kill-server"]
                try? ChildProcesses.run(killer)
            }
            // A few refreshes of the status line: three different ones seen, however long the
            // start took.
            var rows: [String] = []
            var status: [String] = []
            var shown: Set<String> = []
            let refreshed = try await eventually(every: .milliseconds(250), giveUpAfter: .seconds(30)) {
                let captured = try await runProgram(URL(fileURLWithPath: tmux), ["-S", socket, "capture-pane", "-p", "-t", session], environment: env)
                rows = captured.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                status = rows.filter { $0.contains("Frame ") || $0.contains("elapsed") || $0.contains("late ") }
                shown.formUnion(status)
                return shown.count >= 3
            }
            #expect(refreshed, "\(width) columns: the status line was not refreshed: \(rows.filter { !$0.isEmpty })")
            #expect(status.count == 1, "\(width) columns: \(rows.filter { !$0.isEmpty })")
            #expect(rows.allSatisfy { $0.count <= width }, "\(width) columns")
        }
    }

    @Test("runs list, show and export read a journal they may only read: group read in a read-only folder, and a stale -shm")
    func readOnlyJournal() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ro-journal-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = folder + "/journal.sqlite"
        var env = environment(cli)
        env["UNLEASHED_JOURNAL"] = journal
        let made = try await runProgram(CLI.binary, ["--demo", "timelapse", "--interval", "200ms", "--frames", "2"], environment: env)
        #expect(made.status == 0, "\(made.stderr)")
        // Another user's journal, readable through its group only, in a folder no one else may write.
        for (path, mode) in [(folder, "0750"), (journal, "0640")] {
            #expect(try await runProgram(URL(fileURLWithPath: "/bin/chgrp"), ["nogroup", path], environment: env).status == 0)
            #expect(try await runProgram(URL(fileURLWithPath: "/bin/chmod"), [mode, path], environment: env).status == 0)
        }
        env["HOME"] = "/nonexistent"
        let asGroupMember = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", CLI.binary.path]
        for command in [["runs", "list"], ["runs", "show", "1"], ["runs", "export", "1", "--csv"]] {
            let result = try await runProgram(URL(fileURLWithPath: "/usr/bin/setpriv"), asGroupMember + command, environment: env)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stdout.lowercased().contains("taken"), "\(command): \(result.stdout)")
        }
        // A writer that died left its -wal and -shm behind, owned by root and read-only to others.
        let leftBehind = """
            import os, sqlite3
            c = sqlite3.connect('\(journal)', isolation_level=None)
            c.execute('PRAGMA wal_autocheckpoint = 0')
            c.execute("UPDATE run SET endReason = 'left in the log' WHERE id = 1")
            os._exit(0)
            """
        #expect(try await runProgram(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", leftBehind], environment: env).status == 0)
        #expect(FileManager.default.fileExists(atPath: journal + "-shm"))
        for file in [journal + "-wal", journal + "-shm"] {
            _ = try await runProgram(URL(fileURLWithPath: "/bin/chgrp"), ["nogroup", file], environment: env)
            _ = try await runProgram(URL(fileURLWithPath: "/bin/chmod"), ["0640", file], environment: env)
        }
        let stale = try await runProgram(URL(fileURLWithPath: "/usr/bin/setpriv"), asGroupMember + ["--json", "runs", "show", "1"],
                                         environment: env)
        if stale.status == 0 {
            #expect(stale.stdout.contains("left in the log"), "the records still in the log are read: \(stale.stdout)")
        } else {
            #expect(stale.stderr.contains("-shm") || stale.stdout.contains("-shm"), "a stale -shm is named: \(stale.stdout) \(stale.stderr)")
        }
        // A run of that group's member may write the folder and the journal, but not the -shm
        // root left: the error names the file to remove.
        for (path, mode) in [(folder, "0770"), (journal, "0660"), (journal + "-wal", "0660")] {
            #expect(try await runProgram(URL(fileURLWithPath: "/bin/chmod"), [mode, path], environment: env).status == 0)
        }
        env["UNLEASHED_DEMO_STATE"] = folder + "/demo.json"
        let writer = try await runProgram(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                          asGroupMember + ["--demo", "timelapse", "--interval", "200ms", "--frames", "1"], environment: env)
        #expect(writer.status == 69, "\(writer.stdout) \(writer.stderr)")
        #expect(writer.stderr.contains("journal.sqlite-shm belongs to another user"), "\(writer.stderr)")
    }

    @Test("a hook's standard output goes to standard error, never into --json output")
    func hookOutputStaysOutOfJSON() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let hook = FileManager.default.temporaryDirectory.appendingPathComponent("talking-hook-\(UUID()).sh").path
        try "#!/bin/sh\necho \"HOOK-SAID-$ACTION\"\n".write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        defer { try? FileManager.default.removeItem(atPath: hook) }
        let run = try await cli.run("--demo", "--json", "timelapse", "--interval", "300ms", "--frames", "2", "--hook", hook)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(!lines.isEmpty && lines.count == run.jsonLines.count, "every line on standard output is JSON: \(run.stdout)")
        #expect(!run.stdout.contains("HOOK-SAID"))
        #expect(run.stderr.contains("HOOK-SAID-init") && run.stderr.contains("HOOK-SAID-frame"), "\(run.stderr)")
    }
}
