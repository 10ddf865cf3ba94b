import Daemon
import Foundation
import Intervalometer
import Testing
import UnleashedSimulator

/// Resuming a journalled run reads its list of cameras: a camera whose name holds a comma is
/// still one camera, in a rig as alone.
@Suite("resuming jobs by their camera list", .timeLimit(.minutes(1)))
struct JobResumeTests {
    @Test("a rig whose camera's name holds a comma resumes as that rig")
    func commaInARigMember() async throws {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let second = try await Demo.start(stateFile: nil, options: DemoOptions(seed: 7))
        await cameras.add(demo.camera, name: "north, east", source: "demo")
        await cameras.add(second.camera, name: "west", source: "demo")
        let before = JobManager(journal: journal, cameras: cameras)
        let submitted = try await before.submit(rig: ["north, east", "west"], plan: RunPlan(intervalMs: 200, stop: .never))
        var updates = try await before.follow(submitted.id).makeAsyncIterator()
        _ = await updates.next()
        await before.suspendAll()
        while await updates.next() != nil {}
        #expect(try journal.run(submitted.id)?.cameras == ["north, east", "west"])

        let after = JobManager(journal: journal, cameras: cameras)
        #expect(await after.resumeInterrupted() == [submitted.id])
        #expect(try await after.job(submitted.id).camera == "north, east,west")
        await after.suspendAll()
        try? await demo.finish()
        try? await second.finish()
    }
}
