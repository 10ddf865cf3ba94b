import CameraKit
public import Intervalometer
public import UnleashedProtocol

/// A run that failed or was refused, as a script tells it apart: the `--json` error code, the
/// exit status (sysexits, as the camera's errors use) and any members the error adds.
public struct RunFailure: Sendable, Equatable {
    public var code: String
    public var message: String
    public var exitStatus: Int32
    public var extra: [String: JSONValue]

    /// The exit status of a run stopped by Ctrl-C (128 + SIGINT); SIGTERM's is the caller's to tell.
    public static let interruptedStatus: Int32 = 130

    public init(_ error: TimelapseError) {
        message = error.description
        extra = [:]
        switch error {
        case .invalidPlan: (code, exitStatus) = ("invalidPlan", 64)
        case .intervalTooShort(let minimum, _):
            (code, exitStatus) = ("intervalTooShort", 64)
            extra = ["minimumMs": .integer(minimum)]
        case .hookRefused: (code, exitStatus) = ("hookRefused", 65)
        case .journal: (code, exitStatus) = ("journal", 69)
        case .owned: (code, exitStatus) = ("runOwned", 75)
        case .stoppedBeforeStart: (code, exitStatus) = ("cancelled", Self.interruptedStatus)
        case .camera(let cameraError), .rigCamera(_, let cameraError): (code, exitStatus) = (cameraError.code, cameraError.exitStatus)
        }
    }
}

extension RunEnd.Verdict {
    /// The exit status of a run with this verdict: 74 when the journal failed, 69 when nothing
    /// could be shot, 65 when every shot was refused.
    public var exitStatus: Int32 {
        switch self {
        case .journalFailed: 74
        case .unavailable: 69
        case .refused: 65
        }
    }
}
