import CameraKit
import Testing
import UnleashedKit
import UnleashedProtocol
@testable import UnleashedSimulator
import UnleashedTestSupport

/// The rules PROTOCOL.md states for the cases a client meets at the edges of a session: unknown
/// and unreadable requests, hello, the response cache, and what is sent unasked.
@Suite("The simulated module at the edges of a session", .timeLimit(.minutes(1)))
struct ModuleRulesTests {
    static let oldVersionsOnly = Fields {
        $0.minProtocolVersion = 2
        $0.maxProtocolVersion = 3
    }

    @Test("an unknown opcode is answered notSupported with no field but errorMessage (§4.1)")
    func unknownOpcode() async throws {
        let rig = try await ModuleRig()
        let unknown = Opcode(rawValue: 0x30)
        let response = try await rig.client.request(unknown, id: 300)
        #expect(response.kind == .response(unknown, .notSupported))
        #expect(response.fields == Fields { $0.errorMessage = "opcode 0x30 is unknown, not supported by this module" })
    }

    @Test("before hello, a request that cannot be decoded is invalidArgument, one that can is notSupported (§7.1, §10)")
    func malformedBeforeHello() async throws {
        let client = await RawClient(VirtualModule(camera: VirtualCamera(profile: .nikonLike)))
        // getSetting without its required setting field.
        try await client.sendRaw([0x01, 0x00, 0x05, 0x05])
        let malformed = try await client.response()
        #expect(malformed.id == 5)
        #expect(malformed.kind == .response(.getSetting, .invalidArgument))
        #expect(malformed.fields.errorMessage?.hasPrefix("missingField: ") == true)
        let wellFormed = try await client.request(.getSetting, id: 6, Fields { $0.setting = .iso })
        #expect(wellFormed.kind == .response(.getSetting, .notSupported))
        // A hello without its version range is not run: there is still no session.
        try await client.sendRaw([0x01, 0x00, 0x07, 0x01])
        #expect(try await client.response().kind == .response(.hello, .invalidArgument))
        #expect(try await client.request(.getStatus, id: 8).kind == .response(.getStatus, .notSupported))
    }

    @Test("a failed hello mid-session ends the session: cache forgotten, no events, notSupported until a hello succeeds (§7.1)")
    func failedHello() async throws {
        let rig = try await ModuleRig()
        #expect(try await rig.client.request(.keepAlive, id: 40).fields.uptime == 0)
        await rig.module.setCameraPower(.sleeping)
        _ = try await rig.events()

        let failed = try await rig.client.request(.hello, id: 41, Self.oldVersionsOnly)
        #expect(failed.kind == .response(.hello, .notSupported))
        #expect(failed.fields.minProtocolVersion == 1 && failed.fields.maxProtocolVersion == 1)
        #expect(try await rig.client.request(.getStatus, id: 42).kind == .response(.getStatus, .notSupported))
        await rig.module.setCameraPower(.off)
        #expect(try await rig.client.request(.keepAlive, id: 43).kind == .response(.keepAlive, .notSupported))
        #expect(await rig.client.takeEvents().isEmpty, "no events without a session")

        await rig.advance(by: .seconds(1))
        try await rig.client.hello()
        #expect(try await rig.client.request(.keepAlive, id: 40).fields.uptime == 1000, "run again, not from the cache")
        await rig.module.setCameraPower(.sleeping)
        let events = try await rig.events()
        #expect(events.map(\.kind) == [.event(.cameraPower)])
        #expect(events.map(\.id) == [0], "numbered from 0 again")
    }

    @Test("the response cache matches on the id alone: another opcode with a remembered id gets the old response (§9.2)")
    func cacheMatchesIDOnly() async throws {
        let rig = try await ModuleRig()
        let shot = try await rig.client.request(.shoot, id: 50)
        #expect(shot.kind == .response(.shoot, .ok))
        let reused = try await rig.client.request(.getStatus, id: 50)
        #expect(reused == shot)
        #expect(await rig.module.repeatedRequests == 1)
        await rig.advance(by: .seconds(1))
        #expect(await rig.module.camera.shotCounter == 1)
    }

    @Test("setting a setting to the value in effect answers ok and sends no settingChanged (§7.5)")
    func unchangedSetting() async throws {
        let rig = try await ModuleRig()
        let current = try #require(await rig.module.camera.settings[.iso])
        let same = try await rig.request(.setSetting, Fields { $0.setting = .iso; $0.value = current })
        #expect(same.kind == .response(.setSetting, .ok))
        #expect(same.fields.value == current)
        #expect(try await rig.events(.settingChanged).isEmpty)

        let refused = try await rig.request(.setSetting, Fields { $0.setting = .iso; $0.value = .iso(ISOSpeed(12345)!) })
        #expect(refused.kind == .response(.setSetting, .invalidArgument))
        let iso200 = SettingValue.iso(ISOSpeed(200)!)
        _ = try await rig.request(.setSetting, Fields { $0.setting = .iso; $0.value = iso200 })
        _ = try await rig.request(.setSetting, Fields { $0.setting = .iso; $0.value = iso200 })
        #expect(try await rig.events(.settingChanged).map(\.fields.value) == [iso200], "one event for one change")
    }

    @Test("getSetting of a setting the camera lacks, known to the protocol or not, is notSupported (§7.5)")
    func missingSetting() async throws {
        let camera = ModuleRig.camera { profile in
            profile.ladders.removeAll { setting, _ in setting == .focusMode }
            profile.defaults[.focusMode] = nil
        }
        let rig = try await ModuleRig(camera: camera)
        for setting in [SettingID.focusMode, SettingID(wireCode: 0x42)] {
            let response = try await rig.request(.getSetting, Fields { $0.setting = setting })
            #expect(response.kind == .response(.getSetting, .notSupported), "\(setting)")
            #expect(response.fields.setting == nil && response.fields.errorMessage?.isEmpty == false)
        }
        let set = try await rig.request(.setSetting, Fields { $0.setting = .focusMode; $0.value = .focusMode(.manual) })
        #expect(set.kind == .response(.setSetting, .notSupported))
    }

    @Test("framing errors and unreadable envelopes are not reported to the client: no response, no error event (§10)")
    func framingErrorsStayLocal() async throws {
        let rig = try await ModuleRig()
        let central = rig.client.transport
        // A continuation with nothing in progress.
        try await central.send([[0x81, 0x00]])
        // A whole keep-alive whose checksum is wrong.
        var corrupt = try UnleashedV1().packets(for: Message(.request(.keepAlive), id: 60, fields: Fields()), mtu: central.mtu)
        corrupt[corrupt.count - 1][corrupt[corrupt.count - 1].count - 1] ^= 0xFF
        try await central.send(corrupt)
        // An unknown kind, and a request with the reserved id 0.
        try await rig.client.sendRaw([0x07, 0x00, 0x3D, 0x02])
        try await rig.client.sendRaw([0x01, 0x00, 0x00, 0x02])
        let next = try await rig.client.request(.keepAlive, id: 62)
        #expect(next.id == 62, "the first response is to the first readable request")
        #expect(await rig.client.takeEvents().isEmpty, "no error event either")
    }

    @Test("no events before hello: nothing arrives before its response, and the first after it is number 0 (§4)")
    func noEventsBeforeHello() async throws {
        let clock = RunClock()
        let module = VirtualModule(camera: VirtualCamera(profile: .nikonLike), clock: clock, utcNow: { ModuleRig.utc })
        let client = await RawClient(module)
        await module.setCameraPower(.sleeping)
        await module.setCameraPower(.on)
        await module.setSceneEV(ExposureStops(twentyFourths: 5 * 24))
        try await client.hello()
        #expect(await client.takeEvents().isEmpty)
        await module.setCameraPower(.off)
        _ = try await client.request(.keepAlive, id: 2)
        let events = await client.takeEvents()
        #expect(events.map(\.kind) == [.event(.cameraPower)])
        #expect(events.first?.id == 0)
    }

    @Test("errorMessage for a request that cannot be decoded starts with the §10 error's name", arguments: [
        // getSetting without setting
        ([0x01, 0x00, 0x09, 0x05] as [UInt8], "missingField"),
        // setSetting iso with a 2-byte value
        ([0x01, 0x00, 0x09, 0x06, 0x20, 0x01, 0x01, 0x21, 0x02, 0x00, 0x64], "invalidFieldLength"),
        // setSetting shutterSpeed 10/20, not in lowest terms
        ([0x01, 0x00, 0x09, 0x06, 0x20, 0x01, 0x02, 0x21, 0x04, 0x00, 0x0A, 0x00, 0x14], "invalidValue"),
        // getSetting with setting twice
        ([0x01, 0x00, 0x09, 0x05, 0x20, 0x01, 0x01, 0x20, 0x01, 0x02], "duplicateField"),
        // getSetting whose field runs past the end
        ([0x01, 0x00, 0x09, 0x05, 0x20, 0x05, 0x01], "truncatedField"),
        // a length in two bytes where one would do
        ([0x01, 0x00, 0x09, 0x05, 0x20, 0x81, 0x00, 0x01], "invalidVarint"),
    ])
    func errorMessageNamesError(bytes: [UInt8], name: String) async throws {
        let rig = try await ModuleRig()
        try await rig.client.sendRaw(bytes)
        let response = try await rig.client.response()
        #expect(response.id == 9)
        #expect(response.kind == .response(Opcode(rawValue: bytes[3]), .invalidArgument))
        let message = try #require(response.fields.errorMessage)
        #expect(message.hasPrefix(name + ": "), "\(message)")
        #expect(message.count > name.count + 2, "then says what is wrong")
    }

    @Test("a new connection carries nothing unasked until hello, so a subscription kept for a bonded client delivers nothing (§1)")
    func nothingUnaskedOnReconnect() async throws {
        let rig = try await ModuleRig()
        rig.client.link.sever()
        let again = await RawClient(rig.module)
        // Things a session would hear of: the camera sleeps and wakes, the light changes, time passes.
        await rig.module.setCameraPower(.sleeping)
        await rig.module.setCameraPower(.on)
        await rig.module.setSceneEV(ExposureStops(twentyFourths: 3 * 24))
        await rig.advance(by: .seconds(5))
        try await again.send(Message(.request(.getStatus), id: 1, fields: Fields()))
        #expect(try await again.next().kind == .response(.getStatus, .notSupported), "the first thing notified is the response")
        try await again.hello()
        await rig.module.setCameraPower(.sleeping)
        _ = try await again.request(.keepAlive, id: 3)
        #expect(await again.takeEvents().map(\.id) == [0])
    }
}
