import Foundation
import GRDB
import Intervalometer
import Synchronization
import Testing
import UnleashedKit
import UnleashedTestSupport

/// A run on the real clock, on a camera whose pictures take no time: what a run's schedule does
/// while its journal cannot be written. `whenFrame` is called as each record arrives, and fills
/// or empties the disk while later slots are still to come: on the real clock a slot every 20 ms
/// leaves it that time (on a flowing test clock the run would be over first).
private func runOnRealClock(frames: Int, intervalMs: Int64, journal: SQLiteJournal,
                            whenFrame: @escaping @Sendable (Int) -> Void) async throws -> (RunEnding, [FrameRecord]) {
    let camera = ScriptedCamera(clock: ContinuousClock())
    // Burst: a slot a loaded test machine delays is still shot, so every slot is taken.
    let run = Timelapse(plan: RunPlan(intervalMs: intervalMs, stop: .frames(frames), overrun: .burst), camera: camera, journal: journal,
                        clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
    let seen = Task {
        var records: [FrameRecord] = []
        for await record in run.records {
            records.append(record)
            whenFrame(record.frame)
        }
        return records
    }
    let ending = try await run.start(cameraName: "scripted")
    return (ending, await seen.value)
}

@Suite("Journal faults: a full disk, two owners, concurrent creation, read-only journals", .serialized)
struct JournalFaultTests {
    @Test("a 300-frame run keeps its schedule while the disk is full, and every record is written once it has room")
    func diskFullThenRoom() async throws {
        // Room for the WAL of 300 records once the filler is gone (each commit appends a few pages).
        let disk = try SmallDisk(megabytes: 16)
        defer { disk.remove() }
        let journal = try SQLiteJournal(path: disk.directory + "/journal.sqlite")
        let filler = Mutex<String?>(nil)
        let (ending, records) = try await runOnRealClock(frames: 300, intervalMs: 20, journal: journal) { frame in
            // Full from frame 10 to frame 200: 190 frames with nowhere to go.
            if frame == 10 { filler.withLock { $0 = disk.fill() } }
            if frame == 200, let file = filler.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: file) }
        }
        #expect(filler.withLock { $0 } != nil)
        #expect(records.count == 300)
        #expect(records.allSatisfy { $0.outcome == .taken }, "no slot skipped or failed while the journal was full")
        #expect(ending.state == .finished && !ending.interrupted, "\(ending.reason)")
        let written = try journal.frames(of: ending.run.id)
        #expect(written.map(\.frame) == Array(1...300))
        #expect(try journal.run(ending.run.id)?.state == .finished)
    }

    @Test("a disk that stays full ends the run interrupted and resumable, every frame in the journal or the recovery file; a resume adds them")
    func diskStaysFull() async throws {
        let disk = try SmallDisk(megabytes: 16)
        defer { disk.remove() }
        let path = disk.directory + "/journal.sqlite"
        let journal = try SQLiteJournal(path: path)
        let filler = Mutex<String?>(nil)
        let (ending, records) = try await runOnRealClock(frames: 300, intervalMs: 20, journal: journal) { frame in
            if frame == 50 { filler.withLock { $0 = disk.fill() } }
        }
        #expect(records.count == 300)
        #expect(records.allSatisfy { $0.outcome == .taken }, "\(records.filter { $0.outcome != .taken }.prefix(3))")
        #expect(ending.interrupted && ending.state == .running, "\(ending.reason)")
        let recovery = try #require(ending.recoveryFile)
        #expect(ending.reason.contains(recovery))
        #expect(!recovery.hasPrefix(disk.directory), "the full disk cannot hold the recovery file")
        let inJournal = try journal.frames(of: ending.run.id)
        let inRecovery = JournalRecovery.records(in: [recovery])
        #expect(Set(inJournal.map(\.frame)).union(inRecovery.map(\.frame)) == Set(1...300), "every frame taken is accounted for")
        #expect(inJournal.count + inRecovery.count == 300)
        #expect(try journal.run(ending.run.id)?.state == .running, "the run stays resumable")

        // Room again: a resume adds the recovered records and carries on (nothing is left to shoot).
        if let file = filler.withLock({ $0 }) { try FileManager.default.removeItem(atPath: file) }
        let record = try #require(try journal.run(ending.run.id))
        let resumed = Timelapse(plan: record.plan, camera: ScriptedCamera(clock: ContinuousClock()), journal: journal,
                                clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let end = try await resumed.resume(record)
        #expect(end.state == .finished)
        let all = try journal.frames(of: ending.run.id)
        #expect(Set(all.map(\.frame)) == Set(1...300) && all.count == 300)
        #expect(!FileManager.default.fileExists(atPath: recovery), "the recovery file is removed once its records are in")
    }

    @Test("a run whose journal's disk is full before it begins is refused, saying so, with nothing shot")
    func fullBeforeStart() async throws {
        let disk = try SmallDisk(megabytes: 2)
        defer { disk.remove() }
        let journal = try SQLiteJournal(path: disk.directory + "/journal.sqlite")
        _ = disk.fill()
        let clock = RunClock()
        let camera = ScriptedCamera(clock: clock)
        let run = Timelapse(plan: RunPlan(intervalMs: 100, stop: .frames(3)), camera: camera, journal: journal,
                            clock: clock, wallClock: clock.wallClock)
        do {
            _ = try await clock.flowing { try await run.start(cameraName: "scripted") }
            Issue.record("the run began on a full disk")
        } catch {
            #expect(String(describing: error).contains("the disk holding it is full"), "\(error)")
        }
        #expect(await camera.shotCount == 0)
    }

    @Test("a run that a live process owns is not resumed by another; once that process is gone, it is")
    func oneOwner() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("owner-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        let journal = try SQLiteJournal(path: path)
        let run = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(3)), t0UnixMs: 1_790_000_000_000, camera: "scripted")
        // Another live process owns it: a child that sleeps.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["60"]
        try ChildProcesses.run(child)
        defer { child.terminate() }
        let other = try #require(RunOwner.startTicks(of: child.processIdentifier))
        let bootID = RunOwner.current.bootID
        let database = try DatabaseQueue(path: path)
        try await database.write { db in
            try db.execute(sql: "UPDATE owner SET pid = ?, startTicks = ?, program = 'unleashed daemon' WHERE run = ?",
                           arguments: [child.processIdentifier, other, run.id])
        }
        #expect(throws: JournalError.runOwned(path: path, run: run.id,
                                              owner: RunOwner(pid: child.processIdentifier, bootID: bootID, startTicks: other,
                                                              program: "unleashed daemon"))) {
            try journal.claim(run: run.id)
        }
        let clock = RunClock()
        let refused = Timelapse(plan: run.plan, camera: ScriptedCamera(clock: clock), journal: journal,
                                clock: clock, wallClock: clock.wallClock)
        await #expect(throws: TimelapseError.self) { _ = try await clock.flowing { try await refused.resume(run) } }
        #expect(try journal.frames(of: run.id).isEmpty, "the refused resume recorded nothing")

        // The same pid with another start time is another process: the owner is gone.
        try await database.write { db in
            try db.execute(sql: "UPDATE owner SET startTicks = startTicks + 1 WHERE run = ?", arguments: [run.id])
        }
        try journal.claim(run: run.id)
        // A killed owner blocks nothing either.
        try await database.write { db in
            try db.execute(sql: "UPDATE owner SET pid = ?, startTicks = ? WHERE run = ?",
                           arguments: [child.processIdentifier, other, run.id])
        }
        // Killed: whether or not it was collected yet (a zombie), it owns nothing.
        kill(child.processIdentifier, SIGKILL)
        // The kernel ends it in its own time, seen in /proc as the owner check sees it.
        _ = await eventually(every: .milliseconds(5)) { RunOwner.startTicks(of: child.processIdentifier) == nil }
        try journal.claim(run: run.id)
        #expect(try journal.liveOwner(of: run.id) == RunOwner.current)
        journal.release(run: run.id)
        #expect(try journal.liveOwner(of: run.id) == nil)
    }

    @Test("a journal whose creation was cut off after GRDB's own table is finished, not refused")
    func halfCreated() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("half-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/journal.sqlite"
        let database = try DatabaseQueue(path: path)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        }
        try database.close()
        let journal = try SQLiteJournal(path: path)
        #expect(try journal.runs().isEmpty)
        _ = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(1)), t0UnixMs: 0, camera: "scripted")
        #expect(try journal.runs().count == 1)
    }

    @Test("many first uses of a new journal at once all succeed")
    func concurrentCreation() async throws {
        for attempt in 0..<10 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("race-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/journal.sqlite"
            let failures = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        await withCheckedContinuation { continuation in
                            Thread.detachNewThread {
                                do {
                                    let journal = try SQLiteJournal(path: path)
                                    _ = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(1)), t0UnixMs: 0, camera: "x")
                                    continuation.resume(returning: nil)
                                } catch {
                                    continuation.resume(returning: "\(error)")
                                }
                            }
                        }
                    }
                }
                var failures: [String] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            #expect(failures.isEmpty, "attempt \(attempt): \(failures)")
        }
    }
}
