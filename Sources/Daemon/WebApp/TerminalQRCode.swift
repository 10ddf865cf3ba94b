import CQREncode

/// A QR code drawn with Unicode half blocks, two modules a character cell, so a phone can scan
/// the web app's address off the daemon's terminal or `journalctl` instead of typing it.
/// libqrencode makes the code; this only draws it.
public enum TerminalQRCode {
    /// The lines that draw `text` as a QR code (error correction level M, a quiet zone of two
    /// modules), light modules as spaces; nil when `text` is too long for a QR code.
    public static func lines(for text: String) -> [String]? {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let quiet = 2
        let size = width + 2 * quiet
        // libqrencode's module byte: bit 0 is set for a dark module.
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (y, x) = (row - quiet, column - quiet)
            guard (0..<width).contains(y), (0..<width).contains(x) else { return false }
            return code.pointee.data[y * width + x] & 1 == 1
        }
        // Dark modules print as the terminal's foreground on its background; a scanner wants dark
        // on light, so light modules are the blocks.
        var lines: [String] = []
        for row in stride(from: 0, to: size, by: 2) {
            var line = ""
            for column in 0..<size {
                switch (dark(row, column), dark(row + 1, column)) {
                case (false, false): line += "\u{2588}"
                case (false, true): line += "\u{2580}"
                case (true, false): line += "\u{2584}"
                case (true, true): line += " "
                }
            }
            lines.append(line)
        }
        return lines
    }
}
