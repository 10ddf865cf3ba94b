import CameraKit
public import DaemonClient
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

extension RunFailure {
    /// A failed request to the daemon, for a job or any command through it: a camera's error
    /// as the camera's own, a refusal (401, 403) as not allowed, a conflict (409) as refused.
    public init(_ error: DaemonClientError) {
        extra = [:]
        switch error {
        case .notReachable(let socket, let reason):
            (code, message, exitStatus) = ("noDaemon", "the daemon does not answer on \(socket): \(reason)", 69)
        case .badAnswer(let why):
            (code, message, exitStatus) = ("daemon", "the daemon's answer could not be read: \(why)", 70)
        case .http(_, _, _, let camera?):
            (code, message, exitStatus) = (camera.code, camera.description, camera.exitStatus)
        case .http(let status, let code, let message, nil):
            (self.code, self.message) = (code, message)
            exitStatus = switch status {
            case 401, 403: 77
            case 409: 65
            case 400..<500: 64
            default: 69
            }
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
