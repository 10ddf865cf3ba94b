/// Why a configuration could not be loaded, with where it went wrong, so that a message can
/// send the reader straight to the line to fix.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Equatable, Sendable {
        /// The file exists but cannot be read (permissions, a directory, not UTF-8 text).
        case unreadable(String)
        /// The parser rejected the text; its message, and the column when it gave one.
        case syntax(String, column: Int?)
        /// A key that no part of the daemon reads, with a close known key when there is one.
        case unknownKey(suggestion: String?)
        /// A value of the wrong TOML type.
        case wrongType(expected: String, found: String)
        /// A value of the right type that is not acceptable; the text says what to write.
        case invalidValue(String)
        /// A key that must be given.
        case missingKey(String)
    }

    /// The file the error is in, or `environment variable NAME` for an override.
    public var origin: String
    /// The line in ``origin``, when known.
    public var line: Int?
    /// The dotted key, e.g. `reconnect.max_delay` or `modules[1].address`.
    public var key: String?
    /// What is wrong.
    public var problem: Problem

    public init(origin: String, line: Int? = nil, key: String? = nil, problem: Problem) {
        self.origin = origin
        self.line = line
        self.key = key
        self.problem = problem
    }

    /// `FILE:LINE: KEY: what is wrong` (a syntax error adds the column: `FILE:LINE:COLUMN:`).
    public var description: String {
        var place = origin
        if let line { place += ":\(line)" }
        if case .syntax(_, let column?) = problem { place += ":\(column)" }
        let subject = key.map { "\(place): \($0)" } ?? place
        return "\(subject): \(message)"
    }

    /// What is wrong, without where.
    var message: String {
        switch problem {
        case .unreadable(let reason): "cannot be read: \(reason)"
        case .syntax(let reason, _): "not valid TOML: \(reason)"
        case .unknownKey(let suggestion?): "unknown key; did you mean '\(suggestion)'?"
        case .unknownKey(nil): "unknown key"
        case .wrongType(let expected, let found): "expected \(expected), found \(found)"
        case .invalidValue(let reason): reason
        case .missingKey(let reason): "missing; \(reason)"
        }
    }
}
