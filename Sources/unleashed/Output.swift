import Foundation
import UnleashedKit
import UnleashedProtocol

/// Formatting shared by the commands.
enum Output {
    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A stable code for scripts and the exit status for an error.
    static func classify(_ error: CameraError) -> (String, ExitStatus) {
        let status: ExitStatus = switch error {
        case .unknownSetting, .unreadableValue, .invalidArgument: .usage
        case .settingNotOffered, .readOnly, .valueNotOffered, .notInBulbMode, .focusFailed, .unsupported: .refused
        case .refused(_, .busy, _): .temporary
        case .refused: .refused
        case .shotNotReported, .timedOut, .notConnected: .unavailable
        case .cancelled: .interrupted
        case .session(.invalidRequest): .software
        case .session: .unavailable
        case .device(let failure):
            switch failure.kind {
            case .busy: .temporary
            case .cardFull, .unsupported: .refused
            case .permissionDenied: .noPermission
            case .disconnected, .timedOut, .failed: .unavailable
            }
        }
        return (error.code, status)
    }

    /// A downloaded picture, for `--json`.
    static func json(_ file: SavedFile) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "path": .string(file.path), "bytes": .integer(Int64(file.bytes)), "cameraPath": .string(file.cameraPath),
            "shotCounter": .integer(Int64(file.shotCounter)),
        ]
        members["frame"] = file.frame.map { .integer(Int64($0)) }
        return members
    }

    /// Unix milliseconds as an ISO 8601 UTC timestamp.
    static func timestamp(_ milliseconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// `+12`, `+11 2/3`: metered EV reads like exposure compensation.
    static func ev(_ stops: ExposureStops) -> String { stops.text }

    static func percent(_ value: Int?) -> String { value.map { "\($0)%" } ?? "unknown" }

    /// `1.250 s`, `1:02:03.5`: a running clock for exposures and video.
    static func clock(_ duration: Duration) -> String {
        let tenths = max(duration.wholeMilliseconds, 0) / 100
        let (hours, minutes, seconds) = (tenths / 36_000, tenths / 600 % 60, tenths / 10 % 60)
        let fraction = tenths % 10
        return hours > 0
            ? String(format: "%d:%02d:%02d.%d", hours, minutes, seconds, fraction)
            : String(format: "%02d:%02d.%d", minutes, seconds, fraction)
    }

    /// Colour for people reading a terminal; plain text for pipes, files and `NO_COLOR`.
    static let style = TextStyle(enabled: isatty(STDOUT_FILENO) == 1
        && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        && ProcessInfo.processInfo.environment["TERM"] != "dumb")

    /// Writes a line to standard output at once, unbuffered: for records a script reads while
    /// the command is still running.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes a line to standard error (progress and messages that are not the result).
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// ANSI colours, applied only when ``enabled``.
struct TextStyle {
    enum Colour: String {
        case plain = "", red = "31", green = "32", yellow = "33", dim = "2"
    }

    let enabled: Bool

    func paint(_ text: String, _ colour: Colour) -> String {
        guard enabled, colour != .plain else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }
}
