import Clocks
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

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
        let session = try ModuleSession(transport: link.central)
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
        let session = try ModuleSession(transport: peer.link.central)
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
        let clock = TestClock<Duration>()
        let session = try ModuleSession(transport: peer.link.central, clock: clock, requestTimeout: .milliseconds(150))
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
        // Time passes only as the test moves it, in steps.
        func advance(until limit: Duration, step: Duration = .milliseconds(1)) async {
            while outcome.withLock({ $0 == nil }), started.duration(to: clock.now) < limit {
                await clock.advance(by: step)
            }
        }
        await advance(until: .milliseconds(140), step: .milliseconds(10))
        await advance(until: .milliseconds(149))
        #expect(outcome.withLock { $0 == nil }, "still waiting 1 ms before its timeout")
        await advance(until: .seconds(3))
        #expect(outcome.withLock { $0 } == .failure(.timedOut(.getStatus, after: .milliseconds(150))))
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
        let session = try ModuleSession(transport: peer.link.central)
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
        let session = try ModuleSession(transport: peer.link.central)
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
        let session = try ModuleSession(transport: peer.link.central)
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
        let session = try ModuleSession(transport: peer.link.central)
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
        let session = try ModuleSession(transport: peer.link.central, requestTimeout: .seconds(30))
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
}
