import Clocks
import Synchronization
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// A connection to a simulated module over a simulated radio, all on one test clock.
final class ConnectionRig: Sendable {
    let clock = TestClock<Duration>()
    let module: VirtualModule
    let radio: SimulatedRadio
    let connection: ModuleConnection
    let states = Mutex<[ConnectionState]>([])

    static let timing = ConnectionTiming(scanTimeout: .seconds(10), requestTimeout: .seconds(3),
                                         keepAliveInterval: .seconds(2), linkLossTimeout: .seconds(6))

    init(camera: VirtualCamera = VirtualCamera(profile: .nikonLike), faults: LinkFaults = LinkFaults(),
         policy: ReconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(8)), seed: UInt64 = 1,
         recordsStates: Bool = true) {
        module = VirtualModule(camera: camera, clock: clock, utcNow: { 1_700_000_000_000 })
        radio = SimulatedRadio(module: module, faults: faults, seed: seed, clock: clock)
        connection = ModuleConnection(provider: radio, policy: policy, timing: Self.timing, clock: clock, seed: seed)
        // The connection's events have one consumer: a camera on this rig takes them instead.
        guard recordsStates else { return }
        let events = connection.events
        Task { [weak self] in
            for await event in events {
                if case .state(let state) = event { self?.states.withLock { $0.append(state) } }
            }
        }
    }

    var phases: [ConnectionPhase] { states.withLock { $0.map(\.phase) } }

    /// Moves the test clock on in small steps until `condition` holds; false if it did not
    /// within `limit` of simulated time.
    @discardableResult
    func advance(until condition: () async -> Bool, step: Duration = .milliseconds(20), limit: Duration = .seconds(120)) async -> Bool {
        var waited = Duration.zero
        while waited <= limit {
            if await condition() { return true }
            await clock.advance(by: step)
            waited += step
        }
        return await condition()
    }

    func advance(by duration: Duration, step: Duration = .milliseconds(20)) async {
        var waited = Duration.zero
        while waited < duration {
            await clock.advance(by: step)
            waited += step
        }
    }

    func state() async -> ConnectionState { await connection.state }

    /// Connects and waits for ready.
    func connect() async throws {
        await connection.connect()
        try #require(await advance { await state() == .ready })
    }
}

@Suite("Connection driver on a test clock", .timeLimit(.minutes(2)))
struct ModuleConnectionTests {
    @Test("a first connection reports every state on the way to ready")
    func connects() async throws {
        let rig = ConnectionRig()
        try await rig.connect()
        #expect(rig.phases == [.scanning, .connecting, .resolvingServices, .handshaking, .ready])
        #expect(await rig.connection.identity?.cameraModel == CameraProfile.nikonLike.model)
        #expect(try await rig.connection.request(.getStatus).moduleBattery == 100)
    }

    @Test("link loss during a shot: the shot completes on the camera, the link comes back, the count shows it")
    func linkLossDuringShot() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(SettingValue(setting: .shutterSpeed, text: "2s")!)
        let rig = ConnectionRig(camera: camera)
        try await rig.connect()
        let before = try await rig.connection.request(.getStatus).shotCounter ?? 0
        _ = try await rig.connection.request(.shoot)
        // Outstanding at the moment of loss: fails at once, not after its timeout.
        rig.radio.setFaults(LinkFaults(drop: 1))
        let pending = Task { try await rig.connection.request(.getStatus) }
        await rig.advance(by: .milliseconds(500))
        rig.radio.loseLink(for: .seconds(5))
        #expect(await rig.advance(until: { await rig.state().phase == .reconnecting }, limit: .milliseconds(100)))
        await #expect(throws: SessionError.self) { try await pending.value }
        rig.radio.setFaults(LinkFaults())
        #expect(await rig.advance(until: { await rig.state() == .ready }, limit: .seconds(30)))
        let after = try await rig.connection.request(.getStatus)
        #expect(after.shotCounter == before + 1, "the exposure finished while the link was down")
        #expect(rig.phases.contains(.reconnecting))
        #expect(rig.radio.connectAttempts >= 2)
    }

    @Test("reconnects once the module is back in range, after backing off")
    func reconnectAfterReturn() async throws {
        let rig = ConnectionRig()
        try await rig.connect()
        rig.radio.loseLink(for: .seconds(20))
        #expect(await rig.advance(until: { await rig.state().phase == .reconnecting }, limit: .milliseconds(100)))
        #expect(await rig.advance(until: { await rig.state() == .ready }, limit: .seconds(60)))
        let attempts = rig.radio.connectAttempts
        #expect(attempts >= 3, "failed attempts while out of range, then one that worked")
        #expect(rig.phases.last == .ready)
        #expect(try await rig.connection.request(.keepAlive).uptime != nil)
    }

    @Test("a module that stops answering is noticed by its keep-alives within the link-loss timeout")
    func keepAliveExpiry() async throws {
        let rig = ConnectionRig()
        try await rig.connect()
        rig.radio.setFaults(LinkFaults(drop: 1))
        let noticed = stopwatch(rig.clock)
        #expect(await rig.advance(until: { await rig.state().phase == .reconnecting }, limit: .seconds(20)))
        let after = noticed()
        // A keep-alive goes out within one interval of silence, and is given up on after the link-loss timeout.
        #expect(after >= .seconds(6) && after <= .seconds(9), "noticed after \(after)")
        rig.radio.setFaults(LinkFaults())
        #expect(await rig.advance(until: { await rig.state() == .ready }, limit: .seconds(30)))
    }

    @Test("a module that never answers hello is retried, then given up on with the reason")
    func silentHello() async throws {
        let rig = ConnectionRig(faults: LinkFaults(drop: 1), policy: ReconnectPolicy(
            initialDelay: .milliseconds(500), maximumDelay: .seconds(4), maximumAttempts: 2))
        await rig.connection.connect()
        #expect(await rig.advance(until: { await rig.state().phase == .failed }, limit: .seconds(60)))
        guard case .failed(.gaveUp(let attempts, let lastError)) = await rig.state() else {
            Issue.record("ended in \(await rig.state())")
            return
        }
        #expect(attempts == 2)
        #expect(lastError.contains("hello"), "\(lastError)")
        #expect(rig.radio.connectAttempts == 3, "the first try and two retries")
        #expect(rig.phases.filter { $0 == .handshaking }.count == 3)
        await #expect(throws: ConnectionError.self) { try await rig.connection.waitUntilReady(timeout: .zero) }
    }

    @Test("a user disconnect while reconnecting ends the connection and no attempt follows")
    func disconnectWhileReconnecting() async throws {
        let rig = ConnectionRig()
        try await rig.connect()
        rig.radio.loseLink(for: .seconds(600))
        #expect(await rig.advance(until: { await rig.state().phase == .reconnecting }, limit: .milliseconds(100)))
        await rig.advance(by: .seconds(3))
        let disconnect = Task { await rig.connection.disconnect() }
        #expect(await rig.advance(until: { await rig.state() == .idle }, limit: .seconds(5)))
        await disconnect.value
        let attempts = rig.radio.connectAttempts
        await rig.advance(by: .seconds(60), step: .milliseconds(250))
        #expect(rig.radio.connectAttempts == attempts)
        #expect(await rig.state() == .idle)
        await #expect(throws: SessionError.self) { try await rig.connection.request(.getStatus) }
    }
}
