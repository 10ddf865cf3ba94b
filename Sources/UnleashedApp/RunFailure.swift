import CameraKit
public import CommandCore
public import Intervalometer

extension CameraFailure {
    /// A run that failed or was refused, as a script tells it apart: the `--json` error code,
    /// the exit status (sysexits, as the camera's errors use) and any members the error adds.
    public init(_ error: TimelapseError) {
        switch error {
        case .invalidPlan: self.init(code: "invalidPlan", error.description, status: .usage)
        case .intervalTooShort(let minimum, _):
            self.init(code: "intervalTooShort", error.description, status: .usage, extra: ["minimumMs": .integer(minimum)])
        case .hookRefused: self.init(code: "hookRefused", error.description, status: .refused)
        case .journal: self.init(code: "journal", error.description, status: .unavailable)
        case .owned: self.init(code: "runOwned", error.description, status: .temporary)
        case .stoppedBeforeStart: self.init(code: "cancelled", error.description, status: .interrupted)
        case .camera(let cameraError), .rigCamera(_, let cameraError):
            self.init(code: cameraError.code, error.description, status: ExitStatus(rawValue: cameraError.exitStatus) ?? .software)
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
