import Foundation
import Intervalometer
import Testing
import CommandCore
import UnleashedApp

/// `runs` and `timelapse --resume` as the journal answers them, without launching the CLI.
@Suite struct RunQueriesTests {
    final class Folder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queries-\(UUID().uuidString)").path
        var journal: String { path + "/journal.sqlite" }
        var environment: [String: String] { ["UNLEASHED_JOURNAL": journal] }

        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func noJournalFileReadsAsEmptyAndIsNotCreated() throws {
        let folder = try Folder()
        let queries = try RunQueries(environment: folder.environment)
        #expect(try queries.runs().isEmpty)
        #expect(throws: RunQueryError.noSuchRun(7)) { try queries.run(7) }
        #expect(throws: RunQueryError.noSuchRun(7)) { try queries.csv(of: 7) }
        #expect(!FileManager.default.fileExists(atPath: folder.journal))
        #expect(RunQueryError.noSuchRun(7).description == "there is no run 7; `unleashed runs list` shows them")
    }

    @Test func runsComeWithTheirCountsAndAnUnknownIdIsNoSuchRun() throws {
        let folder = try Folder()
        let journal = try RunQueries.forWriting(environment: folder.environment)
        let run = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(2)), t0UnixMs: 1_795_000_000_000, camera: "SIM")
        try journal.append(FrameRecord(frame: 1, scheduledMs: 0, sentMs: 1, completedMs: 60, outcome: .taken), to: run.id)
        try journal.append(FrameRecord(frame: 2, scheduledMs: 5000, outcome: .skipped, error: "overrun"), to: run.id)
        try journal.finish(run: run.id, state: .finished, reason: "all 2 frames")
        let queries = try RunQueries(environment: folder.environment)
        let entries = try queries.runsWithSummaries()
        #expect(entries.map(\.0.id) == [run.id])
        #expect(entries.map(\.1.taken) == [1])
        #expect(entries.map(\.1.skipped) == [1])
        #expect(try queries.frames(of: run.id).count == 2)
        #expect(throws: RunQueryError.noSuchRun(run.id + 1)) { try queries.frames(of: run.id + 1) }
    }

    /// `runs export --output`: written whole, or an I/O error (74) naming the path, not "unavailable" (69).
    @Test func anExportWrittenWholeOrAnIOErrorNamingThePath() throws {
        let folder = try Folder()
        let journal = try RunQueries.forWriting(environment: folder.environment)
        let run = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(1)), t0UnixMs: 1_795_000_000_000, camera: "SIM")
        try journal.append(FrameRecord(frame: 1, scheduledMs: 0, sentMs: 1, completedMs: 60, outcome: .taken), to: run.id)
        let queries = try RunQueries(environment: folder.environment)
        let written = folder.path + "/run.csv"
        try queries.exportCSV(of: run.id, to: written)
        #expect(try String(contentsOfFile: written, encoding: .utf8) == queries.csv(of: run.id))
        let nowhere = folder.path + "/no-such-folder/run.csv"
        let error = #expect(throws: RunQueryError.self) { try queries.exportCSV(of: run.id, to: nowhere) }
        guard case .cannotWrite(let path, _)? = error else {
            Issue.record("expected cannotWrite, got \(String(describing: error))")
            return
        }
        #expect(path == nowhere)
        #expect(error?.exitStatus == .ioError && error?.code == "cannotWrite")
        #expect(RunQueryError.noSuchRun(1).exitStatus == .usage && RunQueryError.journal("x").exitStatus == .unavailable)
    }

    @Test func onlyAnInterruptedRunIsResumable() throws {
        let folder = try Folder()
        let journal = try RunQueries.forWriting(environment: folder.environment)
        let finished = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(2)), t0UnixMs: 1, camera: "SIM")
        try journal.finish(run: finished.id, state: .finished, reason: "all 2 frames")
        let interrupted = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(2)), t0UnixMs: 2, camera: "SIM")
        journal.release(run: interrupted.id) // as a process that died leaves it
        #expect(throws: ResumeRefusal.refused("there is no run 9; `unleashed runs list` shows them")) {
            try RunQueries.interruptedRun(9, in: journal)
        }
        #expect(throws: ResumeRefusal.refused("run \(finished.id) has finished (all 2 frames); only an interrupted run can be resumed")) {
            try RunQueries.interruptedRun(finished.id, in: journal)
        }
        #expect(try RunQueries.interruptedRun(interrupted.id, in: journal).id == interrupted.id)
    }

    /// A run this process still shoots (its claim from `begin` is live) is refused, naming the owner.
    @Test func aRunALiveProcessShootsIsRefused() throws {
        let folder = try Folder()
        let journal = try RunQueries.forWriting(environment: folder.environment)
        let run = try journal.begin(plan: RunPlan(intervalMs: 5000, stop: .frames(2)), t0UnixMs: 1, camera: "SIM")
        defer { journal.release(run: run.id) }
        #expect {
            try RunQueries.interruptedRun(run.id, in: journal)
        } throws: { error in
            guard case .owned(let why) = error as? ResumeRefusal else { return false }
            return why.contains("\(ProcessInfo.processInfo.processIdentifier)")
        }
    }
}
