import CameraKit
import Testing
import UnleashedKit
import UnleashedProtocol

/// The module backend turns the module's status codes into the camera API's failure reasons.
@Suite("Module errors in the camera API's terms")
struct ModuleErrorsTests {
    @Test("every status a module can refuse with has a reason of the same name; an unknown one keeps its text")
    func everyStatusHasAReason() {
        for (status, name) in StatusCode.known where status != .ok {
            #expect(FailureReason(status).name == name)
            #expect(FailureReason(name: name) == FailureReason(status))
        }
        let unknown = StatusCode(rawValue: 0x77)
        #expect(FailureReason(unknown) == .other("unknown(119)"))
        #expect(CameraError.refused("shoot", FailureReason(unknown), message: nil).code == "refused")
    }

    @Test("a session failure keeps its operation's name and its words")
    func sessionFailures() {
        #expect(CameraError(SessionError.refused(.setSetting, .cameraOff, message: "asleep"))
            == .refused("setSetting", .cameraOff, message: "asleep"))
        #expect(CameraError(SessionError.timedOut(.shoot, after: .seconds(2))) == .timedOut("shoot", after: .seconds(2)))
        let mismatch = SessionError.versionMismatch(module: 2...3, client: 1...1)
        #expect(CameraError(mismatch) == .device(DeviceFailure(.versionMismatch, mismatch.description)))
        #expect(CameraError(mismatch).kind == .unavailable)
    }
}
