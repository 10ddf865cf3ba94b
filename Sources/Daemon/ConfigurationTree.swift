import JSON
import TOMLKit

/// Where a configuration value was written: a file and line, or an environment variable.
struct ValueOrigin: Equatable, Sendable {
    var name: String
    var line: Int?
}

/// A parsed configuration file as plain values that remember their origin, so that files can
/// be merged key by key and a bad value still points at the file and line that set it.
struct ConfigurationNode: Sendable {
    enum Value: Sendable {
        /// Keys in the order written, so that the first problem reported is the first in the file.
        case table([(key: String, node: ConfigurationNode)])
        case array([ConfigurationNode])
        case string(String)
        case integer(Int)
        case bool(Bool)
        /// A TOML value the configuration never takes (floats, dates); its type's name.
        case other(String)
    }

    var value: Value
    var origin: ValueOrigin

    /// The TOML type's name as messages give it: `a string`, `a table`...
    var typeName: String {
        switch value {
        case .table: "a table"
        case .array: "an array"
        case .string: "a string"
        case .integer: "an integer"
        case .bool: "a boolean"
        case .other(let name): name
        }
    }

    /// The tree as the document ``StrictJSONDecoder`` reads, the one reader of what comes from
    /// outside. A TOML value that no setting takes (a float, a date) becomes a number that is not
    /// finite, which every setting's type refuses; the error then names its TOML type from here.
    var json: JSONValue {
        switch value {
        case .table(let entries): .object(Dictionary(entries.map { ($0.key, $0.node.json) }, uniquingKeysWith: { _, later in later }))
        case .array(let items): .array(items.map(\.json))
        case .string(let text): .string(text)
        case .integer(let number): .integer(Int64(number))
        case .bool(let flag): .bool(flag)
        case .other: .number(.nan)
        }
    }

    /// The node `path` leads to, or nil when it is not written.
    func node(at path: some Sequence<JSONPathStep>) -> ConfigurationNode? {
        var node = self
        for step in path {
            guard let next = node.child(step) else { return nil }
            node = next
        }
        return node
    }

    /// The node `path` leads to, or else the last one written on the way: where a key that is
    /// missing was to be written, its table.
    func nearestNode(to path: some Sequence<JSONPathStep>) -> ConfigurationNode {
        var node = self
        for step in path {
            guard let next = node.child(step) else { break }
            node = next
        }
        return node
    }

    private func child(_ step: JSONPathStep) -> ConfigurationNode? {
        switch (step, value) {
        case (.member(let key), .table(let entries)): entries.first { $0.key == key }?.node
        case (.element(let position), .array(let items)): items.indices.contains(position) ? items[position] : nil
        default: nil
        }
    }

    /// `self` with `later`'s keys put over it: tables merge key by key, anything else
    /// (arrays included) is replaced whole.
    func merged(with later: ConfigurationNode) -> ConfigurationNode {
        guard case .table(var entries) = value, case .table(let laterEntries) = later.value else { return later }
        for (key, node) in laterEntries {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                entries[index].node = entries[index].node.merged(with: node)
            } else {
                entries.append((key, node))
            }
        }
        return ConfigurationNode(value: .table(entries), origin: origin)
    }

    /// A table holding only `text` at the dotted `path`: an environment override, to merge
    /// over the files.
    static func override(_ path: [String], with text: String, origin: ValueOrigin) -> ConfigurationNode {
        var node = ConfigurationNode(value: .string(text), origin: origin)
        for key in path.reversed() {
            node = ConfigurationNode(value: .table([(key, node)]), origin: origin)
        }
        return node
    }

    /// Parses TOML `text` read from `file`.
    static func parse(_ text: String, file: String) throws(ConfigurationError) -> ConfigurationNode {
        if text.utf8.contains(0) {
            throw ConfigurationError(origin: file, problem: .unreadable("it contains a NUL byte; a TOML file is text"))
        }
        if let (line, column, message) = ParserGuard.problem(in: text) {
            throw ConfigurationError(origin: file, line: line, problem: .syntax(message, column: column))
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let position = error.source.begin
            throw ConfigurationError(origin: file, line: position.line > 0 ? position.line : nil, key: nil,
                                     problem: .syntax(error.description, column: position.column > 0 ? position.column : nil))
        } catch {
            throw ConfigurationError(origin: file, problem: .syntax(String(describing: error), column: nil))
        }
        let lines = KeyLines(text)
        return convert(table, path: "", depth: 0, file: file, lines: lines)
    }

    /// How deep tables and arrays may nest. The configuration needs three levels
    /// (`tokens[0].name`); the limit keeps recursion over hostile input off the end of the stack.
    static let maximumDepth = 16

    private static func convert(_ value: any TOMLValueConvertible, path: String, depth: Int, file: String,
                                lines: KeyLines) -> ConfigurationNode {
        let origin = ValueOrigin(name: file, line: lines.line(of: path))
        if depth > maximumDepth { return ConfigurationNode(value: .other("a value nested too deep"), origin: origin) }
        switch value.type {
        case .table:
            guard let table = value.table else { break }
            let entries = table.keys.map { key in
                (key: key, node: convert(table[key] ?? "", path: path.isEmpty ? key : "\(path).\(key)", depth: depth + 1, file: file, lines: lines))
            }
            return ConfigurationNode(value: .table(entries), origin: origin)
        case .array:
            guard let array = value.array else { break }
            let items = array.enumerated().map { index, item in
                convert(item, path: "\(path)[\(index)]", depth: depth + 1, file: file, lines: lines)
            }
            return ConfigurationNode(value: .array(items), origin: origin)
        case .string:
            if let string = value.string { return ConfigurationNode(value: .string(string), origin: origin) }
        case .int:
            if let integer = value.int { return ConfigurationNode(value: .integer(integer), origin: origin) }
        case .bool:
            if let bool = value.bool { return ConfigurationNode(value: .bool(bool), origin: origin) }
        case .double: return ConfigurationNode(value: .other("a floating-point number"), origin: origin)
        case .date, .time, .dateTime: return ConfigurationNode(value: .other("a date or time"), origin: origin)
        }
        return ConfigurationNode(value: .other("an unreadable value"), origin: origin)
    }
}

/// The line where each key of a TOML text is written, found by reading table headers and
/// `key =` lines. TOMLKit reports positions only for syntax errors, not for the values it
/// parsed, so this gives the line of a bad value. A key it cannot place (inside an inline
/// table, say) takes the line of the nearest enclosing key that it can.
struct KeyLines: Sendable {
    private var lines: [String: Int] = [:]

    init(_ text: String) {
        var table = ""
        var tableArrayCounts: [String: Int] = [:]
        var inMultilineString = false
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            let quotes = line.ranges(of: "\"\"\"").count + line.ranges(of: "'''").count
            defer { if quotes % 2 == 1 { inMultilineString.toggle() } }
            guard !inMultilineString else { continue }
            if line.hasPrefix("[[") {
                guard let keys = Self.keys(line.dropFirst(2), until: "]") else { continue }
                let name = Self.resolve(keys, counts: tableArrayCounts)
                let count = tableArrayCounts[name, default: 0]
                tableArrayCounts[name] = count + 1
                table = "\(name)[\(count)]"
                record(table, number)
            } else if line.hasPrefix("[") {
                guard let keys = Self.keys(line.dropFirst(), until: "]") else { continue }
                table = Self.resolve(keys, counts: tableArrayCounts)
                record(table, number)
            } else if let keys = Self.keys(line, until: "=") {
                var path = table
                for key in keys {
                    path = path.isEmpty ? key : "\(path).\(key)"
                    record(path, number)
                }
            }
        }
    }

    /// The line of `path` (`reconnect.max_delay`, `modules[1].address`), or of the nearest
    /// enclosing key written on a line of its own.
    func line(of path: String) -> Int? {
        var path = Substring(path)
        while !path.isEmpty {
            if let line = lines[String(path)] { return line }
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { return nil }
            path = path[..<cut]
        }
        return nil
    }

    private mutating func record(_ path: String, _ line: Int) {
        if lines[path] == nil { lines[path] = line }
    }

    /// A header's path, with each array of tables it passes through standing for its last element.
    private static func resolve(_ keys: [String], counts: [String: Int]) -> String {
        var path = ""
        for (index, key) in keys.enumerated() {
            path = path.isEmpty ? key : "\(path).\(key)"
            if index < keys.count - 1, let count = counts[path] { path += "[\(count - 1)]" }
        }
        return path
    }

    /// The dotted key at the start of `text`, ending at `terminator`, or nil when there is none.
    private static func keys(_ text: Substring, until terminator: Character) -> [String]? {
        var keys: [String] = []
        var rest = text
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard let first = rest.first else { return nil }
            if first == "\"" || first == "'" {
                guard let close = rest.dropFirst().firstIndex(of: first) else { return nil }
                keys.append(String(rest[rest.index(after: rest.startIndex)..<close]))
                rest = rest[rest.index(after: close)...]
            } else {
                let bare = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
                guard !bare.isEmpty else { return nil }
                keys.append(String(bare))
                rest = rest.dropFirst(bare.count)
            }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard let next = rest.first else { return nil }
            if next == terminator { return keys }
            guard next == "." else { return nil }
            rest = rest.dropFirst()
        }
    }
}
