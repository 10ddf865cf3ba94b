import Foundation
import Intervalometer
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedSimulator

/// A run in this process through the run controller, on the simulator: what the CLI shows and
/// signals, without launching it.
@Suite(.timeLimit(.minutes(1))) struct LocalRunTests {
    final class Folder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("localrun-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: path) }

        func journal() throws -> SQLiteJournal { try SQLiteJournal(path: path.appendingPathComponent("journal.sqlite").path) }

        func camera() async throws -> OpenedCamera {
            try await CameraProvider().open(CameraSpec(.demo(DemoOptions(seed: 1), stateFile: path.appendingPathComponent("demo.json"))))
        }
    }

    @Test func aRunStreamsItsRecordsAndEndsWithItsSummary() async throws {
        let folder = try Folder()
        let run = LocalRun(.new(RunPlan(intervalMs: 1000, stop: .frames(2)), delay: .zero), journal: try folder.journal())
        let collected = Task { await run.records.reduce(into: [FrameRecord]()) { $0.append($1) } }
        let opened = try await folder.camera()
        _ = await run.run(on: opened.camera)
        try await opened.close()
        guard case .ended(let end) = await run.outcome() else { Issue.record("the run did not end"); return }
        #expect(end.state == "finished")
        // A machine too busy for a slot records it as skipped; every slot is accounted for.
        #expect(end.summary.taken >= 1)
        #expect(end.summary.taken + end.summary.skipped + end.summary.failed == 2)
        #expect(end.verdict == nil)
        #expect(await collected.value.map(\.frame) == [1, 2])
        #expect(await run.current()?.id == end.id)
    }

    /// A stop that comes while the camera is being opened is kept and ends the run in its start
    /// delay, before any frame.
    @Test func aStopBeforeTheCameraIsOpenIsDelivered() async throws {
        let folder = try Folder()
        let run = LocalRun(.new(RunPlan(intervalMs: 1000, stop: .frames(5)), delay: .seconds(30)), journal: try folder.journal())
        await run.stop(reason: "stopped by Ctrl-C")
        let opened = try await folder.camera()
        let outcome = await run.run(on: opened.camera)
        try await opened.close()
        guard case .ended(let end) = outcome else { Issue.record("\(outcome)"); return }
        #expect(end.reason == "stopped by Ctrl-C")
        #expect(end.summary.taken == 0)
        #expect(end.summary.skipped == 0)
    }

    @Test func aRunWhoseCameraNeverOpenedEndsItsRecords() async throws {
        let folder = try Folder()
        let run = LocalRun(.new(RunPlan(intervalMs: 1000, stop: .frames(5)), delay: .zero), journal: try folder.journal())
        run.abandon()
        for await _ in run.records { Issue.record("no record was taken") }
        guard case .notStarted = await run.outcome() else { Issue.record("not abandoned"); return }
    }

    @Test func theVerdictFollowsTheStateThenTheFrames() {
        func end(_ state: String, taken: Int = 0, failed: Int = 0, skipped: Int = 0) -> RunEnd {
            var frames: [FrameRecord] = []
            for n in 0..<taken { frames.append(FrameRecord(frame: n + 1, scheduledMs: 0, outcome: .taken)) }
            for n in 0..<failed { frames.append(FrameRecord(frame: taken + n + 1, scheduledMs: 0, outcome: .failed)) }
            for n in 0..<skipped { frames.append(FrameRecord(frame: taken + failed + n + 1, scheduledMs: 0, outcome: .skipped)) }
            return RunEnd(id: 1, state: state, reason: "", summary: RunSummary(frames: frames))
        }
        #expect(end("finished", taken: 1, failed: 3).verdict == nil)
        #expect(end("finished", failed: 2, skipped: 1).verdict == .refused)
        #expect(end("finished", skipped: 2).verdict == .unavailable)
        #expect(end("failed", taken: 2).verdict == .unavailable)
        #expect(end("interrupted", taken: 2).verdict == .journalFailed)
        #expect(end("finished").verdict == nil)
    }
}
