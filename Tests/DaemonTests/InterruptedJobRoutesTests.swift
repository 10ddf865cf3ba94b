@testable import Daemon
import Foundation
import Intervalometer
import Testing
import UnleashedTestSupport

/// What the phone asks of a run that is not under way: its frames as CSV, and to resume it when it
/// was interrupted. Over the real socket with curl, on the demo camera, in a real SQLite journal,
/// the runs on a ``RunClock`` the tests move (``JobTests/withRig(flowing:_:)``).
@Suite("a job's CSV and resuming an interrupted job over the control API", .timeLimit(.minutes(1)))
struct InterruptedJobRoutesTests {
    /// A run as a process that lost its power leaves it: begun on `camera` at `t0` with slots
    /// `intervalMs` apart, its first `taken` slots recorded, never ended, and no owner alive.
    static func interruptedRun(_ journal: SQLiteJournal, camera: String = "demo", t0: Int64, intervalMs: Int64 = 200,
                               frames: Int = 10, taken: Int) throws -> RunRecord {
        let record = try journal.begin(plan: RunPlan(intervalMs: intervalMs, stop: .frames(frames)), t0UnixMs: t0, camera: camera)
        for frame in stride(from: 1, through: taken, by: 1) {
            let due = Int64(frame - 1) * intervalMs
            try journal.append(FrameRecord(frame: frame, scheduledMs: due, sentMs: due, completedMs: due + 80, latenessMicros: 150,
                                           outcome: .taken, exposure: "1/125", shotCounter: frame), to: record.id)
        }
        journal.release(run: record.id)
        return record
    }

    /// A GET's status, headers (names lower-cased) and body.
    static func download(_ rig: JobTests.Rig, _ path: String) async throws -> (status: Int, headers: [String: String], body: String) {
        let answer = try await Curl.request(socket: rig.socket, path: path, arguments: ["-i"])
        let parts = try #require(answer.body.range(of: "\r\n\r\n"), "no headers in \(answer.body)")
        var headers: [String: String] = [:]
        for line in answer.body[..<parts.lowerBound].split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (answer.status, headers, String(answer.body[parts.upperBound...]))
    }

    /// The job as `GET /v1/jobs` lists it.
    static func listed(_ rig: JobTests.Rig, _ id: Int64) async throws -> [String: Any] {
        let list = try await Curl.request(socket: rig.socket, path: "/v1/jobs")
        let jobs = try #require(list.json?["jobs"] as? [[String: Any]], "\(list.body)")
        return try #require(jobs.first { ($0["id"] as? NSNumber)?.int64Value == id }, "job \(id) is not listed: \(list.body)")
    }

    @Test("the CSV of a job is the CLI's CSV of the same journal, as a download named for the job")
    func csvIsTheCLIs() async throws {
        try await JobTests.withRig(flowing: true) { rig in
            let created = try await JobTests.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "frames": 6, "overrun": "burst"}}"#)
            let shot = try #require((created.json?["id"] as? NSNumber)?.int64Value, "\(created.body)")
            _ = try await JobTests.followToEnd(rig.jobs, job: shot)
            // Text a camera or the system may put in a record: commas, quotes, line breaks.
            let failed = try rig.journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(2)), t0UnixMs: 1, camera: "demo")
            try rig.journal.append(FrameRecord(frame: 1, scheduledMs: 0, outcome: .failed, error: "the camera said \"busy\", then\r\nnothing"),
                                   to: failed.id)
            try rig.journal.append(FrameRecord(frame: 2, scheduledMs: 1000, outcome: .skipped, error: "the camera was not connected"),
                                   to: failed.id)
            try rig.journal.finish(run: failed.id, state: .failed, reason: "the camera went away")

            for id in [shot, failed.id] {
                let csv = try await Self.download(rig, "/v1/jobs/\(id)/frames.csv")
                #expect(csv.status == 200, "\(csv.body)")
                #expect(csv.headers["content-type"] == "text/csv; charset=utf-8")
                #expect(csv.headers["content-disposition"] == "attachment; filename=\"unleashed-run-\(id).csv\"")
                #expect(csv.body == (try rig.journal.csv(of: id)), "what `unleashed runs export \(id) --csv` writes")
            }
            #expect(try rig.journal.csv(of: shot).components(separatedBy: "\r\n").count == 1 + 6 + 1, "a header, 6 frames, the end")
        }
    }

    @Test("a run of more frames than one read of the journal takes comes whole, in journal order")
    func csvOfManyPages() async throws {
        try await JobTests.withRig(flowing: false) { rig in
            let record = try rig.journal.begin(plan: RunPlan(intervalMs: 100, stop: .never), t0UnixMs: 1, camera: "demo")
            let count = 2 * 1000 + 17
            for frame in 1...count {
                try rig.journal.append(FrameRecord(frame: frame, scheduledMs: Int64(frame) * 100, sentMs: Int64(frame) * 100,
                                                   outcome: .taken, exposure: "1/\(frame)"), to: record.id)
            }
            let csv = try await Self.download(rig, "/v1/jobs/\(record.id)/frames.csv")
            #expect(csv.status == 200)
            #expect(csv.body == (try rig.journal.csv(of: record.id)))
            let lines = csv.body.components(separatedBy: "\r\n").dropFirst().dropLast()
            #expect(lines.map { Int($0.prefix { $0 != "," }) } == (1...count).map { $0 }, "every frame once, in order")
        }
    }

    @Test("an unknown job, or a path that names none, answers 404 with the API's JSON error")
    func unknownJob() async throws {
        try await JobTests.withRig(flowing: false) { rig in
            for path in ["/v1/jobs/42/frames.csv", "/v1/jobs/-1/frames.csv", "/v1/jobs/99999999999999999999/frames.csv"] {
                let csv = try await Self.download(rig, path)
                #expect(csv.status == 404, "\(path)")
                #expect(csv.headers["content-type"]?.hasPrefix("application/json") == true, "\(path): \(csv.headers)")
            }
            let named = try await Curl.request(socket: rig.socket, path: "/v1/jobs/last/frames.csv")
            #expect(named.status == 404 && JobTests.message(named) == "there is no job last", "\(named.body)")
            for path in ["/v1/jobs/42/resume", "/v1/jobs/x/resume", "/v1/jobs/-3/resume"] {
                let resumed = try await JobTests.post(rig, path)
                #expect(resumed.status == 404, "\(path): \(resumed.body)")
            }
            let unknown = try await JobTests.post(rig, "/v1/jobs/42/resume")
            #expect(JobTests.message(unknown) == "there is no job 42")
            let wrongMethod = try await Curl.request(socket: rig.socket, path: "/v1/jobs/42/resume")
            #expect(wrongMethod.status == 405)
        }
    }

    @Test("a viewer may download a job's frames but not resume a job, nor may anyone while the daemon is locked")
    func permissions() async throws {
        let viewer = AccessTests.bearer(AccessTests.viewerSecret)
        try await AccessTests.withServer(access: AccessPolicy(tokens: AccessTests.tokens)) { _, socket in
            // Past the permission check, to the job lookup.
            #expect(try await Curl.request(socket: socket, path: "/v1/jobs/42/frames.csv", arguments: viewer).status == 404)
            let refused = try await Curl.request(socket: socket, path: "/v1/jobs/42/resume", arguments: ["-X", "POST"] + viewer)
            #expect(refused.status == 403)
            #expect(AccessTests.message(refused) == "this needs the operator role; token 'dashboard' has the viewer role")
        }
        try await AccessTests.withServer(access: AccessPolicy(tokens: AccessTests.tokens, locked: true)) { _, socket in
            let locked = try await Curl.request(socket: socket, path: "/v1/jobs/42/resume",
                                                arguments: ["-X", "POST"] + AccessTests.bearer(AccessTests.operatorSecret))
            #expect(locked.status == 403)
        }
    }

    @Test("an interrupted run is listed as resumable; resuming it carries on its slots from where it stopped, on its schedule")
    func resumeContinuesTheSlots() async throws {
        try await JobTests.withRig(flowing: false) { rig in
            let t0 = rig.clock.wallClock()
            let record = try Self.interruptedRun(rig.journal, t0: t0, frames: 10, taken: 3)
            // Slots 4 and 5 pass while nothing runs; slot 6 is due at 1000 ms.
            await rig.clock.advance(by: .milliseconds(900))
            let before = try await Self.listed(rig, record.id)
            #expect(before["state"] as? String == "suspended")
            #expect(before["resumable"] as? Bool == true, "\(before)")
            #expect(before["resumeRefusal"] is NSNull, "\(before)")

            let resumed = try await JobTests.post(rig, "/v1/jobs/\(record.id)/resume")
            #expect(resumed.status == 200, "\(resumed.body)")
            #expect((resumed.json?["id"] as? NSNumber)?.int64Value == record.id)
            #expect(resumed.json?["state"] as? String == "running", "\(resumed.body)")
            #expect(resumed.json?["resumable"] as? Bool == false)
            let ended = try await rig.clock.flowing { try await JobTests.followToEnd(rig.jobs, job: record.id) }
            #expect(ended.state == .finished)

            let frames = try rig.journal.frames(of: record.id)
            let outcomes = frames.map { "\($0.frame) \($0.outcome.rawValue) \($0.error ?? "")" }
            #expect(frames.map(\.frame) == Array(1...10), "one record per slot, none twice: \(outcomes)")
            #expect(frames.map(\.scheduledMs) == (0..<10).map { Int64($0) * 200 }, "the original schedule")
            #expect(frames.filter { $0.outcome == .skipped }.map(\.frame) == [4, 5], "\(outcomes)")
            #expect(frames.filter { $0.frame >= 6 }.allSatisfy { $0.outcome == .taken }, "\(outcomes)")
            #expect(try rig.journal.run(record.id)?.state == .finished)

            let again = try await JobTests.post(rig, "/v1/jobs/\(record.id)/resume")
            #expect(again.status == 409)
            #expect(JobTests.message(again) == "job \(record.id) has finished (all slots done); only an interrupted job can be resumed")
        }
    }

    @Test("a resume is refused, 409 with what stands in the way, for a job under way, paused, on a busy or missing camera, or shot elsewhere")
    func refusals() async throws {
        try await JobTests.withRig(flowing: false) { rig in
            let running = try #require((try await JobTests.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "forever": true}}"#)
                .json?["id"] as? NSNumber)?.int64Value)
            try await rig.clock.flowing(until: try await rig.t0(of: running)) { try await JobTests.waitForFrames(rig, job: running, count: 1) }
            let t0 = rig.clock.wallClock()
            let underWay = try await JobTests.post(rig, "/v1/jobs/\(running)/resume")
            #expect(underWay.status == 409)
            #expect(JobTests.message(underWay) == "job \(running) is running; only an interrupted job can be resumed")

            // Its camera runs another job: listed as resumable (a job's start or end is not told
            // to the interrupted job's watchers), refused when asked.
            let sameCamera = try Self.interruptedRun(rig.journal, t0: t0, taken: 2)
            #expect(try await Self.listed(rig, sameCamera.id)["resumable"] as? Bool == true)
            let busy = try await JobTests.post(rig, "/v1/jobs/\(sameCamera.id)/resume")
            #expect(busy.status == 409)
            #expect(JobTests.message(busy) == "camera demo is running job \(running); stop it first")

            _ = try await JobTests.post(rig, "/v1/jobs/\(running)/pause")
            let paused = try await JobTests.post(rig, "/v1/jobs/\(running)/resume")
            #expect(paused.status == 409)
            #expect(JobTests.message(paused) == "job \(running) is paused, not interrupted; continue it instead")

            let attic = try Self.interruptedRun(rig.journal, camera: "attic", t0: t0, taken: 1)
            let missing = try await JobTests.post(rig, "/v1/jobs/\(attic.id)/resume")
            #expect(missing.status == 409)
            let notHeld = "job \(attic.id) runs on camera attic, which the daemon does not hold (it holds demo); connect it, then resume the job"
            #expect(JobTests.message(missing) == notHeld)
            let listedAttic = try await Self.listed(rig, attic.id)
            #expect(listedAttic["resumable"] as? Bool == false)
            #expect(listedAttic["resumeRefusal"] as? String == notHeld, "the listing says what the resume would answer")

            let elsewhere = try Self.interruptedRun(rig.journal, t0: t0, taken: 1)
            let other = try await Self.ownedByAnotherProcess(elsewhere.id, journal: rig.directory + "/journal.sqlite")
            defer { other.terminate() }
            let shotElsewhere = try await JobTests.post(rig, "/v1/jobs/\(elsewhere.id)/resume")
            #expect(shotElsewhere.status == 409)
            #expect(JobTests.message(shotElsewhere).hasPrefix("job \(elsewhere.id) is being shot by unleashed (pid \(other.processIdentifier))"),
                    "\(shotElsewhere.body)")
            #expect(try await Self.listed(rig, elsewhere.id)["resumable"] as? Bool == false)
            #expect(try rig.journal.frames(of: elsewhere.id).count == 1, "the refused resumes recorded nothing")
            #expect(try rig.journal.frames(of: attic.id).count == 1)
            #expect(try rig.journal.frames(of: sameCamera.id).count == 2)
        }
    }

    @Test("a run the daemon could not take up by itself says why, and a client resumes it once what stood in the way is gone")
    func resumeWhatTheDaemonLeft() async throws {
        try await JobTests.withRig(flowing: false) { rig in
            let running = try #require((try await JobTests.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "forever": true}}"#)
                .json?["id"] as? NSNumber)?.int64Value)
            try await rig.clock.flowing(until: try await rig.t0(of: running)) { try await JobTests.waitForFrames(rig, job: running, count: 1) }
            let left = try Self.interruptedRun(rig.journal, t0: rig.clock.wallClock(), taken: 2)
            #expect(await rig.jobs.resumeInterrupted() == [], "its camera runs another job")
            let listed = try await Self.listed(rig, left.id)
            #expect(listed["reason"] as? String
                == "interrupted; the daemon could not resume it: camera demo is running job \(running); stop it first")
            #expect(listed["resumable"] as? Bool == true)

            let stopped = try await rig.clock.flowing { try await JobTests.post(rig, "/v1/jobs/\(running)/stop") }
            #expect(stopped.json?["state"] as? String == "finished", "\(stopped.body)")
            let resumed = try await JobTests.post(rig, "/v1/jobs/\(left.id)/resume")
            #expect(resumed.status == 200, "\(resumed.body)")
            #expect(resumed.json?["state"] as? String == "running")
            #expect(resumed.json?["reason"] is NSNull)
        }
    }

    /// Makes a live process other than this one the owner of `run` (as a CLI that shoots it
    /// would be), and returns that process.
    static func ownedByAnotherProcess(_ run: Int64, journal path: String) async throws -> Process {
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/bin/sleep")
        other.arguments = ["60"]
        try ChildProcesses.run(other)
        let ticks = try #require(RunOwner.startTicks(of: other.processIdentifier))
        let update = Process()
        let updated = AsyncStream<Void> { done in update.terminationHandler = { _ in done.finish() } }
        update.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        update.arguments = ["-c", """
            import sqlite3
            boot = open('/proc/sys/kernel/random/boot_id').read().strip()
            c = sqlite3.connect('\(path)', isolation_level=None)
            c.execute("INSERT OR REPLACE INTO owner (run, pid, bootID, startTicks, program, since) VALUES (?, ?, ?, ?, 'unleashed', 0)",
                      (\(run), \(other.processIdentifier), boot, \(ticks)))
            """]
        try ChildProcesses.run(update)
        for await _ in updated {}
        #expect(update.terminationStatus == 0)
        return other
    }

    @Test("every interrupted run is listed, however many ended after it, and one a daemon leaves to its clients says so")
    func listingKeepsInterruptedRuns() async throws {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let interrupted = try Self.interruptedRun(journal, t0: 1, taken: 2)
        for _ in 0..<21 {
            let run = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(1)), t0UnixMs: 2, camera: "demo")
            try journal.finish(run: run.id, state: .finished, reason: "all slots done")
        }
        let jobs = JobManager(journal: journal, cameras: cameras, resumesByItself: false)
        let listed = try await jobs.jobs()
        #expect(listed.count == 1 + 20, "the interrupted run and the 20 latest that ended")
        let job = try #require(listed.first)
        #expect(job.id == interrupted.id && job.state == .suspended)
        #expect(job.resumable && job.resumeRefusal == nil)
        #expect(job.reason == "interrupted; it resumes when a client asks (daemon.resume_runs is off)")
        #expect(listed.dropFirst().allSatisfy { $0.state == .finished && !$0.resumable && $0.resumeRefusal == nil })
        try? await demo.finish()
    }
}
