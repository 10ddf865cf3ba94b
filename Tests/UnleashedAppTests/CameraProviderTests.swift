import Foundation
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedSimulator

@Suite struct CameraProviderTests {
    private func stateFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("provider-\(UUID().uuidString).json")
    }

    @Test func opensTheSimulatorFromItsSpec() async throws {
        let file = stateFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let opened = try await CameraProvider().open(CameraSpec(name: "a", .demo(DemoOptions(seed: 3), stateFile: file)))
        let status = try await opened.camera.status()
        #expect(status.connection == .ready)
        try await opened.close()
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    /// A rig opens every camera, in its order.
    @Test func opensARigInItsOrder() async throws {
        let files = [stateFile(), stateFile()]
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        let rig = files.enumerated().map { CameraSpec(name: "cam\($0)", .demo(DemoOptions(seed: UInt64($0)), stateFile: $1)) }
        let opened = try await CameraProvider().open(rig: rig)
        #expect(opened.count == 2)
        for camera in opened { try await camera.close() }
    }

    /// A choice refuses options that do not fit its backend before anything is opened.
    @Test func aChoiceRefusesOptionsOfAnotherBackend() throws {
        #expect(throws: CameraChoiceError.usage("--port names a libgphoto2 port; add --backend gphoto2")) {
            try CameraChoice(backend: .unleashed, demo: DemoOptions(), port: "usb:").spec()
        }
        #expect(throws: CameraChoiceError.noModule) { try CameraChoice(backend: .unleashed, demo: nil).spec() }
        #expect(throws: CameraChoiceError.usage("--filename names downloaded pictures; add --download FOLDER")) {
            try CameraChoice(backend: .gphoto2, demo: nil, filename: "%f").spec()
        }
        #expect(throws: CameraChoiceError.usage("a rig is a set of Unleashed modules; --backend gphoto2 drives one camera")) {
            try CameraChoice(backend: .gphoto2, demo: nil).rig(["a"])
        }
        let spec = try CameraChoice(backend: .unleashed, demo: nil, module: "AA:BB:CC:DD:EE:FF", adapter: "hci1").spec()
        guard case .module(let module) = spec.backend else { Issue.record("not a module: \(spec)"); return }
        #expect(module.module == "AA:BB:CC:DD:EE:FF")
        #expect(module.adapter == "hci1")
    }

    /// A rig's configured names stand for their addresses; simulated members get seeds of their own.
    @Test func aRigsNamesBecomeModulesOrSimulators() throws {
        let modules = try CameraChoice(backend: .unleashed, demo: nil).rig(["left", "AA:BB:CC:DD:EE:01"], configured: ["left": "AA:BB:CC:DD:EE:00"])
        #expect(modules.map(\.source) == ["AA:BB:CC:DD:EE:00", "AA:BB:CC:DD:EE:01"])
        #expect(modules.map(\.name) == ["left", "AA:BB:CC:DD:EE:01"])
        let simulated = try CameraChoice(backend: .unleashed, demo: DemoOptions(seed: 7)).rig(["a", "b"])
        let seeds = simulated.compactMap { spec -> UInt64? in
            if case .demo(let options, _) = spec.backend { return options.seed }
            return nil
        }
        #expect(seeds == [7, 8])
    }
}

extension CameraProviderTests {
    /// What used to be checked by launching `unleashed --port usb: status` and
    /// `--backend gphoto2 --download /tmp --filename x%Q shoot`.
    @Test func tetheredOptionsGoWithTheTetheredBackendOnly() throws {
        #expect(throws: CameraChoiceError.usage("--port names a libgphoto2 port; add --backend gphoto2")) {
            try CameraChoice(backend: .unleashed, demo: nil, port: "usb:", module: "AA:BB:CC:DD:EE:FF").spec()
        }
        #expect(throws: CameraChoiceError.usage("the module does not transfer pictures; --download and --filename need --backend gphoto2")) {
            try CameraChoice(backend: .unleashed, demo: nil, download: "/tmp").spec()
        }
        #expect {
            try CameraChoice(backend: .gphoto2, demo: nil, download: "/tmp", filename: "x%Q").spec()
        } throws: { error in
            guard case .usage(let message) = error as? CameraChoiceError else { return false }
            return message.hasPrefix("--filename: ")
        }
        #expect {
            try CameraChoice(backend: .gphoto2, demo: DemoOptions()).spec()
        } throws: { error in
            guard case .usage(let message) = error as? CameraChoiceError else { return false }
            return message.contains("unleashed-sim ptpip")
        }
        let spec = try CameraChoice(backend: .gphoto2, demo: nil, port: "ptpip:127.0.0.1", download: "/tmp").spec()
        guard case .tethered(let port, let model, let downloads) = spec.backend else { Issue.record("not tethered: \(spec)"); return }
        #expect(port == "ptpip:127.0.0.1")
        #expect(model == nil)
        #expect(downloads?.folder == "/tmp")
    }

    @Test func aCameraModelGoesToLibgphoto2WithThePortAndNeedsItsBackend() throws {
        let spec = try CameraChoice(backend: .gphoto2, demo: nil, cameraModel: "USB PTP Class Camera").spec()
        guard case .tethered(let port, let model, _) = spec.backend else { Issue.record("not tethered: \(spec)"); return }
        #expect(port == nil && model == "USB PTP Class Camera")
        #expect(spec.source == "usb:")
        #expect(throws: CameraChoiceError.usage("--camera-model names a camera model for libgphoto2; add --backend gphoto2")) {
            try CameraChoice(backend: .unleashed, demo: nil, cameraModel: "USB PTP Class Camera", module: "AA:BB:CC:DD:EE:FF").spec()
        }
        let request = CameraRequest(backend: .gphoto2, port: "usb:001,004", cameraModel: "Nikon DSC D750", environment: [:])
        let chosen = try request.choice()
        #expect(chosen.cameraModel == "Nikon DSC D750" && chosen.port == "usb:001,004")
    }

    /// Nothing listens on the port: the provider says the camera is not there.
    @Test func aTetheredCameraThatIsNotThereIsACameraError() async {
        await #expect {
            _ = try await CameraProvider().open(CameraSpec(.tethered(port: "ptpip:127.0.0.1:1", downloads: nil)))
        } throws: { error in
            guard case .camera = error as? CameraOpenError else { return false }
            return true
        }
    }
}
