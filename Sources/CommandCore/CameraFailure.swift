public import CameraKit
public import DaemonClient
public import JSON

/// A failure as a command reports it: a code scripts can tell apart, a message, an exit status
/// and extra `--json` members. Every error a command meets is classified here or in the
/// application layer's extensions (UnleashedApp), the camera's by CameraKit's tables, so that the
/// executables only print.
public struct CameraFailure: Error, Sendable, Equatable {
    public var code: String
    public var message: String
    public var status: ExitStatus
    /// Members added to the `--json` error object beside `code` and `message`.
    public var extra: [String: JSONValue]

    public init(code: String, _ message: String, status: ExitStatus, extra: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.status = status
        self.extra = extra
    }

    /// A command line that cannot be carried out as written.
    public static func usage(_ message: String) -> CameraFailure { CameraFailure(code: "usage", message, status: .usage) }

    /// A camera's error: code and status from CameraKit's tables (a cancelled command exits as
    /// the signal that cancelled it); a value not offered names the nearest and offered values.
    public init(_ error: CameraError) {
        var status = ExitStatus(rawValue: error.exitStatus) ?? .software
        if status == .interrupted { status = Interrupt.exitStatus }
        var extra: [String: JSONValue] = [:]
        if case .valueNotOffered(_, let nearest, let offered) = error {
            extra["nearest"] = .array(nearest.map { .string($0.text) })
            extra["offered"] = .array(offered.map { .string($0.text) })
        }
        self.init(code: error.code, error.description, status: status, extra: extra)
    }

    /// A failed request to the daemon: a camera's error exactly as in direct mode, a refusal
    /// (401, 403) as such.
    public init(_ error: DaemonClientError) {
        switch error {
        case .notReachable(let socket, let reason):
            self.init(code: "noDaemon", "the daemon does not answer on \(socket): \(reason)", status: .unavailable)
        case .badAnswer(let why):
            self.init(code: "daemon", "the daemon's answer could not be read: \(why)", status: .software)
        case .http(_, _, _, let camera?):
            self.init(camera)
        case .http(let status, let code, let message, nil):
            let exit: ExitStatus = switch status {
            case 401, 403: .noPermission
            case 409: .refused
            case 400..<500: .usage
            default: .unavailable
            }
            self.init(code: code, message, status: exit)
        }
    }

    /// The failure as demo mode reports it: the simulated camera is not switched on by hand,
    /// it stays off until replaced.
    public func inDemo(_ demo: Bool) -> CameraFailure {
        guard demo, code == "cameraOff" else { return self }
        var failure = self
        failure.message += "; the simulated camera stays off until `unleashed demo reset` puts a fresh one, switched on, in its place"
        return failure
    }

    /// The `--json` document: `{"error": {"code", "message", ...extra}}`.
    public var json: JSONValue {
        var body = extra
        body["code"] = .string(code)
        body["message"] = .string(message)
        return ["error": .object(body)]
    }

    /// Prints the failure as a command reports it: the JSON document on `output` with `json`,
    /// else `error: MESSAGE` on standard error.
    public func report(json: Bool, output: StandardStream = .output) {
        if json {
            output.line(CommandJSON.text(self.json))
        } else {
            StandardStream.error.line("error: \(message)")
        }
    }
}

extension CameraFailure {
    /// A command line that does not parse, for `--json`: `usage` when an option or value is
    /// wrong, else `failed`; the hint (how to write a negative number) follows the message.
    public static func commandLine(_ message: String, hint: String?, usage: Bool) -> CameraFailure {
        CameraFailure(code: usage ? "usage" : "failed", [message, hint].compactMap { $0 }.joined(separator: "; "), status: .usage)
    }

    /// `--frames` of "Missing value for '--frames <n>'": the option a negative number was taken for.
    public static func missingOption(in message: String) -> String? {
        guard let range = message.range(of: "Missing value for '") else { return nil }
        let option = message[range.upperBound...].prefix { $0 != " " && $0 != "'" }
        return option.isEmpty ? nil : String(option)
    }
}
