import Foundation
import GRDB
@testable import Intervalometer
import Testing
import UnleashedKit
import UnleashedTestSupport

/// A directory of its own for one test's journal files.
private struct Scratch {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-tests-\(UUID())")

    func path(_ name: String = "journal.sqlite") -> String { directory.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

private let plan = RunPlan(intervalMs: 5000, stop: .frames(300), exposure: .bracket(count: 3, stepThirds: 3),
                           overrun: .defer, minimumGapMs: 200, hook: "./on-frame.sh")

private func taken(_ frame: Int, part: Int = 1, latenessMicros: Int64 = 1500) -> FrameRecord {
    let scheduled = Int64(frame - 1) * 5000
    return FrameRecord(frame: frame, part: part, scheduledMs: scheduled, sentMs: scheduled + 1,
                       completedMs: scheduled + 61, latenessMicros: latenessMicros, outcome: .taken,
                       exposure: "1/125", meteredEV: "+12", shotCounter: 100 + frame)
}

@Suite("The SQLite run journal")
struct SQLiteJournalTests {
    @Test("every connection of a writable journal caches at most 512 KiB, so a daemon's memory stays bounded")
    func boundedCache() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let sizes = try journal.cacheSizes()
        #expect(sizes.writer == -512)
        #expect(sizes.reader == -512)
    }

    @Test("runs and frames read back as they were written, newest run first")
    func roundTrip() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path("nested/dirs/journal.sqlite"))
        let first = try journal.begin(plan: plan, t0UnixMs: 1_790_000_000_000, camera: "SIM0001")
        let second = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .never), t0UnixMs: 1_790_000_100_000,
                                       camera: "SIM0002")
        #expect(first.state == .running && first.endReason == nil)
        #expect(second.id > first.id)
        let frames = [
            taken(1, part: 1), taken(1, part: 2), taken(1, part: 3),
            FrameRecord(frame: 2, scheduledMs: 5000, outcome: .skipped, error: "overrun"),
            FrameRecord(frame: 3, scheduledMs: 10_000, sentMs: 10_002, latenessMicros: 2100, outcome: .failed,
                        error: "the camera is busy"),
        ]
        for frame in frames { try journal.append(frame, to: first.id) }
        try journal.append(taken(1), to: second.id)
        try journal.finish(run: first.id, state: .finished, reason: "all 300 frames")

        #expect(try journal.frames(of: first.id) == frames)
        #expect(try journal.frames(of: second.id) == [taken(1)])
        #expect(try journal.runs().map(\.id) == [second.id, first.id])
        var ended = first
        ended.state = .finished
        ended.endReason = "all 300 frames"
        #expect(try journal.run(first.id) == ended)
        #expect(try journal.run(second.id) == second)
        #expect(try journal.run(9999) == nil)
        #expect(try journal.lastFrame(of: first.id) == frames[4])
    }

    @Test("every kind of plan reads back from the file as it was written",
          arguments: [
              RunPlan(intervalMs: 5000, stop: .duration(milliseconds: 7_200_000)),
              RunPlan(intervalMs: 30_000, stop: .until(unixMilliseconds: 1_790_000_000_000), exposure: .bulb(milliseconds: 20_000)),
              RunPlan(intervalMs: 60_000, stop: .frames(10), exposure: .video(milliseconds: 5000), minimumGapMs: 1000),
              RunPlan(intervalMs: 600_000, stop: .frames(1), exposure: .video(milliseconds: 600_000), overrun: .burst),
          ])
    func plansRoundTrip(plan: RunPlan) throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let id = try SQLiteJournal(path: scratch.path()).begin(plan: plan, t0UnixMs: 1_790_000_000_000, camera: "SIM0001").id
        #expect(try SQLiteJournal(path: scratch.path()).run(id)?.plan == plan)
    }

    @Test("what was appended is there after the journal is closed and opened again")
    func durableAcrossReopening() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let run: RunRecord
        do {
            let journal = try SQLiteJournal(path: scratch.path())
            run = try journal.begin(plan: plan, t0UnixMs: 1_790_000_000_000, camera: "SIM0001")
            for frame in 1...20 { try journal.append(taken(frame), to: run.id) }
        }
        let reopened = try SQLiteJournal(path: scratch.path())
        #expect(try reopened.run(run.id) == run)
        #expect(try reopened.frames(of: run.id).map(\.frame) == Array(1...20))
        #expect(try reopened.lastFrame(of: run.id) == taken(20))
        try reopened.append(taken(21), to: run.id)
        #expect(try reopened.lastFrame(of: run.id)?.frame == 21)
    }

    @Test("a finished run is in the main file: a copy of the file alone, without its -wal, lists it with its frames")
    func finishedRunInMainFile() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        // Kept open, as a process that exits without closing anything leaves it.
        let journal = try SQLiteJournal(path: scratch.path())
        let run = try journal.begin(plan: plan, t0UnixMs: 1_790_000_000_000, camera: "SIM0001")
        for frame in 1...5 { try journal.append(taken(frame), to: run.id) }
        try journal.finish(run: run.id, state: .finished, reason: "300 frames")
        try FileManager.default.copyItem(atPath: scratch.path(), toPath: scratch.path("copy.sqlite"))
        let copy = try SQLiteJournal(path: scratch.path("copy.sqlite"), access: .readOnly)
        #expect(try copy.runs().map(\.id) == [run.id])
        #expect(try copy.run(run.id)?.state == .finished)
        #expect(try copy.frames(of: run.id).map(\.frame) == Array(1...5))
        withExtendedLifetime(journal) {}
    }

    @Test("a frame number and part already recorded for the run is refused; other runs and parts are not")
    func duplicateFrameRefused() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let run = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        let other = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        try journal.append(taken(3), to: run.id)
        #expect(throws: JournalError.duplicateFrame(path: scratch.path(), run: run.id, frame: 3, part: 1, camera: nil)) {
            try journal.append(FrameRecord(frame: 3, scheduledMs: 10_000, outcome: .skipped), to: run.id)
        }
        try journal.append(taken(3, part: 2), to: run.id)
        try journal.append(taken(3), to: other.id)
        #expect(try journal.frames(of: run.id) == [taken(3), taken(3, part: 2)])
        let error = JournalError.duplicateFrame(path: scratch.path(), run: run.id, frame: 3, part: 1, camera: nil)
        #expect(error.description.contains(scratch.path()))
    }

    @Test("a run that does not exist is an error, not an empty run")
    func unknownRun() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let missing = JournalError.runNotFound(path: scratch.path(), run: 42)
        #expect(throws: missing) { try journal.append(taken(1), to: 42) }
        #expect(throws: missing) { try journal.frames(of: 42) }
        #expect(throws: missing) { try journal.finish(run: 42, state: .failed, reason: "no") }
        #expect(throws: missing) { try journal.csv(of: 42) }
        #expect(throws: missing) { try journal.summary(of: 42) }
    }

    @Test("two journals on one file, one writing and one reading, see each other's records")
    func twoJournalsOneFile() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let writer = try SQLiteJournal(path: scratch.path())
        let reader = try SQLiteJournal(path: scratch.path())
        #expect(FileManager.default.fileExists(atPath: scratch.path() + "-wal"), "the journal is in WAL mode")
        let run = try writer.begin(plan: plan, t0UnixMs: 7, camera: "SIM0001")
        #expect(try reader.run(run.id) == run)
        for frame in 1...5 {
            try writer.append(taken(frame), to: run.id)
            #expect(try reader.lastFrame(of: run.id)?.frame == frame)
        }
        try reader.finish(run: run.id, state: .failed, reason: "the card is full")
        #expect(try writer.run(run.id)?.state == .failed)
        #expect(try writer.run(run.id)?.endReason == "the card is full")
    }

    @Test("a file of random bytes is reported as damaged, naming the file")
    func corruptFile() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        let bytes = (0..<8192).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.path()))
        do {
            _ = try SQLiteJournal(path: scratch.path())
            Issue.record("random bytes opened as a journal, \(seed)")
        } catch {
            guard case .corrupt(let path, _) = error else {
                Issue.record("expected .corrupt, got \(error), \(seed)")
                return
            }
            #expect(path == scratch.path())
            #expect(error.description.contains("the run journal \(scratch.path()) is damaged or not an SQLite database"))
        }
    }

    @Test("a directory where the file should be cannot be opened, and says so")
    func directoryInTheWay() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path(), withIntermediateDirectories: true)
        #expect {
            try SQLiteJournal(path: scratch.path())
        } throws: { error in
            guard let error = error as? JournalError, case .cannotOpen(let path, _) = error else { return false }
            return path == scratch.path()
        }
    }

    @Test("another program's SQLite database is refused and left untouched")
    func notAJournal() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        try DatabaseQueue(path: scratch.path()).write { db in
            try db.execute(sql: "CREATE TABLE photos (name TEXT)")
        }
        #expect(throws: JournalError.notAJournal(path: scratch.path())) { try SQLiteJournal(path: scratch.path()) }
        let tables = try DatabaseQueue(path: scratch.path()).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        #expect(tables == ["photos"])
    }

    @Test("a journal from a newer version is refused rather than misread")
    func newerVersion() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        _ = try SQLiteJournal(path: scratch.path())
        try DatabaseQueue(path: scratch.path()).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
        }
        #expect(throws: JournalError.newerVersion(path: scratch.path())) { try SQLiteJournal(path: scratch.path()) }
    }

    @Test("CSV has the documented header and quotes commas, quotes and line breaks (RFC 4180)")
    func csvQuoting() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let run = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        try journal.append(taken(1), to: run.id)
        try journal.append(FrameRecord(frame: 2, scheduledMs: 5000, sentMs: 5003, latenessMicros: 3000,
                                       outcome: .failed, error: "refused: \"busy\", try again\nlater",
                                       exposure: "bulb 2000ms"), to: run.id)
        try journal.append(FrameRecord(frame: 3, scheduledMs: 10_000, outcome: .skipped), to: run.id)
        let ramp = RampRecord(targetEV: 12.5, sceneEV: 13, residualEV: 0.125, rate: -3, intervalMs: 10_000)
        try journal.append(FrameRecord(frame: 4, scheduledMs: 15_000, outcome: .taken, exposure: "1/1000 ISO 100 f/2.8", ramp: ramp),
                           to: run.id)
        #expect(try journal.frames(of: run.id).last?.ramp == ramp, "what the ramp decided is kept with the frame")
        #expect(try journal.csv(of: run.id) == """
            frame,part,scheduled_ms,sent_ms,completed_ms,lateness_us,outcome,error,exposure,metered_ev,shot_counter,camera,\
            command_spread_us,completion_spread_us,ramp_target_ev,ramp_scene_ev,ramp_residual_ev,ramp_rate_ev_per_hour,interval_ms\r
            1,1,0,1,61,1500,taken,,1/125,+12,101,,,,,,,,\r
            2,1,5000,5003,,3000,failed,"refused: ""busy"", try again
            later",bulb 2000ms,,,,,,,,,,\r
            3,1,10000,,,,skipped,,,,,,,,,,,,\r
            4,1,15000,,,,taken,,1/1000 ISO 100 f/2.8,,,,,,12.500,13.000,0.125,-3.000,10000\r

            """)
    }

    @Test("a run read a page at a time is the run read whole, in both journals, and its lines are its CSV")
    func pages() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journals: [any RunJournal] = [try SQLiteJournal(path: scratch.path()), MemoryJournal()]
        for journal in journals {
            let other = try journal.begin(plan: plan, t0UnixMs: 0, camera: "other")
            let run = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
            // Interleaved with another run's frames, as two jobs write them.
            for frame in 1...11 {
                try journal.append(taken(frame), to: run.id)
                try journal.append(taken(frame), to: other.id)
            }
            var read: [FrameRecord] = []
            var pages = 0
            var position: Int64?
            repeat {
                let page = try journal.framePage(of: run.id, after: position, limit: 4)
                read += page.frames
                pages += 1
                position = page.next
            } while position != nil
            #expect(read == (try journal.frames(of: run.id)), "\(type(of: journal))")
            #expect(pages == 3, "4 + 4 + 3 frames")
        }
        let sqlite = try SQLiteJournal(path: scratch.path())
        #expect(throws: JournalError.runNotFound(path: scratch.path(), run: 42)) { try sqlite.framePage(of: 42, after: nil, limit: 4) }
        #expect(try sqlite.csv(of: 2) == FrameRecord.csvHeaderLine + (try sqlite.frames(of: 2)).map(\.csvLine).joined())
    }

    @Test("a run is interrupted when it is running in the journal and no live process shoots it")
    func interrupted() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let ended = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        try journal.finish(run: ended.id, state: .failed, reason: "the camera went away")
        let shooting = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        let left = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        journal.release(run: left.id)
        #expect(throws: NotResumable.noSuchRun(9)) { try journal.interruptedRun(9) }
        #expect {
            try journal.interruptedRun(ended.id)
        } throws: { error in
            guard case .ended(let record) = error as? NotResumable else { return false }
            return record.state == .failed && record.endReason == "the camera went away"
        }
        #expect(throws: NotResumable.owned(run: shooting.id, by: .current)) { try journal.interruptedRun(shooting.id) }
        #expect(try journal.interruptedRun(left.id).id == left.id)
    }

    @Test("the summary counts outcomes and gives lateness percentiles by nearest rank")
    func summary() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let run = try journal.begin(plan: plan, t0UnixMs: 0, camera: "SIM0001")
        #expect(try journal.summary(of: run.id) == RunSummary(frames: []))
        #expect(try journal.summary(of: run.id).p50LatenessMicros == nil)
        // Lateness 100...1 µs in reverse, so that the percentiles depend on sorting.
        for frame in 1...100 { try journal.append(taken(frame, latenessMicros: Int64(101 - frame)), to: run.id) }
        try journal.append(FrameRecord(frame: 101, scheduledMs: 500_000, outcome: .skipped), to: run.id)
        try journal.append(FrameRecord(frame: 102, scheduledMs: 505_000, sentMs: 505_900, latenessMicros: 900_000,
                                       outcome: .failed, error: "timed out"), to: run.id)
        let summary = try journal.summary(of: run.id)
        #expect(summary.taken == 100)
        #expect(summary.failed == 1)
        #expect(summary.skipped == 1)
        #expect(summary.firstMs == 0)
        #expect(summary.lastMs == 505_900)
        #expect(summary.maxLatenessMicros == 900_000)
        #expect(summary.p50LatenessMicros == 51, "the 51st of 101 values 1...100, 900000")
        #expect(summary.p99LatenessMicros == 100, "rank 100 of 101")
    }

    @Test("the journal lives where UNLEASHED_JOURNAL, else XDG_STATE_HOME, else HOME says")
    func defaultPath() {
        #expect(SQLiteJournal.defaultPath(environment: ["UNLEASHED_JOURNAL": "/tmp/j.sqlite", "XDG_STATE_HOME": "/x"])
            == "/tmp/j.sqlite")
        #expect(SQLiteJournal.defaultPath(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/a"])
            == "/x/state/unleashed/journal.sqlite")
        #expect(SQLiteJournal.defaultPath(environment: ["XDG_STATE_HOME": "", "HOME": "/home/a"])
            == "/home/a/.local/state/unleashed/journal.sqlite")
    }
}

@Suite("A run's cameras as a list in the journal")
struct RunCamerasTests {
    @Test("a rig whose camera names hold commas reads back name by name, after reopening too")
    func commasRoundTrip() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let names = ["Studio, left", "right", "Studio, \"top\""]
        let id: Int64
        do {
            let journal = try SQLiteJournal(path: scratch.path())
            let begun = try journal.begin(plan: plan, t0UnixMs: 1_700_000_000_000, cameras: names)
            id = begun.id
            #expect(begun.cameras == names)
            #expect(try journal.run(id)?.cameras == names)
            _ = try journal.begin(plan: plan, t0UnixMs: 1_700_000_000_000, camera: "one, with a comma")
        }
        let reopened = try SQLiteJournal(path: scratch.path())
        #expect(try reopened.run(id)?.cameras == names)
        #expect(try reopened.runs().map(\.cameras) == [["one, with a comma"], names])
        #expect(try reopened.run(id)?.camera == "Studio, left,right,Studio, \"top\"", "the joined form, for display")
    }

    @Test("a journal written before the list is migrated: rigs split on their commas, a run of one camera kept whole")
    func migratesOldJournal() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        var ids: [String: Int64] = [:]
        do {
            let journal = try SQLiteJournal(path: scratch.path())
            // A run of one camera whose name has a comma, with its frames (recorded without a name).
            ids["one"] = try journal.begin(plan: plan, t0UnixMs: 0, camera: "Studio, left").id
            try journal.append(taken(1), to: ids["one"]!)
            // A rig with frames, each naming its camera.
            ids["rig"] = try journal.begin(plan: plan, t0UnixMs: 0, cameras: ["a", "b"]).id
            var frame = taken(1)
            frame.camera = "a"
            try journal.append(frame, to: ids["rig"]!)
            // Runs without frames yet: the commas are all there is to go by.
            ids["rigUnshot"] = try journal.begin(plan: plan, t0UnixMs: 0, cameras: ["c", "d"]).id
            ids["plain"] = try journal.begin(plan: plan, t0UnixMs: 0, camera: "plain").id
        }
        // Back to the schema before the list: the comma-joined column is all the file has.
        try DatabaseQueue(path: scratch.path()).write { db in
            try db.execute(sql: "DROP TABLE runCamera")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v5-run-cameras'")
        }
        let migrated = try SQLiteJournal(path: scratch.path())
        #expect(try migrated.run(ids["one"]!)?.cameras == ["Studio, left"])
        #expect(try migrated.run(ids["rig"]!)?.cameras == ["a", "b"])
        #expect(try migrated.run(ids["rigUnshot"]!)?.cameras == ["c", "d"])
        #expect(try migrated.run(ids["plain"]!)?.cameras == ["plain"])
        #expect(try migrated.frames(of: ids["rig"]!).map(\.camera) == ["a"], "frames are untouched")
        let identifiers = try DatabaseQueue(path: scratch.path()).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
        #expect(identifiers.last == "v5-run-cameras")
    }

    @Test("a record encodes both the list and the joined names, and reads a document with only the joined names")
    func codable() throws {
        let record = RunRecord(id: 7, plan: plan, t0UnixMs: 5, cameras: ["a, b", "c"], state: .running)
        let data = try JSONEncoder().encode(record)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["camera"] as? String == "a, b,c")
        #expect(object["cameras"] as? [String] == ["a, b", "c"])
        #expect(try JSONDecoder().decode(RunRecord.self, from: data) == record)
        var old = object
        old["cameras"] = nil
        let decoded = try JSONDecoder().decode(RunRecord.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(decoded.cameras == ["a, b,c"], "an old document names one camera")
    }
}

@Suite("A rig whose camera names hold commas, through a run")
struct CommaRigRunTests {
    @Test("begun and resumed, the run keeps its cameras name by name and every record names its own")
    func beginAndResume() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let journal = try SQLiteJournal(path: scratch.path())
        let clock = RunClock()
        let names = ["Studio, left", "right"]
        func rig() throws -> Rig {
            try #require(Rig(names.map { RigCamera(name: $0, camera: ScriptedCamera(clock: clock)) }))
        }
        let plan = RunPlan(intervalMs: 1000, stop: .frames(3))
        let first = Timelapse(plan: plan, rig: try rig(), journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
        let started = try await clock.flowing { try await first.start(cameraName: names.joined(separator: ",")) }
        #expect(try journal.run(started.run.id)?.cameras == names)
        #expect(Set(try journal.frames(of: started.run.id).compactMap(\.camera)) == Set(names))

        let interrupted = try journal.begin(plan: plan, t0UnixMs: 1_700_000_000_000, cameras: names)
        let second = Timelapse(plan: plan, rig: try rig(), journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
        let record = try #require(try journal.run(interrupted.id))
        let resumed = try await clock.flowing { try await second.resume(record) }
        #expect(resumed.state == .finished)
        #expect(try journal.run(interrupted.id)?.cameras == names)
        let frames = try journal.frames(of: interrupted.id)
        #expect(frames.count == 6 && frames.allSatisfy { names.contains($0.camera ?? "") && $0.outcome == .taken })
    }
}
