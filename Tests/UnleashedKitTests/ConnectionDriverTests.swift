import CameraKit
import Synchronization
import Testing
import UnleashedKit
import UnleashedTestSupport

/// A dialect whose every step the test decides: links are numbered, a session carries its link's
/// number, the handshake answers or hangs, keep-alives answer as scripted, and the test can take
/// the current link down.
struct ScriptedDialect: ConnectionDialect {
    struct Session: Hashable, Sendable {
        let link: Int
    }

    final class Script: Sendable {
        struct State {
            var linksMade = 0
            var closedLinks: [Int] = []
            var closedSessions: [Int] = []
            var handshakeHangs = false
            var keepAlives: [KeepAliveOutcome] = []
            var keepAlivesRun = 0
            var losses: [Int: AsyncStream<LinkReport<ConnectionState>>.Continuation] = [:]
        }

        let state = Mutex(State())

        func read<T>(_ body: (State) -> T) -> T { state.withLock { body($0) } }
        func change(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }

        /// Takes the current link down, as the device going out of range would.
        func lose(_ link: Int, reason: String) {
            let sink = state.withLock { $0.losses[link] }
            sink?.yield(.lost(reason))
        }
    }

    let script: Script
    var handshakeLimit: Duration?
    var keepAliveInterval: Duration? = .seconds(2)
    var scanTimeout: Duration { .seconds(10) }
    var deviceWord: String { "device" }
    var endsEventsOnDisconnect: Bool { true }

    func discover(timeout: Duration) async -> Bool { true }

    func connect() async throws(ConnectionStepFailure) -> Int {
        script.state.withLock { state in
            state.linksMade += 1
            return state.linksMade
        }
    }

    func resolve(_ link: Int) async throws(ConnectionStepFailure) -> Session { Session(link: link) }

    func relay(_ session: Session, to report: @escaping @Sendable (LinkReport<ConnectionState>) async -> Void) async {
        let (reports, sink) = AsyncStream.makeStream(of: LinkReport<ConnectionState>.self)
        script.change { $0.losses[session.link] = sink }
        for await item in reports { await report(item) }
    }

    func handshake(_ session: Session) async throws(ConnectionStepFailure) -> String? {
        if script.read(\.handshakeHangs) {
            // Never answers: ends only when the driver gives up on it.
            let (never, _) = AsyncStream.makeStream(of: Int.self)
            for await _ in never {}
            throw .lost("cancelled")
        }
        return "device \(session.link)"
    }

    func keepAlive(_ session: Session) async -> KeepAliveOutcome {
        script.state.withLock { state in
            state.keepAlivesRun += 1
            return state.keepAlives.isEmpty ? .alive : state.keepAlives.removeFirst()
        }
    }

    func stateChanged(_ state: ConnectionState) -> ConnectionState { state }

    func close(_ session: Session) async {
        script.change { $0.closedSessions.append(session.link) }
    }

    func close(_ link: Int) async {
        script.change { $0.closedLinks.append(link) }
    }
}

/// The one driver on a dialect of the test's own: what it does is the driver's, whichever
/// device it drives.
@Suite("Connection driver over any dialect", .timeLimit(.minutes(1)))
struct ConnectionDriverTests {
    let clock = RunClock()
    let script = ScriptedDialect.Script()

    func driver(handshakeLimit: Duration? = nil) -> ConnectionDriver<ScriptedDialect> {
        ConnectionDriver(ScriptedDialect(script: script, handshakeLimit: handshakeLimit),
                         policy: ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), maximumAttempts: 3),
                         clock: clock, seed: 1)
    }

    @Test("the steps run in the table's order to ready; the greeting is kept and the states are reported")
    func connects() async throws {
        let connection = driver()
        await connection.connect()
        try await connection.waitUntilReady()
        #expect(await connection.greeting == "device 1")
        #expect(await connection.readySession?.link == 1)
        await connection.disconnect()
        var states: [ConnectionState] = []
        for await state in connection.events { states.append(state) }
        #expect(states == [.scanning, .connecting, .resolvingServices, .handshaking, .ready, .disconnecting, .idle])
        #expect(script.read(\.closedSessions) == [1] && script.read(\.closedLinks) == [1], "the session closes, then its link")
    }

    @Test("a handshake that outlasts the dialect's limit fails at the limit, on the clock, and is retried")
    func handshakeLimit() async throws {
        script.change { $0.handshakeHangs = true }
        let connection = driver(handshakeLimit: .seconds(5))
        let start = clock.now
        await connection.connect()
        let state = try await clock.flowing(until: start.advanced(by: .seconds(5))) {
            await connection.waitForState(timeout: nil) { $0.phase == .reconnecting }
        }
        #expect(state?.phase == .reconnecting)
        #expect(start.duration(to: clock.now) == .seconds(5))
        #expect(await connection.greeting == nil)
        #expect(await connection.readySession == nil)
        await connection.disconnect()
        #expect(script.read(\.closedLinks) == [1], "the link of the failed handshake was closed, and no other made")
    }

    @Test("keep-alives run on the clock while ready; an expired one closes the link and the next link is a new generation")
    func keepAliveExpiry() async throws {
        script.change { $0.keepAlives = [.alive, .expired] }
        let connection = driver()
        let start = clock.now
        await connection.connect()
        try await connection.waitUntilReady()
        let lost = try await clock.flowing(until: start.advanced(by: .seconds(4))) {
            await connection.waitForState(timeout: nil) { $0.phase == .reconnecting }
        }
        #expect(lost?.phase == .reconnecting)
        #expect(start.duration(to: clock.now) == .seconds(4), "alive at 2 s, expired at 4 s")
        #expect(script.read(\.keepAlivesRun) == 2)
        // A loss reported for the old link after it was replaced changes nothing.
        let back = try await clock.flowing {
            await connection.waitForState(timeout: nil) { $0 == .ready }
        }
        #expect(back == .ready)
        #expect(await connection.readySession?.link == 2)
        script.lose(1, reason: "late news of the first link")
        #expect(await connection.state == .ready)
        #expect(await connection.greeting == "device 2")
        await connection.disconnect()
    }

    @Test("a loss the session reports while ready is retried after the policy's delay")
    func linkLost() async throws {
        let connection = driver()
        await connection.connect()
        try await connection.waitUntilReady()
        script.lose(1, reason: "out of range")
        let state = await connection.waitForState(timeout: nil) { $0.phase == .reconnecting }
        guard case .reconnecting(let attempt, let delay)? = state else {
            Issue.record("not reconnecting: \(String(describing: state))")
            return
        }
        #expect(attempt == 1)
        let start = clock.now
        let back = try await clock.flowing(until: start.advanced(by: delay)) {
            await connection.waitForState(timeout: nil) { $0 == .ready }
        }
        #expect(back == .ready)
        #expect(start.duration(to: clock.now) == delay, "the next attempt waited the policy's delay")
        #expect(script.read(\.linksMade) == 2)
        await connection.disconnect()
    }
}
