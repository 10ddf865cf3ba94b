import CameraKit
import GPhoto2
import Testing
import UnleashedKit

@Suite(.serialized) struct OpeningTests {
    @Test func aPortThatIsNotACameraPortIsRefusedBeforeAnythingIsTried() async {
        await #expect(throws: CameraError.invalidArgument("'serial:/dev/ttyS0' is not a camera port; write usb:, usb:BUS,DEV or ptpip:HOST[:PORT]")) {
            _ = try await GPhoto2Camera.open(port: "serial:/dev/ttyS0")
        }
    }

    @Test func aMissingUSBCameraIsExplained() async throws {
        _ = TestHome.path
        // This machine has no camera on USB; if one is ever attached, there is nothing to check.
        guard try await GPhoto2Detection.detect().allSatisfy({ !$0.port.hasPrefix("usb:") }) else { return }
        await #expect {
            _ = try await GPhoto2Camera.open(port: "usb:")
        } throws: { error in
            guard case .device(let failure)? = error as? CameraError else { return false }
            return failure.kind == .disconnected && failure.message.hasPrefix("no camera found on USB")
                && failure.message.contains("docs/usb-cameras.md")
        }
    }

    @Test func aPTPIPCameraThatDoesNotAnswerIsReportedGone() async {
        _ = TestHome.path
        // Port 9 (discard) on the loopback has no listener: the connection is refused at once.
        await #expect {
            _ = try await GPhoto2Camera.open(port: "ptpip:127.0.0.1:9")
        } throws: { deviceKind($0) == .disconnected || deviceKind($0) == .timedOut }
    }
}
