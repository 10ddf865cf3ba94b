import Daemon
import Foundation
import Intervalometer
import JSON
import Testing
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// Jobs as clients meet them: submitted, followed and stopped over the real socket with curl,
/// on the in-process demo camera, journalled in a real SQLite file. The runs wait on a
/// ``RunClock`` that the tests move: a schedule passes as fast as the camera shoots it, and a
/// slot comes only when a test lets time flow.
@Suite("jobs over the control API", .timeLimit(.minutes(1)))
struct JobTests {
    /// A simulated camera held as "demo" and a journal in a directory of its own, for tests
    /// that drive a ``JobManager`` directly.
    static func managerParts() async throws -> (Demo, SQLiteJournal, CameraRegistry, directory: String) {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let directory = "/tmp/unleashed-jobs-\(UUID().uuidString.prefix(8))"
        let journal = try SQLiteJournal(path: directory + "/journal.sqlite")
        let cameras = CameraRegistry()
        await cameras.add(demo.camera, name: "demo", source: "demo")
        return (demo, journal, cameras, directory)
    }

    /// A manager whose runs wait on `clock`, its wall clock moving with it.
    static func manager(_ journal: SQLiteJournal, _ cameras: CameraRegistry, clock: RunClock, followerBacklog: Int = 1024) -> JobManager {
        JobManager(journal: journal, cameras: cameras, followerBacklog: followerBacklog, clock: clock,
                   wallClock: DaemonClock(host: clock.hostClock()))
    }

    /// What a test works with: the socket to reach, and the manager, journal and clock behind it.
    struct Rig {
        let socket: String
        let jobs: JobManager
        let journal: SQLiteJournal
        let cameras: CameraRegistry
        let directory: String
        let clock: RunClock

        /// The instant of a job's slot 1.
        func t0(of id: Int64) async throws -> RunClock.Instant {
            clock.instant(unixMs: try #require(try await jobs.job(id).t0UnixMs))
        }
    }

    /// One Server-Sent Event.
    struct Event: Equatable {
        var name: String
        var data: String

        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] }
        func frame() throws -> FrameRecord { try JSONDecoder().decode(FrameRecord.self, from: Data(data.utf8)) }
    }

    /// Runs `body` against a started server with the demo camera as "demo" and a fresh
    /// journal, then stops everything and removes the files. With `flowing`, time flows for the
    /// runs throughout; without, it stands still unless `body` moves it.
    static func withRig<T>(flowing: Bool, _ body: (Rig) async throws -> T) async throws -> T {
        let (demo, journal, cameras, directory) = try await Self.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = RunClock()
        let jobs = Self.manager(journal, cameras, clock: clock)
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = directory + "/run/control.sock"
        let server = ControlServer(service: service, api: ControlAPI(cameras: cameras, jobs: jobs, access: AccessPolicy(), version: "test"))
        try await server.start()
        let result: Result<T, any Error>
        do {
            let rig = Rig(socket: service.socket, jobs: jobs, journal: journal, cameras: cameras, directory: directory, clock: clock)
            if flowing {
                result = .success(try await clock.flowing { try await body(rig) })
            } else {
                result = .success(try await body(rig))
            }
        } catch {
            result = .failure(error)
        }
        // With time flowing: a run stopped while it prepares a slot still waits for the slot's
        // deadline before it ends.
        _ = try? await clock.flowing { await jobs.suspendAll() }
        await server.stop()
        try? await demo.finish()
        return try result.get()
    }

    static func post(_ rig: Rig, _ path: String, _ body: String? = nil) async throws -> Curl.Answer {
        try await Curl.request(socket: rig.socket, path: path,
                               arguments: ["-X", "POST", "-H", "Content-Type: application/json"] + (body.map { ["--data-binary", $0] } ?? []))
    }

    /// Submits `plan` (JSON text) and returns the new job's id.
    private static func submit(_ rig: Rig, _ plan: String) async throws -> Int64 {
        let answer = try await post(rig, "/v1/jobs", "{\"plan\": \(plan)}")
        #expect(answer.status == 201, "\(answer.body)")
        return try #require((answer.json?["id"] as? NSNumber)?.int64Value, "\(answer.body)")
    }

    /// The events of a job's stream up to its `end` event (or `limit` events), after checking
    /// that the stream opens with the subscription comment.
    private static func events(_ rig: Rig, _ path: String, limit: Int = .max) async throws -> [Event] {
        try await Curl.streaming(socket: rig.socket, path: path) { lines in
            var iterator = lines.makeAsyncIterator()
            #expect(await iterator.next() == ": subscribed")
            var events: [Event] = []
            var name = "message"
            while events.count < limit, let line = await iterator.next() {
                if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") {
                    events.append(Event(name: name, data: String(line.dropFirst(6))))
                    if name == "end" { break }
                }
            }
            return events
        }
    }

    /// The error message of an answer.
    static func message(_ answer: Curl.Answer) -> String {
        (answer.json?["error"] as? [String: Any])?["message"] as? String ?? "(no message in \(answer.body))"
    }

    /// Waits until the job has recorded `count` frames, following it in process.
    static func waitForFrames(_ rig: Rig, job id: Int64, count: Int) async throws {
        var seen = 0
        for await update in try await rig.jobs.follow(id) {
            if case .frame = update { seen += 1 }
            if seen >= count { return }
        }
        Issue.record("job \(id) ended after \(seen) frames, before \(count)")
    }

    /// Follows a job to its end, and again from its last frame whenever it is let go for
    /// falling behind; returns how it ended.
    static func followToEnd(_ jobs: JobManager, job id: Int64) async throws -> RunEnding {
        var from = 1
        while true {
            for await update in try await jobs.follow(id, fromFrame: from) {
                switch update {
                case .frame(let record): from = max(from, record.frame)
                case .ended(let ending, _): return ending
                }
            }
        }
    }

    @Test("a 10-frame time-lapse submitted by POST is followed to its end: 10 frames, then the end, then it is listed")
    func submitAndFollow() async throws {
        try await Self.withRig(flowing: true) { rig in
            let created = try await Self.post(rig, "/v1/jobs", #"{"camera": "demo", "plan": {"intervalMs": 200, "frames": 10, "overrun": "burst"}}"#)
            #expect(created.status == 201, "\(created.body)")
            let job = try #require(created.json)
            let id = try #require((job["id"] as? NSNumber)?.int64Value)
            #expect(job["camera"] as? String == "demo")
            #expect(job["kind"] as? String == "timelapse")
            #expect(["waiting", "running"].contains(job["state"] as? String))
            #expect(job["t0"] is String)
            let plan = try #require(job["plan"] as? [String: Any])
            #expect(plan["intervalMs"] as? Int == 200)
            #expect(plan["frames"] as? Int == 10)
            #expect((plan["exposure"] as? [String: Any])?["kind"] as? String == "camera")
            #expect(plan["overrun"] as? String == "burst")
            #expect(plan["minimumGapMs"] as? Int == 0)

            let events = try await Self.events(rig, "/v1/jobs/\(id)/events")
            #expect(events.map(\.name) == Array(repeating: "frame", count: 10) + ["end"])
            let frames = try events.dropLast().map { try $0.frame() }
            #expect(frames.map(\.frame) == Array(1...10))
            #expect(frames.allSatisfy { $0.outcome == .taken })
            #expect(frames.map(\.scheduledMs) == (0..<10).map { Int64($0) * 200 })
            #expect(events.first?.json?["run"] as? Int == Int(id))
            let end = try #require(events.last?.json)
            #expect(end["state"] as? String == "finished")
            #expect(end["reason"] as? String == "all slots done")
            #expect((end["summary"] as? [String: Any])?["taken"] as? Int == 10)
            let run = try JSONDecoder().decode(RunRecord.self, from: JSONSerialization.data(withJSONObject: try #require(end["run"] as? [String: Any])))
            #expect(run.id == id)
            #expect(run.state == .finished)

            let list = try await Curl.request(socket: rig.socket, path: "/v1/jobs")
            #expect(list.status == 200)
            let listed = try #require((list.json?["jobs"] as? [[String: Any]])?.first)
            #expect((listed["id"] as? NSNumber)?.int64Value == id)
            #expect(listed["state"] as? String == "finished")
            #expect((listed["summary"] as? [String: Any])?["taken"] as? Int == 10)
            #expect((listed["lastFrame"] as? [String: Any])?["frame"] as? Int == 10)
            let one = try await Curl.request(socket: rig.socket, path: "/v1/jobs/\(id)")
            #expect(one.status == 200)
            #expect(one.json?["reason"] as? String == "all slots done")
        }
    }

    @Test("stop now ends a job at once and answers with it ended; stop afterFrame ends it after the slot under way")
    func stop() async throws {
        try await Self.withRig(flowing: true) { rig in
            let first = try await Self.submit(rig, #"{"intervalMs": 200, "forever": true}"#)
            try await Self.waitForFrames(rig, job: first, count: 2)
            let stopped = try await Self.post(rig, "/v1/jobs/\(first)/stop")
            #expect(stopped.status == 200, "\(stopped.body)")
            #expect(stopped.json?["state"] as? String == "finished")
            #expect((stopped.json?["reason"] as? String)?.hasPrefix("stopped by") == true, "\(stopped.body)")
            let again = try await Self.post(rig, "/v1/jobs/\(first)/stop")
            #expect(again.status == 409)
            #expect(Self.message(again) == "job \(first) is finished; only a job that runs takes commands")

            // The camera is free again.
            let second = try await Self.submit(rig, #"{"intervalMs": 200, "forever": true, "overrun": "burst"}"#)
            try await Self.waitForFrames(rig, job: second, count: 2)
            let later = try await Self.post(rig, "/v1/jobs/\(second)/stop", #"{"when": "afterFrame"}"#)
            #expect(later.status == 200, "\(later.body)")
            #expect(later.json?["nextSlot"] is NSNull, "no slot is to come once a stop is asked for: \(later.body)")
            let events = try await Self.events(rig, "/v1/jobs/\(second)/events")
            let end = try #require(events.last)
            #expect(end.name == "end")
            let frames = try events.dropLast().map { try $0.frame() }
            #expect(end.json?["reason"] as? String == "stopped after frame \(frames.last?.frame ?? 0) on request")
            #expect(frames.allSatisfy { $0.outcome == .taken })

            let wrong = try await Self.post(rig, "/v1/jobs/\(second)/stop", #"{"when": "later"}"#)
            #expect(wrong.status == 400)
            #expect(Self.message(wrong) == "when: 'later' is not a choice; choose now or afterFrame")
        }
    }

    @Test("extra-frame shoots one picture outside the schedule, journalled as an extra part of the last slot")
    func extraFrame() async throws {
        try await Self.withRig(flowing: true) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 300, "frames": 6, "overrun": "burst"}"#)
            try await Self.waitForFrames(rig, job: id, count: 2)
            let extra = try await Self.post(rig, "/v1/jobs/\(id)/extra-frame")
            #expect(extra.status == 200, "\(extra.body)")
            let events = try await Self.events(rig, "/v1/jobs/\(id)/events")
            let frames = try events.filter { $0.name == "frame" }.map { try $0.frame() }
            let outcomes = frames.map { "\($0.frame).\($0.part) \($0.outcome.rawValue) \($0.error ?? "")" }
            #expect(frames.count == 7)
            let extraFrame = try #require(frames.first { $0.exposure == "extra" })
            #expect(extraFrame.part == 2)
            #expect(frames.filter { $0.part == 1 }.map(\.frame) == Array(1...6))
            #expect(frames.allSatisfy { $0.outcome == .taken }, "\(outcomes)")
            #expect((events.last?.json?["summary"] as? [String: Any])?["taken"] as? Int == 7, "\(outcomes)")
        }
    }

    @Test("extra-frame on a job still waiting for its first slot is refused, and nothing is journalled")
    func extraFrameBeforeTheFirstSlot() async throws {
        try await Self.withRig(flowing: false) { rig in
            let answer = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 300, "frames": 3}, "startDelayMs": 3600000}"#)
            let id = try #require((answer.json?["id"] as? NSNumber)?.int64Value, "\(answer.body)")
            let extra = try await Self.post(rig, "/v1/jobs/\(id)/extra-frame")
            #expect(extra.status == 409, "\(extra.body)")
            #expect(Self.message(extra) == "job \(id) is waiting; only a job that runs takes commands")
            let job = try await Curl.request(socket: rig.socket, path: "/v1/jobs/\(id)")
            #expect(job.json?["lastFrame"] is NSNull, "\(job.body)")
        }
    }

    @Test("a second job on a camera that runs one is refused with 409 naming the job")
    func conflict() async throws {
        try await Self.withRig(flowing: false) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "forever": true}"#)
            let second = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "frames": 3}}"#)
            #expect(second.status == 409)
            #expect(Self.message(second) == "camera demo is running job \(id); stop it first")
            // The body's own mistakes come first, busy camera or not: 422 (the plan's rules,
            // which the schema cannot state) before 409.
            let mistakes: [(String, String)] = [
                (#"{"intervalMs": 0, "frames": 3}"#, "plan.intervalMs: must be longer than 0"),
                (#"{"intervalMs": 200, "frames": 0}"#, "plan.frames: a run needs at least 1 frame"),
                (#"{"intervalMs": 200, "durationMs": -1}"#, "plan.durationMs: must be longer than 0"),
                (#"{"intervalMs": 200, "frames": 3, "minimumGapMs": -1}"#, "plan.minimumGapMs: cannot be negative"),
                (#"{"intervalMs": 200, "frames": 3, "exposure": {"kind": "bulb", "ms": 0}}"#, "plan.exposure.ms: a bulb exposure lasts at least 1 ms"),
                (#"{"intervalMs": 200, "frames": 3, "exposure": {"kind": "bracket", "count": 4, "stepThirds": 3}}"#,
                 "plan.exposure.count: a bracket has an odd number of frames, 3 or more"),
                (#"{"intervalMs": 200, "frames": 3, "exposure": {"kind": "video", "clipMs": 500}}"#,
                 "plan.intervalMs: the interval is too short: each slot needs at least 500ms (a 500ms clip)"),
            ]
            for (plan, message) in mistakes {
                let answer = try await Self.post(rig, "/v1/jobs", "{\"plan\": \(plan)}")
                #expect(answer.status == 422, "\(plan) → \(answer.body)")
                #expect(Self.message(answer) == message, "\(plan)")
            }
            #expect(try await rig.jobs.jobs().filter { $0.state != .finished }.map(\.id) == [id])
        }
    }

    @Test("bad requests answer 4xx naming the problem while a job on the camera runs undisturbed")
    func badRequests() async throws {
        try await Self.withRig(flowing: true) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "frames": 10, "overrun": "burst"}"#)
            let cases: [(String, Int, String)] = [
                (#"{"plan": {"intervalMs": 200, "frames": 3"#, 400,
                 #"the body is not JSON: send an object like {"plan": {"intervalMs": 5000, "frames": 50}}"#),
                (#"{"plan": {"intervalMs": "5s", "frames": 3}}"#, 400, "plan.intervalMs: expected a whole number from \(Int64.min) to \(Int64.max)"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "overrun": "later"}}"#, 400,
                 "plan.overrun: 'later' is not a policy; choose skip, defer or burst"),
                (#"{"camera": "demo"}"#, 400, #"plan: missing; say what to shoot, e.g. {"intervalMs": 5000, "frames": 50}"#),
                (#"{"plan": {"intervalMs": 200}}"#, 400,
                 #"plan: say when to stop with exactly one of frames, durationMs, until ("06:30") or forever (true)"#),
                (#"{"plan": {"intervalMs": 200, "frames": 2.5}}"#, 400, "plan.frames: expected a whole number from \(Int.min) to \(Int.max)"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "exposure": {"kind": "flash"}}}"#, 400,
                 "plan.exposure.kind: 'flash' is not an exposure; choose camera, bulb, bracket, video or ramp"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "exposure": {"kind": "bulb"}}}"#, 400,
                 "plan.exposure.ms: missing"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "interval": 5}}"#, 400,
                 "plan.interval: unknown member; known members: durationMs, exposure, forever, frames, hook, hookTimeoutMs, intervalMs, minimumGapMs, overrun, until"),
                // A well-formed plan the daemon cannot run is 422: a hook it cannot find.
                (#"{"plan": {"intervalMs": 200, "frames": 3, "hook": "on-frame.sh"}}"#, 422,
                 "plan.hook: on-frame.sh is not an absolute path; give the hook's full path"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "hook": "/nonexistent/on-frame.sh"}}"#, 422,
                 "plan.hook: /nonexistent/on-frame.sh is not a file"),
                (#"{"plan": {"intervalMs": 200, "frames": 3, "hookTimeoutMs": 500}}"#, 400,
                 "plan.hookTimeoutMs: is the time limit of a hook; give plan.hook too"),
                (#"{"plan": {"intervalMs": 200, "until": "25:00"}}"#, 400,
                 "plan.until: '25:00' is not a time; give HH:MM (the next time the clock shows it) or an ISO 8601 timestamp"),
                (#"{"camera": "attic", "plan": {"intervalMs": 200, "frames": 3}}"#, 404, "the daemon holds no camera named 'attic'; it holds demo"),
                (#"{"plan": {"intervalMs": 200, "frames": 3}, "startDelayMs": -5}"#, 400, "startDelayMs: cannot be negative"),
                (#"[1, 2]"#, 400, "body: expected an object"),
            ]
            for (body, status, message) in cases {
                let answer = try await Self.post(rig, "/v1/jobs", body)
                #expect(answer.status == status, "\(body) → \(answer.body)")
                #expect(Self.message(answer) == message, "\(body)")
            }
            let huge = try await Self.post(rig, "/v1/jobs", "{\"plan\": \"" + String(repeating: "x", count: 100_000) + "\"}")
            #expect(huge.status == 413)

            let events = try await Self.events(rig, "/v1/jobs/\(id)/events")
            let frames = try events.filter { $0.name == "frame" }.map { try $0.frame() }
            #expect(frames.map(\.frame) == Array(1...10))
            #expect(frames.allSatisfy { $0.outcome == .taken }, "every frame taken while the bad requests came: \(frames.filter { $0.outcome != .taken })")

            // With the camera free, the plan's own rules come back as 422 too.
            let tooShort = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "frames": 3, "exposure": {"kind": "video", "clipMs": 500}}}"#)
            #expect(tooShort.status == 422)
            #expect(Self.message(tooShort).contains("the interval is too short"), "\(tooShort.body)")
            // A plan the camera cannot do as it is set is the camera's conflict, not a bad request.
            let notBulb = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 1000, "frames": 3, "exposure": {"kind": "bulb", "ms": 100}}}"#)
            #expect(notBulb.status == 409, "\(notBulb.body)")
            #expect(Self.message(notBulb).contains("bulb"), "\(notBulb.body)")
            #expect(try await rig.jobs.jobs().count == 1, "a refused plan leaves nothing in the journal")
        }
    }

    @Test("an unknown or non-numeric job id answers 404")
    func unknownJob() async throws {
        try await Self.withRig(flowing: false) { rig in
            for path in ["/v1/jobs/42", "/v1/jobs/42/events"] {
                let answer = try await Curl.request(socket: rig.socket, path: path)
                #expect(answer.status == 404)
                #expect(Self.message(answer) == "there is no job 42")
            }
            let stop = try await Self.post(rig, "/v1/jobs/42/stop")
            #expect(stop.status == 404)
            let named = try await Curl.request(socket: rig.socket, path: "/v1/jobs/last")
            #expect(named.status == 404)
            #expect(Self.message(named) == "there is no job last")
        }
    }

    @Test("following with ?from=3 replays the journalled frames from 3, then the live ones, with no duplicates or gaps")
    func followFrom() async throws {
        try await Self.withRig(flowing: true) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "frames": 8}"#)
            try await Self.waitForFrames(rig, job: id, count: 4)
            let live = try await Self.events(rig, "/v1/jobs/\(id)/events?from=3")
            #expect(try live.dropLast().map { try $0.frame().frame } == Array(3...8))
            #expect(live.last?.name == "end")
            // Once ended, the same request replays from the journal.
            let replay = try await Self.events(rig, "/v1/jobs/\(id)/events?from=6")
            #expect(try replay.dropLast().map { try $0.frame().frame } == [6, 7, 8])
            #expect(replay.last?.json?["state"] as? String == "finished")
            let bad = try await Curl.request(socket: rig.socket, path: "/v1/jobs/\(id)/events?from=x")
            #expect(bad.status == 400)
        }
    }

    @Test("pause holds a job's slots and continue carries on, its schedule moved by the time paused")
    func pauseAndContinue() async throws {
        try await Self.withRig(flowing: false) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "frames": 4, "overrun": "burst"}"#)
            // Time flows up to slot 1 and stands still there: the pause comes between slots.
            try await rig.clock.flowing(until: try await rig.t0(of: id)) { try await Self.waitForFrames(rig, job: id, count: 1) }
            let paused = try await Self.post(rig, "/v1/jobs/\(id)/pause")
            #expect(paused.json?["state"] as? String == "paused")
            // Held for three intervals: no slot may come in that time.
            await rig.clock.advance(by: .milliseconds(600))
            #expect(try journalCount(rig, id) == 1, "no slot is shot while paused")
            let continued = try await Self.post(rig, "/v1/jobs/\(id)/continue")
            #expect(continued.json?["state"] as? String == "running")
            let events = try await rig.clock.flowing { try await Self.events(rig, "/v1/jobs/\(id)/events") }
            let frames = try events.dropLast().map { try $0.frame() }
            #expect(frames.map(\.frame) == [1, 2, 3, 4])
            #expect(frames.allSatisfy { $0.outcome == .taken }, "nothing is skipped while paused")
            #expect(frames.map(\.scheduledMs) == [0, 800, 1000, 1200], "the slots after the pause moved by its length")
        }

        func journalCount(_ rig: Rig, _ id: Int64) throws -> Int { try rig.journal.frames(of: id).count }
    }

    @Test("a job's next slot is its schedule's: the slot after each shot, none while paused, moved by the pause after it")
    func nextSlotFollowsTheSchedule() async throws {
        try await Self.withRig(flowing: false) { rig in
            let (changes, control) = await rig.jobs.watch()
            defer { control.finish() }
            var watched = changes.makeAsyncIterator()
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "frames": 4, "overrun": "burst"}"#)
            let t0 = try #require(try await rig.jobs.job(id).t0UnixMs)
            /// The job as watchers are next told it with `condition` holding.
            func told(_ condition: (JobSnapshot) -> Bool) async throws -> JobSnapshot {
                while let change = await watched.next() {
                    if case .job(let job) = change, job.id == id, condition(job) { return job }
                }
                throw CancellationError()
            }
            try await rig.clock.flowing(until: try await rig.t0(of: id)) {
                _ = try await told { $0.nextSlot == NextSlot(frame: 2, dueUnixMs: t0 + 200) }
            }
            let paused = try await Self.post(rig, "/v1/jobs/\(id)/pause")
            #expect(paused.json?["nextSlot"] is NSNull, "paused: no slot is coming (\(paused.body))")
            await rig.clock.advance(by: .milliseconds(600))
            let continued = try await Self.post(rig, "/v1/jobs/\(id)/continue")
            #expect((continued.json?["nextSlot"] as? [String: Any])?["frame"] as? Int == 2, "the answer has the moved slot: \(continued.body)")
            _ = try await told { $0.nextSlot == NextSlot(frame: 2, dueUnixMs: t0 + 800) }
            let running = try await Curl.request(socket: rig.socket, path: "/v1/jobs/\(id)")
            let next = try #require(running.json?["nextSlot"] as? [String: Any], "\(running.body)")
            #expect(next["frame"] as? Int == 2)
            #expect(next["at"] as? String == JSONValue.isoTimestamp(t0 + 800), "slot 2 moved by the 600 ms paused")
            let ended = try await rig.clock.flowing { try await told { !$0.state.isLive } }
            #expect(ended.nextSlot == nil)
            #expect(ended.summary.taken == 4)
        }
    }

    @Test("suspendAll leaves the run running in the journal; a new manager resumes it on its original schedule")
    func suspendAndResume() async throws {
        let (demo, journal, cameras, directory) = try await Self.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let clock = RunClock()
        let before = Self.manager(journal, cameras, clock: clock)
        let plan = RunPlan(intervalMs: 300, stop: .frames(30))
        let submitted = try await before.submit(camera: nil, plan: plan)
        let id = submitted.id
        let t0 = try #require(submitted.t0UnixMs)
        var updates = try await before.follow(id).makeAsyncIterator()
        // Time flows up to slot 3 and stands still there: the suspension comes while the run
        // waits for slot 4, not while it prepares it (which would wait for the slot's deadline).
        try await clock.flowing(until: clock.instant(unixMs: t0 + 600)) { for _ in 1...3 { _ = await updates.next() } }
        await before.suspendAll()
        var suspended: RunEnding?
        while let update = await updates.next() {
            if case .ended(let ending, _) = update { suspended = ending }
        }
        #expect(suspended?.state == .running)
        #expect(try journal.run(id)?.state == .running)
        #expect(try await before.job(id).state == .suspended)
        #expect(try journal.frames(of: id).count == 3)
        await #expect(throws: JobError.shuttingDown) { try await before.submit(camera: nil, plan: plan) }

        // Down for a second after slot 3: slots 4 to 6 pass, and the next start carries on.
        await clock.advance(to: clock.instant(unixMs: t0 + 1600))
        let after = Self.manager(journal, cameras, clock: clock)
        #expect(await after.resumeInterrupted() == [id])
        let ended = try await clock.flowing { try await Self.followToEnd(after, job: id) }
        #expect(ended.state == .finished)
        let frames = try journal.frames(of: id)
        #expect(frames.map(\.frame) == Array(1...30), "one record per slot, in order")
        #expect(frames.map(\.scheduledMs) == (0..<30).map { Int64($0) * 300 }, "the original schedule")
        let outcomes = frames.map { ($0.frame, $0.outcome, $0.error ?? "") }
        let down = frames.filter { $0.outcome == .skipped && $0.error == "the run was not running" }
        #expect(down.map(\.frame) == [4, 5, 6], "the slots passed while down are recorded as skipped: \(outcomes)")
        #expect(frames.filter { !(4...6).contains($0.frame) }.allSatisfy { $0.outcome == .taken }, "every other slot was shot: \(outcomes)")
        #expect(try journal.run(id)?.state == .finished)
        await after.suspendAll()
        try? await demo.finish()
    }

    @Test("a rig's job fires both cameras every slot, records each, refuses a job on a camera it holds, and resumes as a rig")
    func rigJob() async throws {
        let (demo, journal, cameras, directory) = try await Self.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let second = try await Demo.start(stateFile: nil, options: DemoOptions(seed: 7))
        await cameras.add(second.camera, name: "second", source: "demo")
        let clock = RunClock()
        let jobs = Self.manager(journal, cameras, clock: clock)
        let plan = RunPlan(intervalMs: 300, stop: .frames(30))
        let submitted = try await jobs.submit(rig: ["demo", "second"], plan: plan)
        let id = submitted.id
        #expect(try await jobs.job(id).camera == "demo,second")
        await #expect(throws: JobError.cameraBusy(camera: "second", job: id)) { try await jobs.submit(camera: "second", plan: plan) }
        await #expect(throws: JobError.self) { try await jobs.submit(rig: ["demo", "nonesuch"], plan: plan) }

        var updates = try await jobs.follow(id).makeAsyncIterator()
        // Time flows up to slot 2 and stands still there: the suspension comes while the run
        // waits for slot 3, not while it prepares it (which would wait for the slot's deadline).
        let slot2 = clock.instant(unixMs: try #require(submitted.t0UnixMs) + 300)
        try await clock.flowing(until: slot2) { for _ in 1...4 { _ = await updates.next() } }
        await jobs.suspendAll()
        while await updates.next() != nil {}
        let resumed = Self.manager(journal, cameras, clock: clock)
        #expect(await resumed.resumeInterrupted() == [id])
        _ = try await clock.flowing { try await Self.followToEnd(resumed, job: id) }
        let frames = try journal.frames(of: id)
        for name in ["demo", "second"] {
            #expect(frames.filter { $0.camera == name }.map(\.frame) == Array(1...30), "\(name): one record per slot")
        }
        #expect(frames.filter { $0.outcome == .taken }.allSatisfy { $0.commandSpreadMicros != nil })
        try? await demo.finish()
        try? await second.finish()
    }

    @Test("a follower that does not keep up is let go and never holds up the job")
    func slowFollower() async throws {
        let (demo, journal, cameras, directory) = try await Self.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = RunClock()
        let jobs = Self.manager(journal, cameras, clock: clock, followerBacklog: 2)
        let id = try await jobs.submit(camera: nil, plan: RunPlan(intervalMs: 150, stop: .frames(8))).id
        let slow = try await jobs.follow(id)
        // Any follower, however quick, may be let go with a backlog of 2: the test's own
        // follower follows again when it is.
        let ending = try await clock.flowing { try await Self.followToEnd(jobs, job: id) }
        #expect(ending.state == .finished)
        #expect(try await jobs.job(id).state == .finished)
        // Every slot went by on time for the job: none failed waiting for the follower.
        #expect(try journal.frames(of: id).filter { $0.part == 1 }.map(\.frame) == Array(1...8))
        #expect(try journal.frames(of: id).allSatisfy { $0.outcome != .failed })
        var received: [JobUpdate] = []
        for await update in slow { received.append(update) }
        #expect(received.count < 8, "only what fitted its backlog, not all 8 frames")
        #expect(!received.contains { if case .ended = $0 { true } else { false } }, "it was let go before the end")
        try? await demo.finish()
    }

    @Test("a long job holds only its newest frames; a follower from frame 1 still gets every frame once, and the summary counts all")
    func longJobHoldsNewestFrames() async throws {
        let (demo, journal, cameras, directory) = try await Self.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = RunClock()
        let jobs = JobManager(journal: journal, cameras: cameras, framesKept: 4, clock: clock, wallClock: DaemonClock(host: clock.hostClock()))
        let id = try await jobs.submit(camera: nil, plan: RunPlan(intervalMs: 150, stop: .frames(120))).id
        let (held, replayed, ended) = try await clock.flowing { () async throws -> (Int, [Int], RunSummary?) in
            var seen = 0
            for await update in try await jobs.follow(id) {
                if case .frame = update { seen += 1 }
                if seen == 25 { break }
            }
            let held = await jobs.framesHeld(id)
            // Frames 1 to 17 or more have left memory by now: they come from the journal.
            var frames: [Int] = []
            var summary: RunSummary?
            for await update in try await jobs.follow(id, fromFrame: 1) {
                switch update {
                case .frame(let record): frames.append(record.frame)
                case .ended(_, let total): summary = total
                }
            }
            return (held, frames, summary)
        }
        #expect(held >= 4 && held < 8, "between framesKept and twice that, not all 25: \(held)")
        #expect(replayed == Array(1...120))
        let journalled = try journal.frames(of: id)
        #expect(journalled.count == 120)
        #expect(ended == RunSummary(frames: journalled), "the summary taken frame by frame is the journal's")
        #expect(try await jobs.job(id).summary == RunSummary(frames: journalled))
        #expect(await jobs.framesHeld(id) == 0)
        try? await demo.finish()
    }

    @Test("a client that leaves an event stream ends its subscription; the job goes on")
    func clientLeaves() async throws {
        try await Self.withRig(flowing: false) { rig in
            let id = try await Self.submit(rig, #"{"intervalMs": 200, "forever": true}"#)
            let first = try await rig.clock.flowing(until: try await rig.t0(of: id)) {
                try await Self.events(rig, "/v1/jobs/\(id)/events", limit: 1)
            }
            #expect(first.map(\.name) == ["frame"])
            // curl is gone; the server notices the closed connection and lets the follower go
            // (real I/O: the socket's close, polled on the real clock).
            _ = await eventually(every: .milliseconds(20)) { await rig.jobs.followerCount(id) == 0 }
            #expect(await rig.jobs.followerCount(id) == 0)
            #expect(try await rig.jobs.job(id).state == .running)
        }
    }

    @Test("a job waits out its start delay, and a stop then ends it with no frames")
    func startDelay() async throws {
        try await Self.withRig(flowing: false) { rig in
            let created = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 200, "frames": 3}, "startDelayMs": 60000}"#)
            #expect(created.status == 201, "\(created.body)")
            #expect(created.json?["state"] as? String == "waiting")
            let id = try #require((created.json?["id"] as? NSNumber)?.int64Value)
            let stopped = try await Self.post(rig, "/v1/jobs/\(id)/stop")
            #expect(stopped.json?["state"] as? String == "finished")
            #expect((stopped.json?["summary"] as? [String: Any])?["taken"] as? Int == 0)
            #expect(stopped.json?["lastFrame"] is NSNull)
        }
    }

    @Test("a video job records clips and reads back its plan in the shape it was sent")
    func videoJob() async throws {
        try await Self.withRig(flowing: true) { rig in
            let created = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 600, "frames": 2, "exposure": {"kind": "video", "clipMs": 200}, "overrun": "defer", "minimumGapMs": 50}}"#)
            #expect(created.status == 201, "\(created.body)")
            #expect(created.json?["kind"] as? String == "video")
            let plan = try #require(created.json?["plan"] as? [String: Any])
            let exposure = try #require(plan["exposure"] as? [String: Any])
            #expect(exposure["kind"] as? String == "video")
            #expect(exposure["clipMs"] as? Int == 200)
            #expect(plan["overrun"] as? String == "defer")
            #expect(plan["minimumGapMs"] as? Int == 50)
            let id = try #require((created.json?["id"] as? NSNumber)?.int64Value)
            let events = try await Self.events(rig, "/v1/jobs/\(id)/events")
            let frames = try events.dropLast().map { try $0.frame() }
            #expect(frames.map(\.frame) == [1, 2])
            #expect(frames.allSatisfy { $0.outcome == .taken }, "\(frames)")
            #expect(events.last?.json?["state"] as? String == "finished")
        }
    }

    @Test("a ramped job sets the exposure before each slot, reads back its plan and streams what the ramp decided")
    func rampJob() async throws {
        try await Self.withRig(flowing: true) { rig in
            let created = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 1500, "frames": 2, "overrun": "defer", "exposure": {"kind": "ramp", "maxISO": 1600, "apertures": ["f/4"], "gapMs": 500}}}"#)
            #expect(created.status == 201, "\(created.body)")
            let exposure = try #require((created.json?["plan"] as? [String: Any])?["exposure"] as? [String: Any])
            #expect(exposure["kind"] as? String == "ramp" && exposure["maxISO"] as? Int == 1600 && exposure["gapMs"] as? Int == 500)
            #expect(exposure["apertures"] as? [String] == ["f/4"])
            let id = try #require((created.json?["id"] as? NSNumber)?.int64Value)
            let events = try await Self.events(rig, "/v1/jobs/\(id)/events")
            let frames = try events.dropLast().map { try $0.frame() }
            #expect(frames.map(\.frame) == [1, 2])
            #expect(frames.allSatisfy { $0.outcome == .taken && $0.exposure?.hasSuffix("f/4") == true && $0.ramp?.intervalMs == 1500 },
                    "\(frames)")
            let refused = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 1500, "frames": 2, "exposure": {"kind": "ramp", "maxISO": "high"}}}"#)
            #expect(refused.status == 400, "\(refused.body)")
            let badProgram = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 1500, "frames": 2, "exposure": {"kind": "ramp", "program": {"keyframes": []}}}}"#)
            #expect(badProgram.status == 422 && badProgram.body.contains("program: keyframes: empty"), "\(badProgram.body)")

            // What the CLI sends for --ramp program FILE --night-interval: it must reach the daemon whole.
            let programmed = try await Self.post(rig, "/v1/jobs", #"{"plan": {"intervalMs": 1500, "frames": 2, "overrun": "defer", "exposure": {"kind": "ramp", "apertures": ["f/4"], "gapMs": 500, "bulbFromMs": null, "nightIntervalMs": 3000, "program": {"keyframes": [{"frame": 1, "mode": "fixed", "shutter": "1/250", "iso": 200, "aperture": "f/4"}, {"at": "3s", "evOffset": -0.5}]}}}}"#)
            #expect(programmed.status == 201, "\(programmed.body)")
            let readBack = try #require((programmed.json?["plan"] as? [String: Any])?["exposure"] as? [String: Any])
            #expect(readBack["nightIntervalMs"] as? Int == 3000 && readBack["bulbFromMs"] is NSNull)
            let keyframes = try #require((readBack["program"] as? [String: Any])?["keyframes"] as? [[String: Any]])
            #expect(keyframes.map { $0["at"] as? String } == ["0ms", "3000ms"] && keyframes[0]["shutter"] as? String == "1/250")
            let programmedID = try #require((programmed.json?["id"] as? NSNumber)?.int64Value)
            let programmedFrames = try await Self.events(rig, "/v1/jobs/\(programmedID)/events").dropLast().map { try $0.frame() }
            #expect(programmedFrames.first?.exposure == "1/250 ISO 200 f/4", "the fixed keyframe ran in the daemon: \(programmedFrames)")
        }
    }

    @Test("resumeInterrupted leaves a run whose camera the daemon does not hold")
    func resumeMissingCamera() async throws {
        let directory = "/tmp/unleashed-jobs-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try SQLiteJournal(path: directory + "/journal.sqlite")
        let record = try journal.begin(plan: RunPlan(intervalMs: 1000, stop: .frames(3)), t0UnixMs: 0, camera: "attic")
        let jobs = JobManager(journal: journal, cameras: CameraRegistry())
        #expect(await jobs.resumeInterrupted() == [])
        #expect(try journal.run(record.id)?.state == .running)
        let snapshot = try await jobs.job(record.id)
        #expect(snapshot.state == .suspended)
        #expect(snapshot.reason == "interrupted; it resumes when the daemon holds camera attic")
    }
}
