import JSON
import UnleashedKit

/// Reads the keys of one configuration table, turning each wrong type or value into a
/// ``ConfigurationError`` that names the key and its origin. A key it does not know is an
/// error too: a mistyped key ignored would leave a setting its owner did not choose.
struct TableReader {
    private let entries: [(key: String, node: ConfigurationNode)]
    private let path: String
    private let origin: ValueOrigin

    /// Reads `node`, a table at `path`, whose keys may only be `known`.
    init(_ node: ConfigurationNode, path: String, known: [String]) throws(ConfigurationError) {
        guard case .table(let entries) = node.value else {
            throw ConfigurationError(origin: node.origin.name, line: node.origin.line, key: path,
                                     problem: .wrongType(expected: "a table", found: node.typeName))
        }
        self.entries = entries
        self.path = path
        self.origin = node.origin
        for (key, node) in entries where !known.contains(key) {
            throw error(key, node, .unknownKey(suggestion: closestKey(to: key, among: known)))
        }
    }

    /// The dotted name of `key` in this table.
    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func node(_ key: String) -> ConfigurationNode? { entries.first { $0.key == key }?.node }

    /// An error about `key`, placed where `node` (else this table) was written.
    func error(_ key: String, _ node: ConfigurationNode?, _ problem: ConfigurationError.Problem) -> ConfigurationError {
        let at = node?.origin ?? origin
        return ConfigurationError(origin: at.name, line: at.line, key: name(key), problem: problem)
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let node = node(key) else { return nil }
        guard case .string(let text) = node.value else { throw wrongType(key, node, expected: "a string") }
        return text
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let node = node(key) else { return nil }
        guard case .bool(let value) = node.value else { throw wrongType(key, node, expected: "true or false") }
        return value
    }

    /// An array of strings.
    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let node = node(key) else { return nil }
        guard case .array(let items) = node.value else { throw wrongType(key, node, expected: "an array of strings") }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item.value else { throw wrongType(key, item, expected: "an array of strings") }
            strings.append(text)
        }
        return strings
    }

    /// A string converted by `convert`; `nil` from it is an invalid value, explained by `hint`.
    func value<T>(_ key: String, hint: (String) -> String, _ convert: (String) -> T?) throws(ConfigurationError) -> T? {
        guard let text = try string(key) else { return nil }
        guard let value = convert(text) else { throw error(key, node(key), .invalidValue(hint(text))) }
        return value
    }

    /// A duration written like `500ms`, `30s` or `1m`.
    func duration(_ key: String) throws(ConfigurationError) -> Duration? {
        try value(key, hint: { "'\($0)' is not a duration; write it like 500ms, 30s or 1m" }, parseDuration)
    }

    /// The tables of an array of tables (`[[key]]`), each with the dotted name to read it by.
    func tables(_ key: String) throws(ConfigurationError) -> [(path: String, node: ConfigurationNode)] {
        guard let node = node(key) else { return [] }
        guard case .array(let items) = node.value else { throw wrongType(key, node, expected: "an array of tables") }
        return items.enumerated().map { (path: "\(name(key))[\($0.offset)]", node: $0.element) }
    }

    private func wrongType(_ key: String, _ node: ConfigurationNode, expected: String) -> ConfigurationError {
        error(key, node, .wrongType(expected: expected, found: node.typeName))
    }
}

/// The known key within two edits of `key` (a typo, a swapped letter), if there is one.
func closestKey(to key: String, among known: [String]) -> String? {
    closestName(to: key, among: known, within: max(1, min(2, key.count / 3)))
}
