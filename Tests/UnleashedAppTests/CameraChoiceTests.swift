import Daemon
import Foundation
import Testing
import UnleashedApp
import UnleashedSimulator

@Suite struct CameraChoiceTests {
    @Test func theEnvironmentPicksTheBackendWhenNoOptionDoes() throws {
        #expect(try BackendChoice.chosen(nil, environment: [:]) == .unleashed)
        #expect(try BackendChoice.chosen(nil, environment: ["UNLEASHED_BACKEND": "GPhoto2"]) == .gphoto2)
        #expect(try BackendChoice.chosen(.unleashed, environment: ["UNLEASHED_BACKEND": "gphoto2"]) == .unleashed)
        #expect(throws: CameraChoiceError.usage("UNLEASHED_BACKEND: 'usb' is not a backend; use unleashed or gphoto2")) {
            try BackendChoice.chosen(nil, environment: ["UNLEASHED_BACKEND": "usb"])
        }
    }

    @Test func bluezSocketsAreTheDaemonsByDefaultAndTheEnvironmentDecidesForBoth() {
        for daemon in [true, false] {
            #expect(ModuleSpec.bluezSockets([:], daemon: daemon) == daemon)
            #expect(ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": ""], daemon: daemon) == daemon)
            for on in ["1", "true", "YES", "on"] { #expect(ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": on], daemon: daemon), "\(on)") }
            for off in ["0", "false", "No", "off", "disable"] {
                #expect(!ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": off], daemon: daemon), "\(off)")
            }
        }
        let configuration = DaemonConfiguration.defaults(scope: .user, environment: [:])
        let spec = DaemonCameras<ContinuousClock>.spec(.init(name: "a", address: "F0:5E:D0:00:00:01"), configuration: configuration)
        guard case .module(let module) = spec.backend else {
            Issue.record("a configured module is not opened as a module: \(spec.backend)")
            return
        }
        // Unless the environment of whoever runs the tests says otherwise.
        #expect(module.bluezSockets == ModuleSpec.bluezSockets(ProcessInfo.processInfo.environment, daemon: true))
        #expect(ModuleSpec(module: "F0:5E:D0:00:00:01").bluezSockets
            == ModuleSpec.bluezSockets(ProcessInfo.processInfo.environment, daemon: false), "a command's own link")
    }
}
