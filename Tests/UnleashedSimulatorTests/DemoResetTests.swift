import CameraKit
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

@Suite("Resetting the demo camera", .timeLimit(.minutes(1)))
struct DemoResetTests {
    @Test("a camera left off, drained and full is replaced by a fresh one of the same body, switched on")
    func reset() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-demo-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let used = try await Demo.start(stateFile: file, options: DemoOptions(profile: CameraProfile.named("canon-r")))
        _ = try await used.camera.set(.iso(ISOSpeed(1600)!))
        _ = try await used.camera.shoot()
        await used.module.setCameraPower(.off)
        try await used.finish()
        var state = try JSONDecoder().decode(DemoCameraState.self, from: Data(contentsOf: file))
        state.battery = 3
        state.shotsRemaining = 0
        try JSONEncoder().encode(state).write(to: file)

        let fresh = try Demo.reset(stateFile: file)
        #expect(fresh.profile.id == "canon-r", "the saved body is kept")
        #expect(fresh.power == .on)

        let restarted = try await Demo.start(stateFile: file)
        let status = try await restarted.camera.status()
        #expect(status.cameraPower == .on)
        #expect(status.shotCounter == 0)
        #expect(status.cameraBattery == Int(VirtualCamera(profile: fresh.profile).battery))
        #expect(status.shotsRemaining == Int(fresh.profile.cardCapacity))
        #expect(try await restarted.camera.value(of: .iso) == fresh.profile.defaults[.iso])
        _ = try await restarted.camera.shoot()
        try await restarted.finish()
    }

    @Test("a damaged state file is replaced; another body can be asked for")
    func damaged() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-demo-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("{ not json".utf8).write(to: file)
        #expect(try Demo.reset(stateFile: file).profile.id == CameraProfile.all[0].id)
        #expect(try Demo.reset(stateFile: file, profile: CameraProfile.named("sony-a")).profile.id == "sony-a")
        #expect(try JSONDecoder().decode(DemoCameraState.self, from: Data(contentsOf: file)).power == "on")
    }
}
