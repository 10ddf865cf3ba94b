import CameraKit
@testable import GPhoto2
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

    /// Debian's libgphoto2 knows "Nikon DSC D750", not the name on the camera.
    @Test func aModelLibgphoto2DoesNotKnowIsAUsageErrorNamingTheClosestItKnows() async {
        _ = TestHome.path
        await #expect {
            _ = try await GPhoto2Camera.open(port: "usb:", model: "Nikon D750")
        } throws: { error in
            guard case .invalidArgument(let message)? = error as? CameraError else { return false }
            return message.hasPrefix("libgphoto2 2.") && message.contains("knows no camera model 'Nikon D750'; the closest it knows: 'Nikon DSC D750'")
                && message.contains("gphoto2 --list-cameras") && (error as? CameraError)?.exitStatus == 64
        }
        await #expect(throws: CameraError.invalidArgument("the camera model is empty; `gphoto2 --list-cameras` lists the models libgphoto2 knows")) {
            _ = try await GPhoto2Camera.open(port: nil, model: " ")
        }
        // Nothing like it: no list of unrelated names.
        await #expect {
            _ = try await GPhoto2Camera.open(port: nil, model: "Zzyzx Qwerty 9000 Mark XIV")
        } throws: { error in
            guard case .invalidArgument(let message)? = error as? CameraError else { return false }
            return !message.contains("closest") && message.contains("'Zzyzx Qwerty 9000 Mark XIV'")
        }
    }

    /// libgphoto2 matches a model ignoring case; the camera is then looked for on the port, and
    /// not finding it there is said so, whether libusb1 failed the search by USB ids or by
    /// interface class ("Bad parameters" for the generic model's vendor 0 and a Canon's class 0).
    @Test(arguments: [("usb ptp class camera", "USB PTP Class Camera"), ("canon eos r", "Canon EOS R")])
    func aKnownModelIsTakenInAnyCaseAndLookedForOnItsPort(given: String, known: String) async throws {
        _ = TestHome.path
        guard try await GPhoto2Detection.detect().allSatisfy({ !$0.port.hasPrefix("usb:") }) else { return }
        await #expect {
            _ = try await GPhoto2Camera.open(port: nil, model: given)
        } throws: { error in
            guard case .device(let failure)? = error as? CameraError else { return false }
            return failure.kind == .disconnected && failure.message.hasPrefix("no camera found on usb: as '\(known)'; check the cable")
        }
    }

    @Test func theClosestModelsHoldEachWordElseAreFewEditsAway() {
        let models = ["Nikon DSC D750", "Nikon DSC D7500", "Nikon DSC D780", "Canon EOS 750D", "USB PTP Class Camera"]
        #expect(KnownModels.closest(to: "nikon d750", among: models) == ["Nikon DSC D750", "Nikon DSC D7500"])
        #expect(KnownModels.closest(to: "USB PTP Class Camra", among: models) == ["USB PTP Class Camera"])
        #expect(KnownModels.closest(to: "Leica M11", among: models) == [])
        #expect(KnownModels.closest(to: "D7", among: models, limit: 2).count == 2)
        #expect(KnownModels.closest(to: String(repeating: "Nikon D750 ", count: 1000), among: models) == [])
    }

    @Test func aPTPIPCameraThatDoesNotAnswerIsReportedGone() async {
        _ = TestHome.path
        // Port 9 (discard) on the loopback has no listener: the connection is refused at once.
        await #expect {
            _ = try await GPhoto2Camera.open(port: "ptpip:127.0.0.1:9")
        } throws: { deviceKind($0) == .disconnected || deviceKind($0) == .timedOut }
    }
}
