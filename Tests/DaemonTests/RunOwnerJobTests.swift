import Daemon
import Foundation
import Intervalometer
import Testing
import UnleashedSimulator
import UnleashedTestSupport

@Suite("a daemon that starts while another process runs one of its jobs", .timeLimit(.minutes(1)))
struct RunOwnerJobTests {
    @Test("the job another live process runs is left alone, its journal untouched; once that process is gone it resumes")
    func leavesOwnedJobAlone() async throws {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = demo
        // Time stands still: the resumed run is suspended before its first slot.
        let clock = RunClock()
        let record = try journal.begin(plan: RunPlan(intervalMs: 200, stop: .frames(5)), t0UnixMs: clock.wallClock(), camera: "demo")
        // A CLI that resumed the job: a live process of its own owns it.
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: "/bin/sleep")
        cli.arguments = ["60"]
        try ChildProcesses.run(cli)
        defer { if cli.isRunning { cli.terminate() } }
        let ticks = try #require(RunOwner.startTicks(of: cli.processIdentifier))
        let update = Process()
        let updated = AsyncStream<Void> { done in update.terminationHandler = { _ in done.finish() } }
        update.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        update.arguments = ["-c", """
            import sqlite3
            c = sqlite3.connect('\(directory)/journal.sqlite', isolation_level=None)
            c.execute("UPDATE owner SET pid = ?, startTicks = ?, program = 'unleashed' WHERE run = ?", (\(cli.processIdentifier), \(ticks), \(record.id)))
            """]
        try ChildProcesses.run(update)
        for await _ in updated {}
        #expect(update.terminationStatus == 0)

        let daemon = JobTests.manager(journal, cameras, clock: clock)
        #expect(await daemon.resumeInterrupted().isEmpty)
        #expect(try journal.frames(of: record.id).isEmpty, "the refused resume recorded nothing")
        #expect(try journal.run(record.id)?.state == .running, "and left the run to its owner")

        // Killed, and not yet collected: a zombie owns nothing either. The kernel ends it in
        // its own time, seen in /proc as the journal's owner check sees it.
        kill(cli.processIdentifier, SIGKILL)
        _ = await eventually(every: .milliseconds(5)) { RunOwner.startTicks(of: cli.processIdentifier) == nil }
        #expect(await daemon.resumeInterrupted() == [record.id])
        await daemon.suspendAll()
    }
}
