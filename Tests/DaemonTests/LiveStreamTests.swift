import CameraKit
import Foundation
import Intervalometer
import JSON
import Testing
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport
@testable import Daemon

/// `GET /v1/live` as a dashboard meets it: a real server on its socket, its TCP port and its web
/// listener, read with curl, on the in-process demo camera and a journal in a real SQLite file.
/// Every wait is bounded: curl gives up on a stream by itself, and polls have a deadline.
@Suite("the live stream, GET /v1/live", .timeLimit(.minutes(2)))
struct LiveStreamTests {
    static let viewerSecret = "live-viewer-secret-0123456789"
    static let tokens = [DaemonConfiguration.AccessToken(name: "wall", secret: viewerSecret, role: .viewer)]

    /// What a test works with: where to reach the server, and what stands behind it.
    struct Rig {
        let socket: String
        /// The web listener, with its paired browsers.
        let web: WebListenerTests.Running
        /// `http://127.0.0.1:PORT` of the TCP listener, which needs a token.
        let tcp: String
        let jobs: JobManager
        let cameras: CameraRegistry
        let demo: Demo
        /// What the server's followers share.
        let feed: LiveFeed
    }

    /// Runs `body` against a started server holding the demo camera as "demo" and a group "rig"
    /// of it, with the viewer token, a TCP listener and the web app's listener; then stops it
    /// all and removes the files. With `clock` the runs wait on it; without, on the real clock.
    static func withRig<T>(clock: RunClock? = nil, _ body: (Rig) async throws -> T) async throws -> T {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        let jobs = clock.map { JobTests.manager(journal, cameras, clock: $0) } ?? JobManager(journal: journal, cameras: cameras)
        var setup = DemoServer.Setup(demo: demo, cameras: cameras, jobs: jobs, directory: directory)
        setup.configuration.groups = [DaemonConfiguration.Group(name: "rig", cameras: ["demo"])]
        setup.access = AccessPolicy(tokens: Self.tokens)
        setup.web = DaemonConfiguration.Web(listen: DaemonConfiguration.ListenAddress("127.0.0.1:0", allowingAnyPort: true))
        setup.tcp = true
        setup.version = "0.0.0-live"
        let served: Result<T, any Error>
        do {
            served = .success(try await DemoServer.with(setup) { server in try await serve(server) })
        } catch {
            served = .failure(error)
        }
        // The simulator is this rig's, not the server's: finished once the server has stopped.
        try? await demo.finish()
        return try served.get()

        func serve(_ server: DemoServer) async throws -> T {
            let (web, tcp) = (await server.webURL, await server.tcpURL)
            guard let web, let tcp else {
                throw StreamError("the server did not say its ports: web \(web ?? "none"), TCP \(tcp ?? "none")")
            }
            let rig = Rig(socket: server.socket, web: WebListenerTests.Running(url: web, socket: server.socket, browsers: server.browsers),
                          tcp: tcp, jobs: jobs, cameras: cameras, demo: demo, feed: server.api.liveFeed)
            let result: Result<T, any Error>
            do { result = .success(try await body(rig)) } catch { result = .failure(error) }
            if let clock {
                // A run stopped while it prepares a slot waits for the slot's deadline before it ends.
                _ = try? await clock.flowing { await jobs.suspendAll() }
            } else {
                await jobs.suspendAll()
            }
            return try result.get()
        }
    }

    /// The events of a live stream, read from its lines.
    struct LiveReader {
        private var lines: AsyncStream<String>.Iterator

        init(_ lines: AsyncStream<String>) { self.lines = lines.makeAsyncIterator() }

        /// Checks that the stream opens with the subscription comment, and returns its first
        /// event, which must be the snapshot.
        mutating func opening() async throws -> LiveSnapshot {
            #expect(await lines.next() == ": subscribed")
            let first = try await next()
            guard case .snapshot(let snapshot)? = first else {
                throw StreamError("the stream's first event is not a snapshot: \(String(describing: first))")
            }
            return snapshot
        }

        /// The next event; nil once the stream has ended.
        mutating func next() async throws -> LiveEvent? {
            var name = "message"
            var data: [String] = []
            while let line = await lines.next() {
                if line.isEmpty {
                    if !data.isEmpty {
                        let json = try JSONDecoder().decode(JSONValue.self, from: Data(data.joined(separator: "\n").utf8))
                        return try LiveEvent(eventName: name, data: json)
                    }
                    name = "message"
                } else if line.hasPrefix("event: ") {
                    name = String(line.dropFirst("event: ".count))
                } else if line.hasPrefix("data: ") {
                    data.append(String(line.dropFirst("data: ".count)))
                }
            }
            return nil
        }

        /// The next event about jobs (a job, a frame) or a resync, past camera events and heartbeats.
        mutating func nextJobChange() async throws -> LiveEvent? {
            while let event = try await next() {
                switch event {
                case .job, .frame, .resync, .snapshot: return event
                case .camera, .heartbeat: continue
                }
            }
            return nil
        }

        /// The frames and job documents of job `id` up to the document saying it ended (or the
        /// stream's end): what a page shows of one run.
        mutating func run(_ id: Int64) async throws -> (frames: [FrameRecord], jobs: [JobDocument]) {
            var frames: [FrameRecord] = []
            var jobs: [JobDocument] = []
            while let event = try await nextJobChange() {
                switch event {
                case .frame(let frame, let run):
                    #expect(run == id, "a frame of run \(run) on a stream with only job \(id)")
                    frames.append(frame)
                case .job(let job):
                    #expect(job.id == id)
                    jobs.append(job)
                    if !job.state.isLive { return (frames, jobs) }
                default:
                    Issue.record("unexpected while job \(id) runs: \(event)")
                    return (frames, jobs)
                }
            }
            Issue.record("the stream ended before job \(id) did")
            return (frames, jobs)
        }
    }

    struct StreamError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Follows `/v1/live` on the socket; curl gives up after `timeLimit` seconds, so a stream that
    /// never sends what a test waits for ends the wait.
    static func live<T>(_ rig: Rig, timeLimit: Int = 40, _ body: (inout LiveReader) async throws -> T) async throws -> T {
        try await Curl.streaming(socket: rig.socket, path: "/v1/live", timeLimit: timeLimit) { lines in
            var reader = LiveReader(lines)
            return try await body(&reader)
        }
    }

    /// A document from a GET on the socket.
    static func get<D: Decodable>(_ rig: Rig, _ path: String, as type: D.Type) async throws -> D {
        let answer = try await Curl.request(socket: rig.socket, path: path)
        #expect(answer.status == 200, "\(path): \(answer.body)")
        return try JSONDecoder().decode(D.self, from: Data(answer.body.utf8))
    }

    static func post(_ rig: Rig, _ path: String, _ body: String? = nil) async throws -> Curl.Answer {
        let data = body.map { ["--data-binary", $0] } ?? []
        return try await Curl.request(socket: rig.socket, path: path, arguments: ["-X", "POST", "-H", "Content-Type: application/json"] + data)
    }

    /// Submits `{"plan": plan, …extra}` and returns the new job's id.
    static func submit(_ rig: Rig, _ plan: String, extra: String = "") async throws -> Int64 {
        let answer = try await post(rig, "/v1/jobs", "{\"plan\": \(plan)\(extra)}")
        #expect(answer.status == 201, "\(answer.body)")
        return try #require((answer.json?["id"] as? NSNumber)?.int64Value, "\(answer.body)")
    }

    /// Whether `condition` holds within `seconds`, asked every 20 ms.
    static func eventually(within seconds: Int = 20, _ condition: () async -> Bool) async throws -> Bool {
        await UnleashedTestSupport.eventually(every: .milliseconds(20), giveUpAfter: .seconds(seconds), condition)
    }

    @Test("the stream opens with the comment, then a snapshot that says what status, cameras, groups and jobs say, on the daemon's clock")
    func snapshot() async throws {
        // The daemon's clock stands still here: the snapshot's time is exactly its reading.
        let clock = RunClock()
        try await Self.withRig(clock: clock) { rig in
            // An ended job and a waiting one, neither of which changes while the test reads.
            let stopped = try await Self.submit(rig, #"{"intervalMs": 1000, "frames": 3}"#, extra: #", "startDelayMs": 60000"#)
            #expect(try await Self.post(rig, "/v1/jobs/\(stopped)/stop").status == 200)
            let waiting = try await Self.submit(rig, #"{"intervalMs": 1000, "frames": 3}"#, extra: #", "startDelayMs": 60000"#)

            let snapshot = try await Self.live(rig) { live in try await live.opening() }
            #expect(snapshot.nowUnixMs == clock.wallClock(), "the snapshot's time is the daemon's clock")

            let status = try await Self.get(rig, "/v1/status", as: DaemonStatus.self)
            #expect(snapshot.status.version == "0.0.0-live")
            #expect(snapshot.status.version == status.version)
            #expect(snapshot.status.cameras == status.cameras)
            #expect(snapshot.status.cameras.map(\.name) == ["demo"])
            #expect(snapshot.status.cameras.first?.status != nil)
            #expect(abs(snapshot.status.uptimeSeconds - status.uptimeSeconds) < 5)
            #expect(snapshot.cameras == (try await Self.get(rig, "/v1/cameras", as: CameraList.self)))
            #expect(snapshot.cameras.cameras == [CameraList.Entry(name: "demo", source: "demo", identity: rig.demo.camera.identity)])
            #expect(snapshot.groups == (try await Self.get(rig, "/v1/groups", as: GroupList.self)))
            #expect(snapshot.groups.groups == [GroupList.Group(name: "rig", cameras: ["demo"])])
            #expect(snapshot.jobs == (try await Self.get(rig, "/v1/jobs", as: JobList.self)))
            #expect(snapshot.jobs.jobs.map(\.id) == [waiting, stopped])
            #expect(snapshot.jobs.jobs.map(\.state) == [.waiting, .finished])
            // Only running jobs have recent frames; this one has none yet.
            #expect(snapshot.recentFrames == [LiveSnapshot.RecentFrames(run: waiting, frames: [])])
        }
    }

    @Test("a shot taken through the API after the snapshot arrives as shotCompleted for the camera, with its counter")
    func shot() async throws {
        try await Self.withRig { rig in
            try await Self.live(rig) { live in
                let snapshot = try await live.opening()
                #expect(snapshot.status.cameras.first?.status?.shotCounter == 0)
                let answer = try await Self.post(rig, "/v1/cameras/demo/shoot")
                #expect(answer.status == 200, "\(answer.body)")
                let counter = try #require(answer.json?["counter"] as? Int, "\(answer.body)")
                #expect(counter == 1)
                while let event = try await live.next() {
                    guard case .camera(let message) = event,
                          case .shotCompleted(counter: let shot, cameraTime: _) = message.event else { continue }
                    #expect(message.camera == "demo")
                    #expect(shot == counter)
                    return
                }
                Issue.record("the stream ended before the shot (counter \(counter)) arrived")
            }
        }
    }

    @Test("a job's start, each frame in order with its run, and its end arrive; a stream opened mid-run has its frames so far, none missed or twice")
    func job() async throws {
        let clock = RunClock()
        try await Self.withRig(clock: clock) { rig in
            try await Self.live(rig) { first in
                #expect(try await first.opening().jobs.jobs.isEmpty)
                let id = try await Self.submit(rig, #"{"intervalMs": 200, "frames": 6, "overrun": "burst"}"#)
                let event = try await first.nextJobChange()
                guard case .job(let started)? = event else {
                    Issue.record("expected the job's start, got \(String(describing: event))")
                    return
                }
                #expect(started.id == id)
                #expect([JobState.waiting, .running].contains(started.state))
                #expect(started.plan == RunPlan(intervalMs: 200, stop: .frames(6), overrun: .burst))
                let t0 = clock.instant(unixMs: try #require(started.t0UnixMs))

                // Time flows up to slot 3 and stands still there, the run waiting for slot 4.
                var early: [FrameRecord] = []
                try await clock.flowing(until: t0.advanced(by: .milliseconds(400))) {
                    while early.count < 3, let event = try await first.nextJobChange() {
                        switch event {
                        case .frame(let frame, let run):
                            #expect(run == id)
                            early.append(frame)
                        case .job(let job) where job.id == id && job.state.isLive:
                            // The schedule moved on: the job comes again with its next slot.
                            #expect(job.nextSlot != nil)
                        default:
                            Issue.record("expected a frame or the job's next slot, got \(event)")
                            return
                        }
                    }
                }
                #expect(early.map(\.frame) == [1, 2, 3])

                try await Self.live(rig) { second in
                    let snapshot = try await second.opening()
                    #expect(snapshot.jobs.jobs.map(\.id) == [id])
                    #expect(snapshot.jobs.jobs.first?.state == .running)
                    #expect(snapshot.jobs.jobs.first?.summary.taken == 3)
                    #expect(snapshot.recentFrames.map(\.run) == [id])
                    let recent = snapshot.recentFrames.first?.frames ?? []
                    #expect(recent == early, "the snapshot carries the frames so far")

                    let (rest, ends, laterRest, laterEnds) = try await clock.flowing {
                        let (rest, ends) = try await first.run(id)
                        let (laterRest, laterEnds) = try await second.run(id)
                        return (rest, ends, laterRest, laterEnds)
                    }
                    let all = early + rest
                    #expect(all.map(\.frame) == Array(1...6), "one frame event per frame, in order")
                    #expect(all.allSatisfy { $0.part == 1 })
                    #expect(ends.last?.state == .finished)
                    #expect(ends.dropLast().allSatisfy { $0.state == .running }, "before its end, the job comes only with its next slot")
                    #expect(ends.last?.nextSlot == nil)
                    #expect(ends.last?.summary.taken == all.filter { $0.outcome == .taken }.count)
                    #expect(ends.last.map { $0.summary.taken + $0.summary.skipped } == 6)
                    #expect(ends.last?.lastFrame == all.last)
                    // The stream opened mid-run: the snapshot's frames and the live ones are the run, once each.
                    #expect((recent + laterRest).map(\.frame) == Array(1...6))
                    #expect(recent + laterRest == all)
                    #expect(laterEnds.last == ends.last, "the same end")
                    #expect(Array(ends.suffix(laterEnds.count)) == laterEnds, "the job's changes since it joined, and no start told again")
                }
            }
        }
    }

    @Test("a camera added to or removed from the registry ends the stream with resync; the next snapshot lists the cameras as they are")
    func resync() async throws {
        try await Self.withRig { rig in
            let other = try await Demo.start(stateFile: nil, options: DemoOptions(seed: 7))
            let outcome: Result<Void, any Error>
            do {
                try await Self.resyncs(rig, other)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            try? await other.finish()
            try outcome.get()
            #expect(try await Self.eventually { await rig.jobs.watcherCount == 0 }, "a stream the server ended lets go of the jobs")
        }
    }

    /// A stream for each change: `other` added as "second", then removed.
    private static func resyncs(_ rig: Rig, _ other: Demo) async throws {
        for change in ["added", "removed"] {
            // curl's own limit is past the suite's two minutes: a stream that ends within the
            // test was ended by the server.
            try await Self.live(rig, timeLimit: 600) { live in
                let snapshot = try await live.opening()
                #expect(snapshot.cameras.cameras.map(\.name) == (change == "added" ? ["demo"] : ["demo", "second"]))
                if change == "added" {
                    #expect(await rig.cameras.add(other.camera, name: "second", source: "demo") != nil)
                } else {
                    #expect(await rig.cameras.remove(named: "second") != nil)
                }
                var last: LiveEvent?
                while let event = try await live.next() {
                    last = event
                    if case .resync = event { break }
                }
                guard case .resync(let reason)? = last else {
                    Issue.record("camera \(change): the stream ended without resync, its last event \(String(describing: last))")
                    return
                }
                #expect(reason.contains("cameras changed"), "\(reason)")
                // The server ends the stream after it (curl's limit lies beyond the test's).
                #expect(try await live.next() == nil, "camera \(change): nothing after resync, and the server ended the stream")
            }
        }
    }

    @Test("a phone's clock taken ends the stream with resync; the next snapshot's status gives the corrected clock")
    func clockResync() async throws {
        try await Self.withRig { rig in
            try await Self.live(rig, timeLimit: 600) { live in
                let snapshot = try await live.opening()
                #expect(snapshot.status.clock?.correction == nil)
                let offer = rig.jobs.wallClock.offer(ClockReading(unixMs: rig.jobs.nowUnixMs + 5000), from: .unchecked)
                #expect(offer.clock.correction?.offsetMs == 5000, "\(offer)")
                var last: LiveEvent?
                while let event = try await live.next() {
                    last = event
                    if case .resync = event { break }
                }
                guard case .resync(let reason)? = last else {
                    Issue.record("the stream ended without resync, its last event \(String(describing: last))")
                    return
                }
                #expect(reason == "the daemon's clock changed; open the stream again")
            }
            try await Self.live(rig) { live in
                let snapshot = try await live.opening()
                #expect(snapshot.status.clock?.correction?.offsetMs == 5000)
                #expect(snapshot.status.clock?.correction?.client == "an unchecked client")
            }
        }
    }

    @Test("a stream the server ends with resync is finished as an HTTP response, not cut off (curl exits 0)")
    func cleanEnd() async throws {
        try await Self.withRig { rig in
            let curl = Task {
                try await runProgram(URL(fileURLWithPath: "/usr/bin/curl"),
                                     ["-sN", "--max-time", "40", "--unix-socket", rig.socket, "http://localhost/v1/live"],
                                     environment: ProcessInfo.processInfo.environment)
            }
            #expect(try await Self.eventually { rig.feed.followerCount == 1 }, "the stream to open")
            #expect(await rig.cameras.remove(named: "demo") != nil)
            let result = try await curl.value
            #expect(result.status == 0, "curl: \(result.status) \(result.stderr)")
            #expect(result.stdout.hasSuffix("data: {\"reason\":\"the daemon's cameras changed; open the stream again\"}\n\n"))
        }
    }

    @Test("followers share one subscription per camera and one job watch, however many there are")
    func shared() async throws {
        try await Self.withRig { rig in
            #expect(try await Curl.request(socket: rig.socket, path: "/v1/status").status == 200)
            let others = rig.demo.camera.eventSubscriberCount
            // Each curl writes the stream to a file as it comes, where the test can see it arrive.
            let outputs = (0..<3).map { _ in FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID()).txt").path }
            defer { for output in outputs { try? FileManager.default.removeItem(atPath: output) } }
            let followers = outputs.map { output in
                Task {
                    try await runProgram(URL(fileURLWithPath: "/usr/bin/curl"),
                                         ["-sN", "--max-time", "40", "-o", output, "--unix-socket", rig.socket, "http://localhost/v1/live"],
                                         environment: ProcessInfo.processInfo.environment)
                }
            }
            func received(_ output: String) -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
            #expect(try await Self.eventually { rig.feed.followerCount == 3 }, "three follow")
            #expect(await rig.jobs.watcherCount == 1)
            #expect(rig.demo.camera.eventSubscriberCount == others + 1)
            // A shot reaches all three from the one subscription; then the cameras change and all three are told.
            #expect(try await Curl.request(socket: rig.socket, path: "/v1/cameras/demo/shoot", arguments: ["-X", "POST"]).status == 200)
            #expect(try await Self.eventually { outputs.allSatisfy { received($0).contains("event: shotCompleted") } }, "all three see the shot")
            #expect(await rig.cameras.remove(named: "demo") != nil)
            for (follower, output) in zip(followers, outputs) {
                let result = try await follower.value
                #expect(result.status == 0)
                #expect(received(output).hasSuffix("open the stream again\"}\n\n"))
            }
            #expect(try await Self.eventually { await rig.jobs.watcherCount == 0 && rig.feed.followerCount == 0 }, "all let go")
            // The camera left the registry with its status reader: nothing follows it any more.
            #expect(try await Self.eventually { rig.demo.camera.eventSubscriberCount == 0 }, "the camera subscription ended")
        }
    }

    @Test("a client that leaves is let go: its job watch and camera subscription end while the daemon runs on")
    func clientLeaves() async throws {
        try await Self.withRig { rig in
            // The daemon's status reader follows the camera from its first read on, for good.
            #expect(try await Curl.request(socket: rig.socket, path: "/v1/status").status == 200)
            let others = rig.demo.camera.eventSubscriberCount
            try await Self.live(rig) { live in
                _ = try await live.opening()
                #expect(await rig.jobs.watcherCount == 1)
                #expect(rig.demo.camera.eventSubscriberCount == others + 1)
            }
            // curl is gone; the server notices the closed connection.
            #expect(try await Self.eventually { await rig.jobs.watcherCount == 0 }, "the job watch ended with the client")
            #expect(try await Self.eventually { rig.demo.camera.eventSubscriberCount == others },
                    "the camera subscription ended with the client")
            #expect(try await Curl.request(socket: rig.socket, path: "/v1/status").status == 200)
        }
    }

    @Test("a viewer may follow it, as a paired browser or with a token on TCP; without credentials it is refused with 401")
    func permissions() async throws {
        try await Self.withRig { rig in
            let cookie = try await WebListenerTests.pair(rig.web, role: .viewer)
            #expect(rig.web.browsers.all.map(\.role) == [.viewer])
            // Both follow until the camera is removed: then the server ends their streams with resync.
            async let browser = WebListenerTests.request(rig.web.url + "/v1/live", ["-b", cookie, "--max-time", "40"])
            async let token = WebListenerTests.request(rig.tcp + "/v1/live",
                                                       ["-H", "Authorization: Bearer \(Self.viewerSecret)", "--max-time", "40"])
            #expect(try await Self.eventually { rig.feed.followerCount == 2 }, "both viewers follow")
            #expect(await rig.cameras.remove(named: "demo") != nil)
            for (who, answer) in [("browser", try await browser), ("token", try await token)] {
                #expect(answer.status == 200, "\(who): \(answer.body)")
                #expect(answer.headers.lowercased().contains("content-type: text/event-stream"), "\(who): \(answer.headers)")
                var live = LiveReader(AsyncStream { sink in
                    for line in answer.body.split(separator: "\n", omittingEmptySubsequences: false) { sink.yield(String(line)) }
                    sink.finish()
                })
                let snapshot = try await live.opening()
                #expect(snapshot.cameras.cameras.map(\.name) == ["demo"], "\(who)")
                var names: [String] = []
                while let event = try await live.next() { names.append(event.eventName) }
                #expect(names.last == "resync", "\(who): \(names)")
            }

            let anonymous = try await WebListenerTests.request(rig.web.url + "/v1/live", ["--max-time", "5"])
            #expect(anonymous.status == 401, "\(anonymous.body)")
            #expect(!anonymous.body.contains("subscribed"))
            let unknownCookie = cookie.prefix { $0 != "=" } + "=" + String(repeating: "0", count: 64)
            let forged = try await WebListenerTests.request(rig.web.url + "/v1/live", ["-b", unknownCookie, "--max-time", "5"])
            #expect(forged.status == 401, "\(forged.body)")
            let noToken = try await WebListenerTests.request(rig.tcp + "/v1/live", ["--max-time", "5"])
            #expect(noToken.status == 401, "\(noToken.body)")
            #expect(try await Self.eventually { await rig.jobs.watcherCount == 0 }, "the viewers' streams ended and were let go")
        }
    }
}
