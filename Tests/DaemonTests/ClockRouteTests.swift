import Daemon
import DaemonClient
import Foundation
import Intervalometer
import JSON
import Synchronization
import Testing
import UnleashedAPI
import UnleashedKit
import UnleashedSimulator
import UnleashedTestSupport

/// The daemon's wall clock as clients meet it: a phone's clock offered with `PUT /v1/clock`,
/// taken or kept out, shown by `GET /v1/clock` and `GET /v1/status`, and read by a job's `until`;
/// and a run under way that a correction does not move. The host's clock is played on a
/// ``RunClock``: true time is the run clock's wall clock, the host's is `wallClockErrorMs` off it.
@Suite("the daemon's clock and a phone's", .timeLimit(.minutes(1)))
struct ClockRouteTests {
    /// Two hours, the host's clock behind true time in most of these tests.
    static let twoHours: Int64 = 7_200_000

    /// A daemon in this process holding the demo camera, whose host clock `host` plays, with
    /// the access tokens of ``AccessTests`` (and the socket's owner an operator).
    private static func withDaemon<T>(clock: RunClock, host: HostClockSource,
                                      _ body: (DemoServer) async throws -> T) async throws -> T {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let jobs = JobManager(journal: journal, cameras: cameras, clock: clock, wallClock: DaemonClock(host: host))
        var setup = DemoServer.Setup()
        (setup.demo, setup.cameras, setup.jobs) = (demo, cameras, jobs)
        setup.access = AccessPolicy(tokens: AccessTests.tokens)
        let result: Result<T, any Error>
        do { result = .success(try await DemoServer.with(setup, body)) } catch { result = .failure(error) }
        _ = try? await clock.flowing { await jobs.suspendAll() }
        try? await demo.finish()
        return try result.get()
    }

    private static func put(_ server: DemoServer, _ body: String, as secret: String = AccessTests.operatorSecret) async throws -> Curl.Answer {
        try await Curl.request(socket: server.socket, path: "/v1/clock",
                               arguments: ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", body] + AccessTests.bearer(secret))
    }

    private static func get(_ server: DemoServer, _ path: String) async throws -> Curl.Answer {
        try await Curl.request(socket: server.socket, path: path, arguments: AccessTests.bearer(AccessTests.viewerSecret))
    }

    private static func number(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    @Test("a host clock no time service keeps takes the phone's: the answer, GET /v1/clock and the status say so, whoever gave it")
    func takenWhileNotSynchronised() async throws {
        let clock = RunClock()
        try await Self.withDaemon(clock: clock, host: clock.hostClock(synchronised: false, wallClockErrorMs: -Self.twoHours)) { server in
            let before = try #require(try await Self.get(server, "/v1/clock").json)
            #expect(before["synchronised"] as? Bool == false)
            #expect(Self.number(before["nowUnixMs"]) == RunClock.startUnixMs - Self.twoHours)
            #expect(before["correction"] is NSNull)

            let answer = try await Self.put(server, #"{"unixMs": \#(RunClock.startUnixMs)}"#)
            #expect(answer.status == 200, "\(answer.body)")
            let offer = try #require(answer.json)
            #expect(offer["taken"] as? Bool == true)
            #expect(offer["reason"] as? String == "hostNotSynchronised")
            #expect(offer["message"] as? String == "no time service keeps the host's clock, which is 2h behind yours; the daemon now goes by yours")
            #expect(Self.number(offer["differenceMs"]) == Self.twoHours)

            let status = try await Self.get(server, "/v1/status")
            #expect(status.status == 200)
            let shown = try #require(status.json?["clock"] as? [String: Any])
            #expect(shown["synchronised"] as? Bool == false)
            #expect(Self.number(shown["nowUnixMs"]) == RunClock.startUnixMs, "the daemon now reads true time")
            let correction = try #require(shown["correction"] as? [String: Any])
            #expect(Self.number(correction["offsetMs"]) == Self.twoHours)
            #expect(Self.number(correction["takenUnixMs"]) == RunClock.startUnixMs)
            #expect(correction["client"] as? String == "token 'desk'")
            #expect(correction["webClient"] is NSNull)
            let again = try #require(try await Self.get(server, "/v1/clock").json)
            #expect(NSDictionary(dictionary: again) == NSDictionary(dictionary: shown), "GET /v1/clock is the status's clock")
        }
    }

    @Test("a synchronised host keeps its own clock within 1 s of the phone's, ending a correction; more than 1 s off, it takes the phone's")
    func synchronisedHost() async throws {
        let clock = RunClock()
        try await Self.withDaemon(clock: clock, host: clock.hostClock(synchronised: true)) { server in
            let client = DaemonClient(socketPath: server.socket)
            let close = try await client.offerClock(unixMs: RunClock.startUnixMs + 400)
            #expect(!close.taken && close.reason == .hostAgrees && close.differenceMs == 400)
            #expect(close.message == "the host's clock is synchronised and is 400ms behind yours, within 1s; the daemon keeps its own")
            #expect(close.clock == HostClockState(synchronised: true, nowUnixMs: RunClock.startUnixMs, correction: nil))

            let far = try await client.offerClock(unixMs: RunClock.startUnixMs - 5000)
            #expect(far.taken && far.reason == .hostDiffers && far.differenceMs == -5000)
            #expect(far.clock.nowUnixMs == RunClock.startUnixMs - 5000)
            #expect(far.clock.correction?.client.hasPrefix("uid ") == true, "the socket's owner: \(String(describing: far.clock.correction))")
            #expect(try await client.clock() == far.clock)

            let agreeing = try await client.offerClock(unixMs: RunClock.startUnixMs - 1000)
            #expect(!agreeing.taken && agreeing.reason == .hostAgrees)
            #expect(agreeing.clock == HostClockState(synchronised: true, nowUnixMs: RunClock.startUnixMs, correction: nil),
                    "the host's own clock is right again: the correction ends")
        }
    }

    @Test("a jump of the clock is told, a phone giving its clock again is not, and a correction ends when the host's clock is set")
    func jumps() async throws {
        let clock = RunClock()
        let step = Mutex<Int64>(0)
        let played = clock.hostClock(synchronised: false, wallClockErrorMs: -Self.twoHours)
        let host = HostClockSource(wallClockMs: { played.wallClockMs() + step.withLock { $0 } }, monotonic: played.monotonic,
                                   discipline: played.discipline)
        let wallClock = DaemonClock(host: host)
        let (jumps, told) = AsyncStream.makeStream(of: Int64.self)
        wallClock.whenMoved { told.yield(wallClock.movedMs) }
        var iterator = jumps.makeAsyncIterator()

        _ = wallClock.offer(ClockReading(unixMs: clock.wallClock()), from: .unchecked)
        #expect(await iterator.next() == Self.twoHours)
        _ = wallClock.offer(ClockReading(unixMs: clock.wallClock() - 3), from: .unchecked)
        #expect(wallClock.movedMs == Self.twoHours - 3, "counted, not told")

        // Something sets the host's clock right (a time service found the network): the
        // correction ends, and the readings move by 3 ms, which nobody need be told.
        step.withLock { $0 = Self.twoHours }
        #expect(wallClock.nowUnixMs == clock.wallClock(), "the host's own reading stands")
        #expect(wallClock.document.correction == nil)
        #expect(wallClock.movedMs == Self.twoHours)

        // Taken again, then the host's clock set an hour wrong: the readings jump, and are told.
        _ = wallClock.offer(ClockReading(unixMs: clock.wallClock()), from: .unchecked)
        step.withLock { $0 = Self.twoHours - 3_600_000 }
        #expect(wallClock.nowUnixMs == clock.wallClock() - 3_600_000)
        #expect(await iterator.next() == Self.twoHours - 3_600_000)
        told.finish()
        #expect(await iterator.next() == nil, "told of the two jumps only")
    }

    @Test("a reading that is not one is answered 400 naming the member, and a viewer may not offer one")
    func refusals() async throws {
        let clock = RunClock()
        try await Self.withDaemon(clock: clock, host: clock.hostClock(synchronised: false)) { server in
            let bodies = [
                ("{}", "unixMs: missing"),
                (#"{"unixMs": "now"}"#, "unixMs"),
                (#"{"unixMs": 1764405000000.5}"#, "unixMs"),
                (#"{"unixMs": 1000}"#, "unixMs: must be Unix milliseconds from 1577836800000 (2020) to 4102444800000 (2100)"),
                (#"{"unixMs": 4102444800001}"#, "unixMs: must be Unix milliseconds"),
                (#"{"unixMs": 1764405000000, "zone": "UTC"}"#, "zone"),
                ("[]", "expected an object"),
                ("now", "not JSON"),
            ]
            for (body, words) in bodies {
                let answer = try await Self.put(server, body)
                #expect(answer.status == 400, "\(body): \(answer.body)")
                #expect(AccessTests.message(answer)?.contains(words) == true, "\(body): \(answer.body)")
            }
            let viewer = try await Self.put(server, #"{"unixMs": 1764405000000}"#, as: AccessTests.viewerSecret)
            #expect(viewer.status == 403)
            #expect(try await DaemonClient(socketPath: server.socket).clock().correction == nil, "nothing was taken")
        }
    }

    @Test("a job's until as a time of day is read on the corrected clock, and its t0 labelled on it")
    func untilOnTheCorrectedClock() async throws {
        let clock = RunClock()
        try await Self.withDaemon(clock: clock, host: clock.hostClock(synchronised: false, wallClockErrorMs: -Self.twoHours)) { server in
            _ = try await Self.put(server, #"{"unixMs": \#(RunClock.startUnixMs)}"#)
            // Half an hour from true now, to the minute, as the daemon's zone reads it.
            let target = Date(timeIntervalSince1970: Double(RunClock.startUnixMs + 1_800_000) / 1000)
            let civil = LocalClock.system.reading(target).civil
            let text = String(format: "%02d:%02d", civil.hour, civil.minute)
            let expected = try LocalTime.next(text, after: Date(timeIntervalSince1970: Double(RunClock.startUnixMs) / 1000))
            let answer = try await Curl.request(socket: server.socket, path: "/v1/jobs", arguments: [
                "-X", "POST", "-H", "Content-Type: application/json",
                "--data-binary", #"{"camera": "demo", "startDelayMs": 60000, "plan": {"intervalMs": 5000, "until": "\#(text)"}}"#,
            ] + AccessTests.bearer(AccessTests.operatorSecret))
            #expect(answer.status == 201, "\(answer.body)")
            let job = try JobDocument(json: try JSONValue(parsing: Data(answer.body.utf8)))
            #expect(job.plan.stop == .until(unixMilliseconds: Int64(expected.instant.timeIntervalSince1970 * 1000)))
            #expect(job.t0UnixMs == RunClock.startUnixMs + 60_000, "slot 1 a minute after true now, not the host's")
            #expect(job.state == .waiting)
        }
    }

    @Test("a correction taken while a job runs moves none of its slots; its wall times are shown on the corrected clock")
    func runningScheduleKeepsItsSlots() async throws {
        let clock = RunClock()
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wallClock = DaemonClock(host: clock.hostClock(synchronised: false, wallClockErrorMs: -Self.twoHours))
        let jobs = JobManager(journal: journal, cameras: cameras, clock: clock, wallClock: wallClock)
        let (changes, watching) = await jobs.watch()
        defer { watching.finish() }

        // Time stands still but for slot 1: slot 2 cannot come before time flows again.
        let started = try await jobs.submit(camera: "demo", plan: RunPlan(intervalMs: 1000, stop: .frames(6)))
        let t0 = try #require(started.t0UnixMs)
        #expect((0..<1000).contains(t0 - (RunClock.startUnixMs - Self.twoHours)), "labelled on the host's clock, two hours behind")
        let slot1 = clock.instant(unixMs: t0 + Self.twoHours)
        var updates = try await jobs.follow(started.id).makeAsyncIterator()
        await clock.advance(to: slot1)
        guard case .frame(let first)? = await updates.next() else { Issue.record("no first frame"); return }
        #expect(first.frame == 1)

        let offer = wallClock.offer(ClockReading(unixMs: clock.wallClock()), from: .unchecked)
        #expect(offer.taken && offer.differenceMs == Self.twoHours)
        // Watchers are told the job again, its times read on the clock as it is now.
        var moved: JobDocument?
        for await change in changes {
            if case .job(let job) = change, job.id == started.id, job.t0UnixMs != t0 {
                moved = job
                break
            }
        }
        #expect(moved?.t0UnixMs == t0 + Self.twoHours)
        #expect(moved?.nextSlot == NextSlot(frame: 2, dueUnixMs: t0 + Self.twoHours + 1000))
        #expect(moved?.state == .running)

        var frames = [first]
        try await clock.flowing {
            while let update = await updates.next() {
                switch update {
                case .frame(let frame): frames.append(frame)
                case .ended(let ending, _): #expect(ending.state == .finished)
                }
            }
        }
        #expect(frames.map(\.frame) == Array(1...6))
        #expect(frames.allSatisfy { $0.outcome == .taken })
        #expect(frames.map(\.scheduledMs) == (0..<6).map { Int64($0) * 1000 }, "every slot where it was before the correction")
        #expect(frames.allSatisfy { $0.sentMs == $0.scheduledMs && $0.latenessMicros == 0 })
        #expect(try journal.run(started.id)?.t0UnixMs == t0, "the journal keeps t0 as it was read")
        #expect(try await jobs.job(started.id).state == .finished)
        try? await demo.finish()
    }
}
