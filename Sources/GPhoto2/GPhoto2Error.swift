import CGPhoto2
public import CameraKit
import UnleashedKit

/// A libgphoto2 call that failed: its result code, what we were doing, and the text
/// libgphoto2 reported through its context, if any.
public struct GPhoto2Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libgphoto2 result code (`GP_ERROR_*`), negative.
    public var code: Int32
    /// What was being done, as a verb phrase: "take a picture".
    public var action: String
    /// The message libgphoto2 or its driver gave, when it gave one.
    public var detail: String?
    /// A message to show instead of the generic one (for failures we diagnose ourselves).
    var explanation: String?

    public init(code: Int32, action: String, detail: String? = nil) {
        self.code = code
        self.action = action
        self.detail = detail
    }

    init(code: Int32, action: String, explanation: String) {
        self.init(code: code, action: action)
        self.explanation = explanation
    }

    /// libgphoto2's short name for the code ("I/O problem", "Camera is busy").
    public var codeText: String {
        String(cString: gp_result_as_string(code))
    }

    /// How a caller should treat the failure.
    public var kind: DeviceFailure.Kind {
        let text = (detail ?? "").lowercased()
        // libusb's "Access denied (insufficient permissions)" arrives as a plain I/O error.
        if [GP_ERROR_IO, GP_ERROR_IO_INIT, GP_ERROR_IO_READ, GP_ERROR_IO_WRITE].contains(code),
           text.contains("permission") || text.contains("access denied") {
            return .permissionDenied
        }
        switch code {
        case GP_ERROR_CAMERA_BUSY: return .busy
        case GP_ERROR_NO_SPACE: return .cardFull
        case GP_ERROR_IO_USB_CLAIM, GP_ERROR_IO_LOCK: return .permissionDenied
        case GP_ERROR_TIMEOUT: return .timedOut
        case GP_ERROR_NOT_SUPPORTED: return .unsupported
        case GP_ERROR_IO, GP_ERROR_IO_READ, GP_ERROR_IO_WRITE, GP_ERROR_IO_UPDATE, GP_ERROR_IO_INIT,
             GP_ERROR_IO_USB_FIND, GP_ERROR_IO_USB_CLEAR_HALT, GP_ERROR_MODEL_NOT_FOUND, GP_ERROR_UNKNOWN_PORT:
            return .disconnected
        default:
            // PTP drivers report a full card and a busy camera as a generic error with text.
            if ["store full", "storefull", "no space", "ran full"].contains(where: text.contains) { return .cardFull }
            if text.contains("device busy") || text.contains("devicebusy") { return .busy }
            if text.contains("not supported") { return .unsupported }
            return .failed
        }
    }

    /// The session cannot be trusted after this failure: the link is broken or a transaction
    /// was left half done, so the camera must be opened again.
    var losesSession: Bool {
        kind == .disconnected || kind == .timedOut
    }

    private var reported: String {
        detail.map { "\($0) (\(codeText))" } ?? codeText
    }

    public var description: String {
        if let explanation { return explanation }
        switch kind {
        case .busy: return "the camera is busy and could not \(action); try again in a moment (\(reported))"
        case .cardFull: return "the memory card is full"
        case .disconnected where action.hasPrefix("open"):
            return "could not \(action): \(reported); check that the camera is on, connected and in PTP/PC mode"
        case .disconnected: return "the camera is gone: could not \(action): \(reported)"
        case .timedOut: return "the camera did not answer in time while trying to \(action) (\(reported))"
        case .unsupported: return "this camera cannot \(action): \(reported)"
        case .permissionDenied:
            return "could not \(action): access to the camera was denied (\(reported)); "
                + GPhoto2Error.permissionAdvice
        case .failed, .link, .versionMismatch, .invalidRequest, .pairingRefused: return "could not \(action): \(reported)"
        }
    }

    static let permissionAdvice = "install libgphoto2's udev rules and add this user to the plugdev group, "
        + "and make sure no other program (the gvfs-gphoto2 volume monitor, a photo app) holds the camera "
        + "— see docs/usb-cameras.md"

    /// The failure in the terms every camera backend uses.
    public var deviceFailure: DeviceFailure { DeviceFailure(kind, description) }
}

extension CameraError {
    /// A libgphoto2 failure as a camera failure.
    init(_ error: GPhoto2Error) {
        self = .device(error.deviceFailure)
    }

    /// An operation this camera model cannot do; `subject` ends in its verb ("bulb exposures are").
    static func notSupported(_ subject: String, because why: String) -> CameraError {
        .device(DeviceFailure(.unsupported, "\(subject) not supported by this camera: \(why)"))
    }
}
