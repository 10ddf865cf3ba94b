import CameraProtocols
import CommandCore
import Daemon
import Testing
import UnleashedApp

/// How options, rig members and the daemon's configuration come down to a camera driven
/// through its own Bluetooth remote protocol.
@Suite struct BluetoothCameraChoiceTests {
    private func request(camera: String? = nil, brand: String? = nil, demoCamera: String? = nil, module: String? = nil) -> CameraRequest {
        CameraRequest(module: module, camera: camera, brand: brand, demoCamera: demoCamera, environment: [:])
    }

    @Test func cameraAndBrandChooseACameraOverBlueZ() throws {
        let spec = try request(camera: "C0:CA:4E:00:00:02", brand: "Sony").choice().spec()
        guard case .bluetoothCamera(let camera) = spec.backend else {
            Issue.record("--ble-camera did not choose a camera over BlueZ: \(spec.backend)")
            return
        }
        #expect(camera.camera == "C0:CA:4E:00:00:02" && camera.brand == .sony)
        guard case .bluetoothCamera(let unbranded) = try request(camera: "GoPro 1234").choice().spec().backend else {
            Issue.record("--ble-camera without --brand did not choose a camera over BlueZ")
            return
        }
        #expect(unbranded.brand == nil, "the brand is left to the advertisement")
    }

    @Test func demoCameraChoosesASimulatedBodyOfTheBrand() throws {
        guard case .demoCamera(.nikon) = try request(demoCamera: "nikon").choice().spec().backend else {
            Issue.record("--demo-camera nikon did not choose a simulated Nikon")
            return
        }
    }

    /// A mistyped address is refused at once, not scanned for until "not found"; a name is not.
    @Test func aMalformedAddressIsRefusedAtOnce() throws {
        for malformed in ["C0:CA:4E:00:00", "C0:CA:4E:00:00:0G", "C0:CA:4E:00:00:02:", "C0-CA:4E:00:00:02"] {
            #expect(throws: CameraFailure.usage("--ble-camera '\(malformed)' is not a Bluetooth address: six pairs of hex digits, like AA:BB:CC:DD:EE:FF")) {
                try request(camera: malformed).choice()
            }
        }
        #expect(throws: CameraFailure.self) { try request(module: "F0:5E:D0:00:01").choice() }
        _ = try request(camera: "GoPro 1234").choice()
        _ = try request(camera: "c0:ca:4e:00:00:02").choice()
    }

    @Test func optionsThatDoNotGoTogetherAreRefused() {
        #expect(throws: CameraFailure.usage("--demo-camera: 'leica' is not a brand this tool drives; use one of gopro, sony, canon, fujifilm, nikon")) {
            try request(demoCamera: "leica").choice()
        }
        #expect(throws: CameraFailure.usage("--brand says which brand --ble-camera is; add --ble-camera ADDRESS")) {
            try request(brand: "sony").choice()
        }
        #expect(throws: CameraFailure.usage("--module names an Unleashed module and --ble-camera or --demo-camera a camera reached directly; use one")) {
            try request(camera: "C0:CA:4E:00:00:02", module: "F0:5E:D0:00:00:01").choice()
        }
        #expect(throws: CameraFailure.usage("--ble-camera and --demo-camera each name the camera; use one")) {
            try request(camera: "C0:CA:4E:00:00:02", demoCamera: "sony").choice()
        }
    }

    /// A rig mixes modules and cameras: a member written `BRAND:ADDRESS` is a camera over its
    /// own protocol (a simulated one in demo mode), any other a module.
    @Test func aRigMixesBrandedCamerasAndModules() throws {
        let choice = CameraChoice(backend: .unleashed, demo: nil)
        let rig = try choice.rig(["gopro:C0:CA:4E:00:00:01", "canon:studio", "F0:5E:D0:00:00:01"], configured: ["studio": "C0:CA:4E:00:00:03"])
        guard case .bluetoothCamera(let gopro) = rig[0].backend, case .bluetoothCamera(let canon) = rig[1].backend,
              case .module(let module) = rig[2].backend else {
            Issue.record("the rig's members were not read as two cameras and a module")
            return
        }
        #expect(gopro.camera == "C0:CA:4E:00:00:01" && gopro.brand == .gopro)
        #expect(canon.camera == "C0:CA:4E:00:00:03" && canon.brand == .canon, "a configured name stands for its address")
        #expect(module.module == "F0:5E:D0:00:00:01")
        let demoRig = try CameraChoice(backend: .unleashed, demo: .init()).rig(["sony:a", "b"])
        guard case .demoCamera(.sony) = demoRig[0].backend, case .demo = demoRig[1].backend else {
            Issue.record("in demo mode a branded member was not a simulated camera of its brand")
            return
        }
    }

    @Test func aConfiguredModuleWithABrandOpensAsACamera() {
        var configuration = DaemonConfiguration.defaults(scope: .user, environment: [:])
        configuration.modules = [
            DaemonConfiguration.Module(name: "hero", address: "C0:CA:4E:00:00:01", brand: .gopro),
            DaemonConfiguration.Module(name: "left", address: "F0:5E:D0:00:00:01"),
        ]
        guard case .bluetoothCamera(let camera) = DaemonCameras<ContinuousClock>.spec(configuration.modules[0], configuration: configuration).backend,
              case .module = DaemonCameras<ContinuousClock>.spec(configuration.modules[1], configuration: configuration).backend else {
            Issue.record("a configured entry with a brand did not open as a camera, or one without as a module")
            return
        }
        #expect(camera.camera == "C0:CA:4E:00:00:01" && camera.brand == .gopro)
    }
}
