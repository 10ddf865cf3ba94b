import Daemon
import Foundation
import Intervalometer
import Testing
import UnleashedSimulator
import UnleashedTestSupport

@Suite("a daemon's job whose journal fills its disk", .timeLimit(.minutes(1)))
struct JournalFaultJobTests {
    @Test("the job keeps shooting, ends suspended with a recovery file, and the next start adds the records back")
    func diskStaysFull() async throws {
        let disk = try SmallDisk(megabytes: 16)
        defer { disk.remove() }
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let cameras = CameraRegistry()
        await cameras.add(demo.camera, name: "demo", source: "demo")
        let journal = try SQLiteJournal(path: disk.directory + "/journal.sqlite")
        // The schedule runs on a test clock, as fast as the camera shoots; the full disk is
        // real, and so are the journal's retries and its wait for the disk at the end.
        let clock = RunClock()
        let jobs = JobTests.manager(journal, cameras, clock: clock)
        let id = try await jobs.submit(camera: nil, plan: RunPlan(intervalMs: 150, stop: .frames(30), overrun: .burst)).id
        var filler: String?
        var ending: RunEnding?
        var reported = 0
        try await clock.flowing {
            for await update in try await jobs.follow(id) {
                switch update {
                case .frame:
                    reported += 1
                    if reported == 5 { filler = disk.fill() }
                case .ended(let end, _):
                    ending = end
                }
            }
        }
        let end = try #require(ending)
        #expect(end.interrupted && end.state == .running, "\(end.reason)")
        let recovery = try #require(end.recoveryFile)
        #expect(try await jobs.job(id).state == .suspended)
        #expect(try await jobs.job(id).reason?.contains(recovery) == true)
        let kept = try journal.frames(of: id).count + JournalRecovery.records(in: [recovery]).count
        #expect(kept == 30, "every slot is in the journal or the recovery file")

        // Room again, and a new start of the daemon: the records go back into the journal.
        if let filler { try FileManager.default.removeItem(atPath: filler) }
        let restarted = JobTests.manager(journal, cameras, clock: clock)
        #expect(await restarted.resumeInterrupted() == [id])
        try await clock.flowing { for await _ in try await restarted.follow(id) {} }
        #expect(try journal.frames(of: id).map(\.frame) == Array(1...30))
        #expect(try journal.run(id)?.state == .finished)
        #expect(!FileManager.default.fileExists(atPath: recovery))
    }
}
