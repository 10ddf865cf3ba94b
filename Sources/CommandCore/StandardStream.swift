import Foundation
public import JSON

/// Standard output or error, written with write(2), unbuffered.
///
/// Output that cannot be written (a full disk, `/dev/full`, a pipe whose reader has gone) ends
/// the command with status 74 and a message on standard error, instead of a crash, a silent
/// loss at exit (a buffer flushed into a full disk), or a run that prints into nothing.
/// SIGPIPE is ignored, so that a closed pipe is such an error (EPIPE) and not a silent death.
public struct StandardStream: Sendable {
    public let descriptor: Int32

    /// A stream on `descriptor`, e.g. a test's file.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    public static let output = StandardStream(descriptor: STDOUT_FILENO)
    public static let error = StandardStream(descriptor: STDERR_FILENO)

    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Writes `text` as it is, at once.
    public func write(_ text: String) {
        _ = Self.ignoreBrokenPipes
        var text = text
        let failure: Int32? = text.withUTF8 { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        guard let failure else { return }
        // Standard error cannot report its own failure; a failed note is dropped.
        guard descriptor != STDERR_FILENO else { return }
        let reason = String(cString: strerror(failure))
        let message = failure == EPIPE
            ? "error: standard output was closed before everything was written (\(reason))\n"
            : "error: cannot write to standard output: \(reason)\n"
        StandardStream.error.write(message)
        exit(ExitStatus.ioError.rawValue)
    }

    /// Writes `text` and a newline, at once.
    public func line(_ text: String) {
        write(text + "\n")
    }
}

/// JSON as the commands print it: one line, keys sorted, slashes as they are.
public enum CommandJSON {
    public static func text(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
