public import Foundation
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Logs one line per message to stderr in a form journald reads: under systemd (stderr is the
/// journal's stream) each line starts with its syslog priority, `<3>` for an error
/// (sd-daemon(3)), so that `journalctl -p err` finds it; on a terminal, `LEVEL label: message`.
///
/// Bootstrap it once at start: `LoggingSystem.bootstrap { JournaldLogHandler(label: $0) }`.
public struct JournaldLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let journal: Bool

    /// - Parameters:
    ///   - journal: Whether to write priority prefixes; by default, whether stderr is the
    ///     stream `JOURNAL_STREAM` names.
    public init(label: String, journal: Bool = JournaldLogHandler.stderrIsJournal(),
                metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.journal = journal
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let line = Self.format(level: event.level, label: label, message: event.message.description,
                               metadata: merged, journal: journal) + "\n"
        // One write per line, so lines from several threads do not interleave.
        line.utf8CString.withUnsafeBufferPointer { bytes in
            _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count - 1)
        }
    }

    /// One log line, without its newline: `<6>label: message key=value` for the journal,
    /// `INFO label: message key=value` otherwise. A message's own line breaks are kept as
    /// `\n` text so that one message is one journal entry, and every other control character
    /// as `\u{1B}` text: a log line quotes what came from outside (an MQTT topic, a camera's
    /// name, a request), and an escape sequence in it must not reach the terminal that reads
    /// the log.
    public static func format(level: Logger.Level, label: String, message: String,
                              metadata: Logger.Metadata, journal: Bool) -> String {
        var text = message
        if !metadata.isEmpty {
            text += " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        text = escapingControlCharacters(text)
        return journal ? "<\(priority(level))>\(label): \(text)" : "\(level.rawValue.uppercased()) \(label): \(text)"
    }

    /// `text` with C0 and C1 control characters (and DEL) written out: `\n`, `\r`, `\t`, or
    /// `\u{XX}`; everything else as it is.
    public static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isControl(scalar): escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The syslog priority of a level: `SD_ERR` (3) for `.error`, `SD_DEBUG` (7) for `.debug`
    /// and `.trace`.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether stderr is the journal: systemd sets `JOURNAL_STREAM=DEVICE:INODE` to the stream
    /// it connected, and a stderr redirected elsewhere has another.
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
