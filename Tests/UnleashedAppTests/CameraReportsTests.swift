import CameraKit
import CommandCore
import Foundation
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// What `status`, `settings`, a rig's volley and the live line put together before printing.
@Suite struct CameraReportsTests {
    private func withDemoCamera(_ body: (any Camera) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let opened = try await CameraProvider().open(CameraSpec(.demo(DemoOptions(seed: 5), stateFile: file)))
        try await body(opened.camera)
        try await opened.close()
    }

    /// Formerly the decision half of `status --json`'s launch: a module's camera has a module member.
    @Test func statusOfAModuleCameraNamesTheModuleAndTheSettings() async throws {
        try await withDemoCamera { camera in
            let report = try await CameraStatusReport.gather(camera)
            #expect(!report.tethered)
            #expect(!report.settings.isEmpty, "a camera that is on gives its settings")
            let json = try #require(report.json.objectValue)
            #expect(json["backend"] == .string("unleashed"))
            #expect(json["module"]?.objectValue?["name"] == .string(report.identity.name))
            #expect(json["camera"]?.objectValue?["power"] == .string("on"))
            #expect(json["settings"]?.objectValue?["iso"] != nil)
        }
    }

    @Test func statusOfATetheredCameraHasItsPortAndNoModule() {
        let identity = CameraIdentity(name: "usb:001,004", capabilities: [.shoot], cameraModel: "Nikon Z 6")
        let status = CameraStatus(connection: .ready, moduleBattery: nil, cameraBattery: 80, storage: nil, shotsRemaining: nil,
                                  cameraPower: .on, exposureMode: nil, meteredEV: nil, busy: false, shotCounter: 2)
        let json = CameraStatusReport(identity: identity, status: status, settings: [], kind: .tethered).json.objectValue
        #expect(json?["module"] == nil)
        #expect(json?["backend"] == .string("gphoto2"))
        #expect(json?["camera"]?.objectValue?["port"] == .string("usb:001,004"))
    }

    /// A camera over its own remote, opened as `--demo-camera` opens it, reports its brand and
    /// what its remote offers, and no module.
    @Test func statusOfACameraOverItsOwnRemoteHasItsBrandAndNoModule() async throws {
        let camera = try await CameraProvider.openDemoCamera(.nikon)
        let report = try await CameraStatusReport.gather(camera)
        await camera.close()
        #expect(report.kind == .bluetoothCamera(.nikon))
        let json = report.json.objectValue
        #expect(json?["module"] == nil)
        #expect(json?["backend"] == .string("ble"))
        #expect(json?["camera"]?.objectValue?["brand"] == .string("nikon"))
        #expect(json?["camera"]?.objectValue?["capabilities"] == .array([.string("shoot")]))
    }

    /// Formerly a launch of `settings get zoom` and `settings set shutter soon`.
    @Test func aSettingOutsideTheModulesIsOnlyATetheredCamerasAndAValueIsRead() async throws {
        try await withDemoCamera { camera in
            await #expect(throws: CameraError.unknownSetting("zoom")) { try await SettingsAnswer.read("zoom", on: camera) }
            let zoom = CameraFailure(CameraError.unknownSetting("zoom"))
            #expect(zoom.status == .usage)
            #expect(zoom.message.contains("there is no setting called 'zoom'"))
            do throws(CameraError) {
                _ = try await SettingsAnswer.change("shutter", to: "soon", on: camera)
                Issue.record("'soon' was taken as a shutter speed")
            } catch {
                let failure = CameraFailure(error)
                #expect(failure.status == .usage)
                #expect(failure.message.contains("'soon' is not a shutter speed value; write it like 1/250, 0.5s, 30s or bulb"))
            }
            let changed = try await SettingsAnswer.change("iso", to: "800", on: camera)
            #expect(changed.json == ["setting": "iso", "value": "800"])
            let read = try await SettingsAnswer.read("iso", on: camera)
            #expect(read.json == ["setting": "iso", "value": "800"])
        }
    }

    @Test func aRigsSettingIsAModuleSetting() async throws {
        try await withDemoCamera { camera in
            let rig = try #require(Rig([RigCamera(name: "a", camera: camera)]))
            await #expect(throws: CameraFailure.self) { try await SettingsRigChange.apply("capturetarget", "card", on: rig) }
            let change = try await SettingsRigChange.apply("iso", "400", on: rig)
            #expect(change.json == ["setting": "iso", "cameras": [["camera": "a", "value": "400"]]])
        }
    }

    @Test func aVolleyReportNamesEachCameraAndTheSpread() async throws {
        try await withDemoCamera { camera in
            let rig = try #require(Rig([RigCamera(name: "a", camera: camera)]))
            let (outcomes, spread) = await rig.fire { camera throws(CameraError) in try await camera.status().shotCounter }
            let report = CameraRigReport(outcomes, spread, json: { ["count": .integer(Int64($0))] }, human: { "count \($0)" })
            #expect(report.failure == nil)
            #expect(report.lines.first?.hasPrefix("a: count ") == true)
            #expect(report.lines.last?.hasPrefix("Spread over 1 camera: commands ") == true)
            #expect(report.json.objectValue?["cameras"]?.arrayValue?.first?.objectValue?["camera"] == .string("a"))
        }
    }

    @Test func theLiveLineDropsWhatMattersLeastThenCuts() {
        let fields = [TerminalLine.Field("frame 3/10"), TerminalLine.Field("EV +12", dropOrder: 2), TerminalLine.Field("next 4s", dropOrder: 1)]
        #expect(TerminalLine.fit(fields, width: 80) == "frame 3/10  EV +12  next 4s")
        #expect(TerminalLine.fit(fields, width: 22) == "frame 3/10  next 4s")
        #expect(TerminalLine.fit(fields, width: 6) == "frame")
    }
}
