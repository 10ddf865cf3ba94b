import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

@Suite("Module session: handshake, correlation, timeouts, events", .timeLimit(.minutes(1)))
struct ModuleSessionTests {
    /// How a request started in a task of its own ended; nil while it waits.
    final class Outcome: Sendable {
        private let result = Mutex<Result<Fields, SessionError>?>(nil)

        func withLock<T: Sendable>(_ body: (inout Result<Fields, SessionError>?) -> T) -> T {
            result.withLock { body(&$0) }
        }
    }

    @Test("says hello to the simulator and learns what the module is")
    func handshake() async throws {
        let link = InMemoryLink(mtu: 23)
        await VirtualModule(camera: VirtualCamera(profile: .nikonLike)).serve(link.peripheral)
        let session = try ModuleSession(transport: ModuleTransport(link: link.central))
        let identity = try await session.start()
        #expect(identity.protocolVersion == 1)
        #expect(identity.firmwareVersion == "1.0.0")
        #expect(identity.capabilities.contains(.shoot))
        #expect(identity.cameraModel == CameraProfile.nikonLike.model)
        let status = try await session.request(.getStatus)
        #expect(status.moduleBattery == 100)
    }

    @Test("reports a module that speaks no common version")
    func versionMismatch() async throws {
        let peer = ScriptedPeer { request in
            [Message(.response(.hello, .notSupported), id: request.id, fields: Fields {
                $0.minProtocolVersion = 2
                $0.maxProtocolVersion = 3
            })]
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central))
        await #expect(throws: SessionError.versionMismatch(module: 2...3, client: 1...1)) {
            try await session.start()
        }
    }

    @Test("a request with no answer times out, and the session stays usable")
    func timeout() async throws {
        let peer = ScriptedPeer { request in
            request.kind == .request(.hello) ? [ScriptedPeer.helloOK(request)]
                : request.kind == .request(.keepAlive) ? [Message(.response(.keepAlive, .ok), id: request.id, fields: Fields { $0.uptime = 5 })]
                : []
        }
        let clock = RunClock()
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central), clock: clock, requestTimeout: .milliseconds(150))
        _ = try await session.start()
        let started = clock.now
        let outcome = Outcome()
        Task {
            do throws(SessionError) {
                let fields = try await session.request(.getStatus)
                outcome.withLock { $0 = .success(fields) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        // Time passes only as the test moves it, in steps, each once the session's timer is set
        // (so that no copy goes out later than its time).
        func advance(until limit: Duration, step: Duration = .milliseconds(1)) async {
            while outcome.withLock({ $0 == nil }), started.duration(to: clock.now) < limit {
                var rounds = 0
                while outcome.withLock({ $0 == nil }), !clock.isAsleepPastNow {
                    rounds += 1
                    guard rounds < 100_000 else {
                        Issue.record("the session's timer was never set")
                        return
                    }
                    await Task.yield()
                }
                await clock.advance(by: step)
            }
        }
        await advance(until: .milliseconds(140), step: .milliseconds(10))
        await advance(until: .milliseconds(149))
        #expect(outcome.withLock { $0 == nil }, "still waiting 1 ms before its timeout")
        await advance(until: .seconds(3))
        // hello's round trip set the wait before sending again to its 25 ms floor: copies at 0, 25 and 75 ms.
        #expect(outcome.withLock { $0 } == .failure(.timedOut(.getStatus, after: .milliseconds(150), sent: 3)))
        #expect(started.duration(to: clock.now) >= .milliseconds(150))
        #expect(try await session.request(.keepAlive).uptime == 5)
    }

    @Test("answers that come back in another order reach the right callers")
    func correlation() async throws {
        let held = Mutex<[Message]>([])
        let peer = ScriptedPeer { request in
            if request.kind == .request(.hello) { return [ScriptedPeer.helloOK(request)] }
            // Hold three keep-alives, then answer them newest first, each with its own id as uptime.
            return held.withLock { held in
                held.append(request)
                guard held.count == 3 else { return [] }
                return held.reversed().map { request in
                    Message(.response(.keepAlive, .ok), id: request.id, fields: Fields { $0.uptime = UInt32(request.id) })
                }
            }
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central))
        _ = try await session.start()
        async let first = session.request(Opcode.keepAlive)
        async let second = session.request(Opcode.keepAlive)
        async let third = session.request(Opcode.keepAlive)
        let uptimes = try await [first.uptime, second.uptime, third.uptime].compactMap { $0 }
        #expect(Set(uptimes) == [2, 3, 4], "hello took id 1; each request got the answer to its own id")
    }

    @Test("repeated events are dropped and missed ones are counted")
    func eventSequence() async throws {
        let peer = ScriptedPeer { [ScriptedPeer.helloOK($0)] }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central))
        _ = try await session.start()
        for sequence: UInt16 in [0, 0, 3] {
            try peer.send(Message(.event(.busy), id: sequence, fields: Fields { $0.busy = sequence == 0 }))
        }
        peer.link.sever()
        var seen: [SessionEvent] = []
        for await event in session.events { seen.append(event) }
        #expect(seen == [
            .module(.busy, Fields { $0.busy = true }),
            .missedEvents(2),
            .module(.busy, Fields { $0.busy = false }),
            .disconnected(reason: "link lost"),
        ])
    }

    @Test("a second hello restarts the count of event numbers: the module's event 0 after it is no gap")
    func helloRestartsEventNumbers() async throws {
        let peer = ScriptedPeer { [ScriptedPeer.helloOK($0)] }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central))
        _ = try await session.start()
        for sequence: UInt16 in [0, 1, 2] {
            try peer.send(Message(.event(.busy), id: sequence, fields: Fields { $0.busy = true }))
        }
        _ = try await session.start()
        try peer.send(Message(.event(.busy), id: 0, fields: Fields { $0.busy = false }))
        peer.link.sever()
        var seen: [SessionEvent] = []
        for await event in session.events { seen.append(event) }
        #expect(seen == Array(repeating: .module(.busy, Fields { $0.busy = true }), count: 3) + [
            .module(.busy, Fields { $0.busy = false }),
            .disconnected(reason: "link lost"),
        ])
    }

    @Test("garbage on the link is reported and does not stop the session")
    func protocolErrors() async throws {
        let peer = ScriptedPeer { request in
            request.kind == .request(.hello) ? [ScriptedPeer.helloOK(request)]
                : [Message(.response(.keepAlive, .ok), id: request.id, fields: Fields { $0.uptime = 77 })]
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central))
        _ = try await session.start()
        try peer.link.peripheral.notify([[0x85, 0x01, 0x02], [0x00, 0x00, 0x05, 0x01]])
        #expect(try await session.request(.keepAlive).uptime == 77)
        peer.link.sever()
        var errors: [String] = []
        for await case .protocolError(let error) in session.events { errors.append(error.name) }
        // The second garbage packet starts a frame; the response's start packet interrupts it and
        // is still delivered.
        #expect(errors == ["unexpectedContinuation", "interrupted"])
    }

    @Test("losing the link fails the outstanding request at once")
    func linkLoss() async throws {
        let (asked, asking) = AsyncStream.makeStream(of: Void.self)
        let peer = ScriptedPeer { request in
            if request.kind == .request(.getStatus) { asking.yield() }
            return request.kind == .request(.hello) ? [ScriptedPeer.helloOK(request)] : []
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central), requestTimeout: .seconds(30))
        _ = try await session.start()
        // The link goes once the module has the request, which is then outstanding.
        Task {
            for await _ in asked { break }
            peer.link.sever(reason: "out of range")
        }
        await #expect(throws: SessionError.disconnected(reason: "out of range")) {
            try await session.request(.getStatus)
        }
        await #expect(throws: SessionError.disconnected(reason: "out of range")) {
            try await session.request(.getStatus)
        }
    }

    // MARK: - Retransmission

    /// How many copies of each request the module has had, and how many it answered.
    final class Copies: Sendable {
        private let counts = Mutex<(copies: [UInt16: Int], answered: Int)>(([:], 0))

        /// Counts a copy of request `id`; its number, from 1.
        func note(_ id: UInt16) -> Int {
            counts.withLock { counts in
                counts.copies[id, default: 0] += 1
                return counts.copies[id]!
            }
        }

        /// Counts an answer the module sent.
        func noteAnswer() { counts.withLock { $0.answered += 1 } }

        var total: Int { counts.withLock { $0.copies.values.reduce(0, +) } }
        var answered: Int { counts.withLock { $0.answered } }
    }

    /// A session on a test clock whose module answers `hello` and `keepAlive` at once and
    /// leaves `release` to `status` (with the copy's number, from 1), and the copies it has had.
    static func session(clock: RunClock, status: @escaping @Sendable (Message, Int) -> [Message])
        async throws -> (ModuleSession, Copies) {
        let copies = Copies()
        let peer = ScriptedPeer { request in
            switch request.kind {
            case .request(.hello): return [ScriptedPeer.helloOK(request)]
            case .request(.keepAlive): return [Message(.response(.keepAlive, .ok), id: request.id, fields: Fields { $0.uptime = 1 })]
            default:
                let answers = status(request, copies.note(request.id))
                if !answers.isEmpty { copies.noteAnswer() }
                return answers
            }
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central), clock: clock)
        _ = try await session.start()
        return (session, copies)
    }

    /// Sends `release` and moves the clock on 5 ms at a time until it is settled (or `limit` has
    /// passed), noting when each copy after the first went out. Before each move it waits for
    /// the session to be still: the request settled, or its timer asleep again, every copy sent
    /// with the module and none answered (an answer on its way settles the request). So each
    /// copy is seen at the step it went out, however busy the machine.
    static func release(on session: ModuleSession, copies: Copies, clock: RunClock, limit: Duration = .seconds(4))
        async -> (outcome: Result<Fields, SessionError>?, resentAt: [Duration], settledAt: Duration) {
        let started = clock.now
        let before = await session.retransmissions
        let outcome = Outcome()
        Task {
            do throws(SessionError) {
                let fields = try await session.request(.release)
                outcome.withLock { $0 = .success(fields) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        var resentAt: [Duration] = []
        func untilStill() async {
            var rounds = 0
            while outcome.withLock({ $0 == nil }) {
                let sent = await session.retransmissions - before + 1
                if clock.isAsleepPastNow, copies.total == sent, copies.answered == 0 { break }
                rounds += 1
                guard rounds < 100_000 else {
                    Issue.record("the session did not come to rest: \(sent) copies sent, \(copies.total) with the module")
                    return
                }
                await Task.yield()
            }
            let resent = await session.retransmissions - before
            while resentAt.count < resent { resentAt.append(started.duration(to: clock.now)) }
        }
        await untilStill()
        while outcome.withLock({ $0 == nil }), started.duration(to: clock.now) < limit {
            // 5 ms steps: every resend time the tests expect is a multiple of 5 ms.
            await clock.advance(by: .milliseconds(5))
            await untilStill()
        }
        return (outcome.withLock { $0 }, resentAt, started.duration(to: clock.now))
    }

    @Test("a lost request is sent again after the link's timeout learned from its round trips (25 ms here), not after a second")
    func lostRequestResentSoon() async throws {
        let clock = RunClock()
        let (session, copies) = try await Self.session(clock: clock) { request, copy in
            copy == 1 ? [] : [Message(.response(.release, .ok), id: request.id, fields: Fields())]
        }
        for _ in 0..<3 { _ = try await session.request(.keepAlive) }
        // On a test clock every round trip is 0: SRTT 0, RTTVAR 0, so the 25 ms floor.
        #expect(await session.roundTrips.smoothedRoundTrip == .zero)
        #expect(await session.roundTrips.timeout == .milliseconds(25))
        let (outcome, resentAt, settledAt) = await Self.release(on: session, copies: copies, clock: clock)
        #expect(outcome == .success(Fields()))
        #expect(resentAt == [.milliseconds(25)])
        #expect(settledAt == .milliseconds(25))
        #expect(await session.retransmissions == 1)
    }

    @Test("a request never answered is sent again after 25, 50, 100 … ms, doubling up to 1 s, and its timeout says how many copies went")
    func backoff() async throws {
        let clock = RunClock()
        let (session, copies) = try await Self.session(clock: clock) { _, _ in [] }
        for _ in 0..<3 { _ = try await session.request(.keepAlive) }
        let (outcome, resentAt, settledAt) = await Self.release(on: session, copies: copies, clock: clock)
        // Waits of 25, 50, 100, 200, 400, 800 and 1000 ms; the next would pass the 3 s limit.
        #expect(resentAt == [25, 75, 175, 375, 775, 1575, 2575].map { Duration.milliseconds($0) })
        #expect(outcome == .failure(.timedOut(.release, after: .seconds(3), sent: 8)))
        #expect(settledAt == .seconds(3))
        #expect(String(describing: SessionError.timedOut(.release, after: .seconds(3), sent: 8))
            == "the module did not answer release within 3 s (sent 8 times)")
        // The link's own timeout backed off with each expiry, and the next answer sets it again.
        #expect(await session.roundTrips.timeout == .seconds(1))
        _ = try await session.request(.keepAlive)
        #expect(await session.roundTrips.timeout == .milliseconds(25))
    }

    @Test("Karn's rule: the answer to a request sent twice gives no round trip, and the backed-off timeout stays until one that does")
    func karn() async throws {
        let clock = RunClock()
        // The module answers only the second copy, as when the first answer was lost: the answer
        // could be to either copy, so the 25 ms since the first says nothing about the link.
        let (session, copies) = try await Self.session(clock: clock) { request, copy in
            copy == 2 ? [Message(.response(.release, .ok), id: request.id, fields: Fields())] : []
        }
        for _ in 0..<3 { _ = try await session.request(.keepAlive) }
        let (outcome, resentAt, _) = await Self.release(on: session, copies: copies, clock: clock)
        #expect(outcome == .success(Fields()))
        #expect(resentAt == [.milliseconds(25)])
        #expect(await session.roundTrips.smoothedRoundTrip == .zero, "no round trip of 25 ms was taken in")
        #expect(await session.roundTrips.timeout == .milliseconds(50))
        _ = try await session.request(.keepAlive)
        #expect(await session.roundTrips.timeout == .milliseconds(25))
    }

    @Test("round trips measured on the session's clock set the timeout: SRTT + 4·RTTVAR")
    func measuredRoundTrips() async throws {
        let clock = RunClock()
        // The module answers only when the test says, once it has moved the clock on.
        let (asked, asking) = AsyncStream.makeStream(of: Message.self)
        let peer = ScriptedPeer { request in
            asking.yield(request)
            return []
        }
        let session = try ModuleSession(transport: ModuleTransport(link: peer.link.central), clock: clock)
        var requests = asked.makeAsyncIterator()
        // hello in 100 ms (the first wait, 1 s, does not run out): SRTT 100, RTTVAR 50, RTO 300 ms.
        let hello = Task { try await session.start() }
        let helloRequest = try #require(await requests.next())
        await clock.advance(by: .milliseconds(100))
        try peer.send(ScriptedPeer.helloOK(helloRequest))
        _ = try await hello.value
        #expect(await session.roundTrips.smoothedRoundTrip == .milliseconds(100))
        #expect(await session.roundTrips.timeout == .milliseconds(300))
        // release in 200 ms: RTTVAR 62.5, SRTT 112.5, RTO 362.5 ms.
        let release = Task { try await session.request(.release) }
        let releaseRequest = try #require(await requests.next())
        await clock.advance(by: .milliseconds(200))
        try peer.send(Message(.response(.release, .ok), id: releaseRequest.id, fields: Fields()))
        _ = try await release.value
        #expect(await session.roundTrips.smoothedRoundTrip == .microseconds(112_500))
        #expect(await session.roundTrips.timeout == .microseconds(362_500))
        #expect(await session.retransmissions == 0)
    }

    @Test("over a link that loses a fifth of its packets each way, every shoot is answered and the camera fires each once")
    func shootsOverALossyLink() async throws {
        let rig = ConnectionRig(faults: LinkFaults(drop: 0.2), seed: 11, recordsStates: false)
        try await rig.connect()
        let before = await rig.module.camera.shotCounter
        var answered = 0
        for _ in 0..<40 {
            let outcome = Outcome()
            let connection = rig.connection
            Task {
                do throws(SessionError) {
                    let fields = try await connection.request(.shoot)
                    outcome.withLock { $0 = .success(fields) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
            }
            #expect(await rig.advance(until: { outcome.withLock { $0 != nil } }, step: .milliseconds(5), limit: .seconds(4)))
            if case .success? = outcome.withLock({ $0 }) { answered += 1 }
            // The exposure ends and the picture is written before the next trigger.
            await rig.advance(by: .milliseconds(300), step: .milliseconds(25))
        }
        #expect(answered == 40)
        #expect(Int(await rig.module.camera.shotCounter - before) == answered, "no shoot fired twice, none lost")
        let figures = try #require(await rig.connection.sessionFigures())
        #expect(figures.retransmissions > 0)
        #expect(await rig.module.repeatedRequests > 0, "some copies reached a module that had answered already")
    }
}
