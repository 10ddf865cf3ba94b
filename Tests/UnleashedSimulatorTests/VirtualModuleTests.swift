import CameraKit
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
@testable import UnleashedSimulator

@Suite("The simulated module", .timeLimit(.minutes(1)))
struct VirtualModuleTests {
    @Test("answers every request before hello with notSupported")
    func helloFirst() async throws {
        let client = await RawClient(VirtualModule(camera: VirtualCamera(profile: .nikonLike)))
        let response = try await client.request(.getStatus, id: 5)
        #expect(response.kind == .response(.getStatus, .notSupported))
        #expect(response.fields.errorMessage == "say hello first")
    }

    @Test("negotiates the version and refuses a range it does not speak")
    func versionNegotiation() async throws {
        let client = await RawClient(VirtualModule(camera: VirtualCamera(profile: .nikonLike)))
        let refused = try await client.request(.hello, id: 1, Fields {
            $0.minProtocolVersion = 2
            $0.maxProtocolVersion = 9
        })
        #expect(refused.kind == .response(.hello, .notSupported))
        #expect(refused.fields.minProtocolVersion == 1 && refused.fields.maxProtocolVersion == 1)
        let accepted = try await client.request(.hello, id: 2, Fields {
            $0.minProtocolVersion = 1
            $0.maxProtocolVersion = 4
        })
        #expect(accepted.kind == .response(.hello, .ok))
        #expect(accepted.fields.protocolVersion == 1)
        #expect(accepted.fields.cameraModel == CameraProfile.nikonLike.model)
    }

    @Test("a repeated request id gets the remembered response and does not fire twice")
    func repeatedRequest() async throws {
        let module = VirtualModule(camera: VirtualCamera(profile: .nikonLike))
        let client = await RawClient(module)
        try await client.hello()
        let first = try await client.request(.shoot, id: 7)
        let again = try await client.request(.shoot, id: 7)
        #expect(first == again)
        #expect(first.kind == .response(.shoot, .ok))
        #expect(await module.repeatedRequests == 1)
        while try await client.next().kind != .event(.shotCompleted) {}
        #expect(await module.camera.shotCounter == 1)
    }

    @Test("refuses a second shot while the first exposure is open")
    func busyWhileExposing() async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        try camera.apply(.shutterSpeed(ShutterSpeed(seconds: 1, per: 2)!))
        let client = await RawClient(VirtualModule(camera: camera))
        try await client.hello()
        #expect(try await client.request(.shoot, id: 2).kind == .response(.shoot, .ok))
        #expect(try await client.request(.shoot, id: 3).kind == .response(.shoot, .busy))
    }

    @Test("reports a full card, a switched-off camera and bulb", arguments: [
        ("full card", StatusCode.cardFull), ("camera off", .cameraOff), ("bulb", .invalidArgument),
    ])
    func refusals(situation: String, status: StatusCode) async throws {
        var camera = VirtualCamera(profile: .nikonLike)
        switch situation {
        case "full card": camera.shotsRemaining = 0
        case "camera off": camera.power = .off
        default: try camera.apply(.shutterSpeed(.bulb))
        }
        let client = await RawClient(VirtualModule(camera: camera))
        try await client.hello()
        let response = try await client.request(.shoot, id: 2)
        #expect(response.kind == .response(.shoot, status))
        #expect(response.fields.errorMessage?.isEmpty == false)
    }

    @Test("answers a request it cannot decode with invalidArgument naming the problem")
    func undecodableRequest() async throws {
        let client = await RawClient(VirtualModule(camera: VirtualCamera(profile: .nikonLike)))
        try await client.hello()
        // setSetting with a shutter speed of 10/20, which is not in lowest terms.
        try await client.sendRaw([0x01, 0x00, 0x09, 0x06, 0x20, 0x01, 0x02, 0x21, 0x04, 0x00, 0x0A, 0x00, 0x14])
        let response = try await client.response()
        #expect(response.kind == .response(.setSetting, .invalidArgument))
        #expect(response.id == 9)
        #expect(response.fields.errorMessage?.contains("value") == true)
    }

    @Test("a setting change is answered, applied and announced")
    func settingChange() async throws {
        let module = VirtualModule(camera: VirtualCamera(profile: .nikonLike))
        let client = await RawClient(module)
        try await client.hello()
        let iso800 = SettingValue.iso(ISOSpeed(800)!)
        let response = try await client.request(.setSetting, id: 2, Fields {
            $0.setting = .iso
            $0.value = iso800
        })
        #expect(response.kind == .response(.setSetting, .ok))
        let event = try await client.next()
        #expect(event.kind == .event(.settingChanged))
        #expect(event.fields.value == iso800)
        #expect(await module.camera.settings[.iso] == iso800)
        let refused = try await client.request(.setSetting, id: 3, Fields {
            $0.setting = .iso
            $0.value = .iso(ISOSpeed(12345)!)
        })
        #expect(refused.kind == .response(.setSetting, .invalidArgument))
    }
}

@Suite("Simulated camera profiles and demo state", .timeLimit(.minutes(1)))
struct CameraProfileTests {
    @Test("every profile's ladders hold its defaults, with no value twice", arguments: CameraProfile.all)
    func ladders(profile: CameraProfile) {
        for (setting, choices) in profile.ladders {
            #expect(Set(choices).count == choices.count, "\(setting) repeats a value")
            #expect(choices.allSatisfy { $0.setting == setting })
            if let value = profile.defaults[setting] { #expect(choices.contains(value), "default \(setting)") }
        }
        #expect(profile.defaults.count == profile.ladders.count)
    }

    @Test("three bodies, found by id, each with its own ladders")
    func threeBodies() {
        #expect(CameraProfile.all.map(\.id) == ["nikon-z", "canon-r", "sony-a"])
        #expect(CameraProfile.allIDs == CameraProfile.all.map(\.id), "the written-out ids follow the profiles")
        for profile in CameraProfile.all {
            #expect(CameraProfile.named(profile.id)?.model == profile.model)
        }
        #expect(CameraProfile.named("leica-m") == nil)
        for setting: SettingID in [.iso, .shutterSpeed, .aperture] {
            #expect(Set(CameraProfile.all.compactMap { $0.choices(for: setting) }).count == 3, "\(setting)")
        }
    }

    @Test("ISO, shutter speed and aperture go in nominal thirds of a stop", arguments: CameraProfile.all)
    func thirdStops(profile: CameraProfile) {
        /// Neighbouring nominal values differ by about a third of a stop; the camera's rounding
        /// (1/13 to 1/15 s, f/13 to f/14) makes the steps uneven.
        func thirds(_ values: [Double], light: ClosedRange<Double>) -> Bool {
            zip(values, values.dropFirst()).allSatisfy { light.contains(max($0, $1) / min($0, $1)) }
        }
        let iso = profile.choices(for: .iso)!.compactMap { value -> Double? in
            guard case .iso(let speed) = value, speed.rawValue != 0 else { return nil }
            return Double(speed.rawValue)
        }
        let shutter = profile.choices(for: .shutterSpeed)!.compactMap { value -> Double? in
            guard case .shutterSpeed(let speed) = value, !speed.isBulb else { return nil }
            return Double(speed.numerator) / Double(speed.denominator)
        }
        let aperture = profile.choices(for: .aperture)!.compactMap { value -> Double? in
            guard case .aperture(let f) = value else { return nil }
            return Double(f.tenths) * Double(f.tenths)
        }
        #expect(thirds(iso, light: 1.18...1.35))
        #expect(thirds(shutter, light: 1.15...1.34))
        #expect(thirds(aperture, light: 1.15...1.41), "f-number squared is the light")
        #expect(profile.bufferDepth > 0 && profile.cardCapacity > 0)
        #expect(profile.autoPowerOff >= .seconds(30))
        #expect(profile.shutterLag < profile.focusTime)
    }

    @Test("the demo camera keeps its settings and shot count between runs")
    func demoStatePersists() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-demo-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let first = try await Demo.start(stateFile: file)
        _ = try await first.camera.set(.iso(ISOSpeed(1600)!))
        _ = try await first.camera.shoot()
        try await first.finish()

        let second = try await Demo.start(stateFile: file)
        #expect(try await second.camera.value(of: .iso) == .iso(ISOSpeed(1600)!))
        #expect(try await second.camera.status().shotCounter == 1)
        try await second.finish()
    }

    @Test("an unreadable demo state file is reported with the way out, not a crash")
    func corruptState() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-demo-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("{ not json".utf8).write(to: file)
        await #expect {
            _ = try await Demo.start(stateFile: file)
        } throws: { error in
            guard case .unreadableState(let path, _) = error as? DemoError else { return false }
            return path == file.path && String(describing: error).contains("remove it")
        }
    }
}
