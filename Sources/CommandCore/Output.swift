public import CameraKit
import Foundation
public import JSON
import UnleashedKit

/// How the commands write: results to standard output, notes to standard error, each line at
/// once; JSON and values formatted the one way every command uses.
public enum Output {
    public static func json(_ value: JSONValue) -> String { CommandJSON.text(value) }

    /// Unix milliseconds as an ISO 8601 UTC timestamp.
    public static func timestamp(_ milliseconds: UInt64) -> String { LocalTime.timestamp(milliseconds) }

    /// `+12`, `+11 2/3`: metered EV reads like exposure compensation.
    public static func ev(_ stops: ExposureStops) -> String { stops.text }

    public static func percent(_ value: Int?) -> String { value.map { "\($0)%" } ?? "unknown" }

    /// Colour for people reading a terminal; plain text for pipes, files and `NO_COLOR`.
    public static let style = TextStyle(enabled: isatty(STDOUT_FILENO) == 1
        && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        && ProcessInfo.processInfo.environment["TERM"] != "dumb")

    /// Writes a line to standard output at once, unbuffered: for records a script reads while
    /// the command is still running (`watch`, `--json` lines), and so that a line is out before
    /// the next is computed, in a pipe or a file as on a terminal.
    public static func line(_ text: String) {
        StandardStream.output.line(text)
    }

    /// Writes `text` to standard output as it is, at once.
    public static func write(_ text: String) {
        StandardStream.output.write(text)
    }

    /// Writes a line to standard error (progress and messages that are not the result).
    public static func note(_ text: String) {
        StandardStream.error.line(text)
    }

    /// Writes `text` to standard error as it is (a live display's redraw).
    public static func noteRaw(_ text: String) {
        StandardStream.error.write(text)
    }
}

/// ANSI colours, applied only when ``enabled``.
public struct TextStyle: Sendable {
    public enum Colour: String, Sendable {
        case plain = "", red = "31", green = "32", yellow = "33", dim = "2"
    }

    public let enabled: Bool

    public init(enabled: Bool) {
        self.enabled = enabled
    }

    public func paint(_ text: String, _ colour: Colour) -> String {
        guard enabled, colour != .plain else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }
}
