public import BlueZ
import CameraKit
public import CommandCore
import JSON
public import UnleashedKit
public import UnleashedSimulator

// The application layer's errors as commands report them; the failure itself, and the camera's
// and the daemon client's errors, are classified in CommandCore.
extension CameraFailure {
    public init(_ error: CameraChoiceError) {
        switch error {
        case .usage(let message): self = .usage(message)
        case .noModule: self.init(code: "noModule", error.description, status: .unavailable)
        case .invalid(let code, let message): self.init(code: code, message, status: .usage)
        }
    }

    public init(_ error: CameraOpenError) {
        switch error {
        case .bluetooth(let error): self.init(error)
        case .camera(let error): self.init(error)
        case .demo(let error): self.init(error)
        }
    }

    public init(_ error: DemoError) {
        if case .camera(let cameraError) = error {
            self.init(cameraError)
        } else {
            self.init(code: "demoState", error.description, status: .unavailable)
        }
    }

    /// BlueZ's refusals: what the user must fix is unavailable, except a refused pairing and
    /// a permission.
    public init(_ error: BlueZError) {
        self.init(code: error.code, error.description, status: ExitStatus(rawValue: error.exitStatus) ?? .software)
    }

    /// A rig's change that was refused, or applied on some cameras only: each camera's
    /// failure is named, and the cameras changed.
    public init(_ error: RigError) {
        let failures: [RigError.BodyFailure]
        let code: String
        var extra: [String: JSONValue] = [:]
        switch error {
        case .refused(let refused):
            (failures, code) = (refused, "rigRefused")
        case .partlyApplied(let applied, let failed):
            (failures, code) = (failed, "rigPartlyApplied")
            extra["applied"] = .array(applied.map(JSONValue.string))
        }
        extra["cameras"] = .array(failures.map { failure in
            ["camera": .string(failure.name), "code": .string(failure.error.code), "message": .string(failure.error.description)]
        })
        self.init(code: code, error.description, status: .refused, extra: extra)
    }
}

extension CameraFailure {
    /// The result of `body`, its refusal classified.
    public static func choosing<Value>(_ body: () throws(CameraChoiceError) -> Value) throws(CameraFailure) -> Value {
        do throws(CameraChoiceError) {
            return try body()
        } catch {
            throw CameraFailure(error)
        }
    }
}
