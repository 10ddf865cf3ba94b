import CameraKit
import CommandCore
import Foundation
import JSON
import UnleashedApp
import UnleashedKit

/// Formatting shared by the commands.
enum Output {
    static func json(_ value: JSONValue) -> String { CommandJSON.text(value) }

    /// Unix milliseconds as an ISO 8601 UTC timestamp.
    static func timestamp(_ milliseconds: UInt64) -> String { LocalTime.timestamp(milliseconds) }

    /// `+12`, `+11 2/3`: metered EV reads like exposure compensation.
    static func ev(_ stops: ExposureStops) -> String { stops.text }

    static func percent(_ value: Int?) -> String { value.map { "\($0)%" } ?? "unknown" }

    /// `01:02.5`, `1:02:03.5`: a running clock for exposures and video.
    static func clock(_ duration: Duration) -> String { RunReport.clock(duration) }

    /// Colour for people reading a terminal; plain text for pipes, files and `NO_COLOR`.
    static let style = TextStyle(enabled: isatty(STDOUT_FILENO) == 1
        && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        && ProcessInfo.processInfo.environment["TERM"] != "dumb")

    /// Writes a line to standard output at once, unbuffered: for records a script reads while
    /// the command is still running (`watch`, `--json` lines), and so that a line is out before
    /// the next is computed, in a pipe or a file as on a terminal.
    static func line(_ text: String) {
        StandardStream.output.line(text)
    }

    /// Writes `text` to standard output as it is, at once.
    static func write(_ text: String) {
        StandardStream.output.write(text)
    }

    /// Writes a line to standard error (progress and messages that are not the result).
    static func note(_ text: String) {
        StandardStream.error.line(text)
    }

    /// Writes `text` to standard error as it is (a live display's redraw).
    static func noteRaw(_ text: String) {
        StandardStream.error.write(text)
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
