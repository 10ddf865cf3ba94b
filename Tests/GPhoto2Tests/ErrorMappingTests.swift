import CGPhoto2
@testable import GPhoto2
import CameraKit
import Testing
import UnleashedKit

@Suite struct ErrorMappingTests {
    @Test func resultCodesSortIntoKinds() {
        let cases: [(Int32, DeviceFailure.Kind)] = [
            (GP_ERROR_CAMERA_BUSY, .busy), (GP_ERROR_NO_SPACE, .cardFull), (GP_ERROR_IO, .disconnected),
            (GP_ERROR_IO_READ, .disconnected), (GP_ERROR_IO_USB_FIND, .disconnected), (GP_ERROR_TIMEOUT, .timedOut),
            (GP_ERROR_MODEL_NOT_FOUND, .disconnected), (GP_ERROR_NOT_SUPPORTED, .unsupported),
            (GP_ERROR_IO_USB_CLAIM, .permissionDenied), (GP_ERROR_BAD_PARAMETERS, .failed), (GP_ERROR, .failed),
        ]
        for (code, kind) in cases {
            #expect(GPhoto2Error(code: code, action: "take a picture").kind == kind, "\(code)")
        }
    }

    @Test func ptpDriverTextRevealsAFullCardOrBusyCamera() {
        #expect(GPhoto2Error(code: GP_ERROR, action: "take a picture", detail: "PTP Store Full").kind == .cardFull)
        #expect(GPhoto2Error(code: GP_ERROR, action: "take a picture", detail: "PTP Device Busy").kind == .busy)
        #expect(GPhoto2Error(code: GP_ERROR, action: "set bulb", detail: "PTP Device Prop Not Supported").kind == .unsupported)
    }

    @Test func libusbAccessDeniedIsAPermissionProblem() {
        let error = GPhoto2Error(code: GP_ERROR_IO, action: "open the camera on usb:001,004",
                                 detail: "Could not open USB device (Access denied (insufficient permissions)).")
        #expect(error.kind == .permissionDenied)
    }

    @Test func messagesAreForAPerson() {
        #expect(GPhoto2Error(code: GP_ERROR_NO_SPACE, action: "take a picture").description == "the memory card is full")
        let claim = GPhoto2Error(code: GP_ERROR_IO_USB_CLAIM, action: "open the camera on usb:001,004").description
        #expect(claim.contains("udev") && claim.contains("plugdev") && claim.contains("gvfs"))
        let gone = GPhoto2Error(code: GP_ERROR_IO_READ, action: "take a picture", detail: "read failed").description
        #expect(gone.hasPrefix("the camera is gone") && gone.contains("read failed"))
    }

    @Test func sessionIsLostOnIOAndTimeoutOnly() {
        #expect(GPhoto2Error(code: GP_ERROR_IO_WRITE, action: "x").losesSession)
        #expect(GPhoto2Error(code: GP_ERROR_TIMEOUT, action: "x").losesSession)
        #expect(!GPhoto2Error(code: GP_ERROR_CAMERA_BUSY, action: "x").losesSession)
        #expect(!GPhoto2Error(code: GP_ERROR_NO_SPACE, action: "x").losesSession)
    }

    @Test func becomesADeviceFailure() {
        let error = CameraError(GPhoto2Error(code: GP_ERROR_NO_SPACE, action: "take a picture"))
        #expect(error == .device(DeviceFailure(.cardFull, "the memory card is full")))
    }
}
