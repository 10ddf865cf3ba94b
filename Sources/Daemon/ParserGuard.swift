/// Rejects two kinds of text that take toml++ 3.4 (which TOMLKit wraps) down instead of
/// giving a parse error, before they reach it:
///
/// - a table header whose name starts with a character no key can start with (`[=`, `[[.`,
///   `[ #`): the parser does not check this before reading the key, so a debug build stops
///   the process on an assertion and a release build reads on unchecked;
/// - a key of thousands of dotted parts (`a.a.a....`): the parser builds one table per part
///   and recurses over them, off the end of the stack.
///
/// A small scanner that knows strings, comments and value brackets, so that a `[` inside a
/// multi-line array or string is not taken for a header.
struct ParserGuard {
    /// More dots on one line than this (outside strings and comments) is taken for hostile
    /// text: a configuration key has at most three parts, a line of floats no more than a few.
    static let maximumDotsPerLine = 64

    /// The line and column (from 1) of the first problem, and what it is; nil when there is none.
    static func problem(in text: String) -> (line: Int, column: Int, message: String)? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var line = 1
        var lineStart = 0
        var depth = 0
        var atStatementStart = true
        var inHeader = false
        var dots = 0

        func at(_ offset: Int) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }
        func starts(_ text: String) -> Bool {
            text.unicodeScalars.enumerated().allSatisfy { at($0.offset) == $0.element }
        }
        /// Moves past a string opened by `delimiter` (one or three quotes); escapes only in basic strings.
        func skipString(_ delimiter: String, escapes: Bool) {
            index += delimiter.unicodeScalars.count
            let multiline = delimiter.unicodeScalars.count == 3
            while index < scalars.count {
                if escapes && scalars[index] == "\\" { index += 2; continue }
                if starts(delimiter) { index += delimiter.unicodeScalars.count; return }
                if scalars[index] == "\n" {
                    guard multiline else { return }
                    line += 1
                    lineStart = index + 1
                }
                index += 1
            }
        }

        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\n":
                line += 1
                lineStart = index + 1
                inHeader = false
                dots = 0
                atStatementStart = depth == 0
                index += 1
            case " ", "\t", "\r":
                index += 1
            case "#":
                while index < scalars.count && scalars[index] != "\n" { index += 1 }
            case "\"", "'":
                let delimiter = String(repeating: String(scalar), count: starts(String(repeating: String(scalar), count: 3)) ? 3 : 1)
                skipString(delimiter, escapes: scalar == "\"")
                atStatementStart = false
            case "[" where atStatementStart && depth == 0:
                index += at(1) == "[" ? 2 : 1
                while at(0) == " " || at(0) == "\t" { index += 1 }
                if let next = at(0), !isKeyStart(next) && next != "]" {
                    return (line, index - lineStart + 1, "a table name must start with a key")
                }
                inHeader = true
                atStatementStart = false
            case "[", "{":
                if !inHeader { depth += 1 }
                atStatementStart = false
                index += 1
            case "]", "}":
                if !inHeader { depth = max(0, depth - 1) }
                atStatementStart = false
                index += 1
            case ".":
                dots += 1
                if dots > maximumDotsPerLine {
                    return (line, index - lineStart + 1, "more than \(maximumDotsPerLine) dots on one line; keys nest a few levels at most")
                }
                atStatementStart = false
                index += 1
            default:
                atStatementStart = false
                index += 1
            }
        }
        return nil
    }

    private static func isKeyStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "_" || scalar == "-" || scalar == "\"" || scalar == "'")
    }
}
