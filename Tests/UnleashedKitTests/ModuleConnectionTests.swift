import CameraKit
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

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
