import Foundation

/// A live status line on a terminal: always one row, however narrow the terminal.
///
/// A line longer than the terminal wraps, and the carriage return that redraws it goes back
/// only to the start of its last row: every refresh would then leave a new line behind. So the
/// line is fitted to the width (`TIOCGWINSZ`, read at each redraw so that a resized window is
/// followed; `$COLUMNS` or 80 when there is none): the fields that matter least are dropped
/// first, and what is still too long is cut.
public enum TerminalLine {
    /// A field of the line, and how readily it is dropped (higher goes first).
    public struct Field: Sendable {
        public var text: String
        public var dropOrder: Int

        public init(_ text: String, dropOrder: Int = 0) {
            self.text = text
            self.dropOrder = dropOrder
        }
    }

    /// The columns of the terminal on standard error.
    public static func width() -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }

    /// `fields` joined by two spaces, fitted to `width` columns less one (a line that fills
    /// the last column makes some terminals wrap at once).
    public static func fit(_ fields: [Field], width: Int) -> String {
        let room = max(width - 1, 1)
        var kept = fields
        func joined() -> String { kept.map(\.text).joined(separator: "  ") }
        while joined().count > room, let drop = kept.indices.filter({ kept[$0].dropOrder > 0 }).max(by: { kept[$0].dropOrder < kept[$1].dropOrder }) {
            kept.remove(at: drop)
        }
        let line = joined()
        return line.count > room ? String(line.prefix(room)) : line
    }
}
