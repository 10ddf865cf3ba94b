import Foundation
import Testing
import UnleashedTestSupport

/// One run, one owner: a CLI `--resume` of a run the daemon is running is refused, and once the
/// daemon is killed the same resume goes ahead.
@Suite("a run has one owner (private bus, one module)", .serialized, .timeLimit(.minutes(3)))
struct RunOwnerTests {
    @Test("CLI resume of a run the daemon runs is refused; after kill -9 of the daemon, it resumes")
    func cliResumeOfDaemonJob() async throws {
        let rig = try await DaemonRig(modules: 1)
        try await rig.start()
        let submitted = try await rig.unleashed("--json", "timelapse", "--interval", "250ms", "--frames", "40", "--detach")
        let id = try #require((submitted.json?["job"] as? [String: Any])?["id"] as? Int, "\(submitted.stderr)")
        guard try await eventually(every: .milliseconds(100), {
            ((try await rig.request("/v1/jobs/\(id)").json?["summary"] as? [String: Any])?["taken"] as? Int ?? 0) >= 3
        }) else { throw FixtureError("job \(id) did not start: \(rig.daemonLog)") }
        let daemonPID = try #require(rig.pid)

        let refused = try await rig.unleashed("--direct", "--module", "F0:5E:D0:00:00:01", "--json", "timelapse", "--resume", "\(id)")
        #expect(refused.status == 75, "\(refused.stdout)\(refused.stderr)")
        let error = try #require(refused.json?["error"] as? [String: Any], "\(refused.stdout)")
        #expect(error["code"] as? String == "runOwned")
        #expect((error["message"] as? String)?.contains("pid \(daemonPID)") == true, "\(error)")
        let during = try await rig.unleashed("--json", "runs", "show", "\(id)")
        let before = (during.json?["frames"] as? [[String: Any]])?.count ?? 0

        try await rig.stop(SIGKILL)
        let resumed = try await rig.unleashed("--direct", "--module", "F0:5E:D0:00:00:01", "--json", "timelapse", "--resume", "\(id)")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let shown = try await rig.unleashed("--json", "runs", "show", "\(id)")
        let frames = try #require(shown.json?["frames"] as? [[String: Any]], "\(shown.stderr)")
        #expect(frames.count >= before)
        #expect(frames.compactMap { $0["frame"] as? Int } == Array(1...40), "every slot once, in order")
        #expect((shown.json?["run"] as? [String: Any])?["state"] as? String == "finished")
    }
}
