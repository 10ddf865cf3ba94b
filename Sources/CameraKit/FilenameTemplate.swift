public import Foundation

/// How downloaded pictures are named, written with `%` codes:
///
/// - `%F` the run's frame number (the session's picture count outside a run), 4 digits
/// - `%n` the session's picture count, 4 digits
/// - `%t` the local time of the shot, `YYYYmmdd-HHMMSS`
/// - `%f` the camera's file name without its suffix
/// - `%C` the camera file's suffix, lowercased
/// - `%%` a percent sign
///
/// The default, `%f.%C`, keeps the camera's name.
public struct FilenameTemplate: Hashable, Sendable, CustomStringConvertible {
    enum Part: Hashable, Sendable {
        case literal(String), frame, counter, time, cameraName, suffix
    }

    let parts: [Part]
    /// The template as written.
    public let description: String

    public static let `default` = FilenameTemplate(parts: [.cameraName, .literal("."), .suffix], description: "%f.%C")

    private init(parts: [Part], description: String) {
        self.parts = parts
        self.description = description
    }

    public init(parsing text: String) throws(FilenameTemplateError) {
        guard !text.isEmpty else { throw .empty }
        guard !text.contains("/") else { throw .containsSlash(text) }
        var parts: [Part] = []
        var literal = ""
        var characters = text.makeIterator()
        while let character = characters.next() {
            guard character == "%" else { literal.append(character); continue }
            guard let code = characters.next() else { throw .trailingPercent(text) }
            let part: Part
            switch code {
            case "%": literal.append("%"); continue
            case "F": part = .frame
            case "n": part = .counter
            case "t": part = .time
            case "f": part = .cameraName
            case "C": part = .suffix
            default: throw .unknownCode(code, in: text)
            }
            if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
            parts.append(part)
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.init(parts: parts, description: text)
    }

    /// The name for one picture. `frame` falls back to `counter` outside a run.
    public func fileName(frame: Int?, counter: Int, time: Date, cameraFileName: String) -> String {
        let dot = cameraFileName.lastIndex(of: ".")
        let base = dot.map { String(cameraFileName[..<$0]) } ?? cameraFileName
        let suffix = dot.map { String(cameraFileName[cameraFileName.index(after: $0)...]).lowercased() } ?? ""
        var name = ""
        for part in parts {
            switch part {
            case .literal(let text): name += text
            case .frame: name += Self.fourDigits(frame ?? counter)
            case .counter: name += Self.fourDigits(counter)
            case .time: name += Self.localTime(time)
            case .cameraName: name += base
            case .suffix: name += suffix
            }
        }
        // A camera file without a suffix would otherwise leave "name." behind.
        while name.hasSuffix(".") { name.removeLast() }
        return name.isEmpty || name == ".." ? "picture-\(Self.fourDigits(counter))" : name
    }

    private static func fourDigits(_ number: Int) -> String {
        let digits = String(number.magnitude)
        return (number < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func localTime(_ time: Date) -> String {
        let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : String($0) } ?? "00" }
        return "\(parts.year ?? 0)\(two(parts.month))\(two(parts.day))-\(two(parts.hour))\(two(parts.minute))\(two(parts.second))"
    }
}

/// Why a file name template cannot be used.
public enum FilenameTemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case containsSlash(String)
    case trailingPercent(String)
    case unknownCode(Character, in: String)

    public var description: String {
        let codes = "%F frame, %n count, %t time, %f camera name, %C suffix, %% percent"
        switch self {
        case .empty: return "the file name template is empty; the default is %f.%C"
        case .containsSlash(let text): return "the file name template '\(text)' contains '/'; it names files, not folders"
        case .trailingPercent(let text): return "the file name template '\(text)' ends in a lone %; write %% for a percent sign"
        case .unknownCode(let code, let text): return "'%\(code)' in the file name template '\(text)' is not a code; codes are: \(codes)"
        }
    }
}
