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

    @Test func bluezSocketsAreUsedUnlessTheEnvironmentTurnsThemOff() {
        #expect(ModuleSpec.bluezSockets([:]))
        #expect(ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": ""]))
        for on in ["1", "true", "YES", "on"] { #expect(ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": on]), "\(on)") }
        for off in ["0", "false", "No", "off", "disable"] { #expect(!ModuleSpec.bluezSockets(["UNLEASHED_BLUEZ_SOCKETS": off]), "\(off)") }
    }
}
