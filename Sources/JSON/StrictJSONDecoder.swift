import Foundation

/// Why a JSON document is not the shape a type needs: where, and what is wrong.
public struct JSONShapeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where in the document: `plan.interval`, `settings[2].raw`; empty for the whole document.
    public var path: String
    /// What is wrong there: `expected an integer`, `missing`.
    public var problem: String

    /// The problem `problem` at `path`.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }

    /// What a parse error says, without its Swift dump: Foundation's reason (`Unexpected
    /// character 'x' around line 1, column 2.`) where it gives one.
    static func reason(_ error: any Error) -> String {
        if let decoding = error as? DecodingError, case .dataCorrupted(let context) = decoding {
            if let underlying = context.underlyingError as NSError?,
               let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String {
                return detail
            }
            return context.debugDescription
        }
        return "\(error)"
    }
}

/// Decodes `Decodable` types from JSON strictly, for what comes from outside (API bodies, MQTT
/// commands, configuration files):
/// - a failure names the member the sender got wrong by its path (`plan.frames`, `cameras[1]`);
/// - a member the type does not read is refused, not ignored, so that a misspelt option is an
///   error rather than a default silently taken;
/// - integers must be whole and in range; `null` is absent.
///
/// Types keep their synthesized `Codable`; a custom `init(from:)` reports its own problems with
/// `DecodingError.dataCorruptedError(…)`, and the path is added here.
public struct StrictJSONDecoder: Sendable {
    /// The document's own name at the start of every path (`identity`); empty names members bare.
    public var root: String
    /// Whether a member the type does not read is an error: yes for what a client sends; no for
    /// what a client reads from a newer daemon, which may have added members.
    public var refusesUnknownMembers: Bool

    public init(root: String = "", refusesUnknownMembers: Bool = true) {
        self.root = root
        self.refusesUnknownMembers = refusesUnknownMembers
    }

    /// `T` from a parsed document.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(JSONShapeError) -> T {
        do {
            return try decodeLocatingFailure(type, from: value)
        } catch {
            throw error.shapeError(root: root)
        }
    }

    /// `T` from a parsed document, failing with the steps to the member and the kind of problem
    /// as data, for a reader that words the failure itself: the configuration names a TOML key
    /// and the file and line that wrote it, which it finds by these steps.
    public func decodeLocatingFailure<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(JSONDecodingFailure) -> T {
        let visits = Visits()
        let decoded: T
        do {
            decoded = try T(from: ValueDecoder(value: value, codingPath: [], visits: visits))
        } catch let error as DecodingError {
            throw (refusesUnknownMembers ? visits.unknownMemberExplaining(error) : nil) ?? JSONDecodingFailure(error)
        } catch {
            throw JSONDecodingFailure(path: [], problem: .invalidValue("\(error)"))
        }
        if refusesUnknownMembers, let unknown = visits.firstUnknownMember() { throw unknown }
        return decoded
    }

    /// `T` from the bytes of a document.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Sequence<UInt8>) throws(JSONShapeError) -> T {
        try decode(type, from: try JSONValue(parsing: bytes))
    }
}

/// One step from a document's root towards a value in it.
public enum JSONPathStep: Hashable, Sendable {
    /// The member of an object with this name.
    case member(String)
    /// The element of an array at this position, from 0.
    case element(Int)

    /// `root.member[2].other`, or `member[2].other` without a root: a path as messages write it.
    public static func text(_ path: some Sequence<JSONPathStep>, root: String = "") -> String {
        var text = root
        for step in path {
            switch step {
            case .element(let position): text += "[\(position)]"
            case .member(let name): text += text.isEmpty ? name : ".\(name)"
            }
        }
        return text
    }
}

/// Why a document is not the shape a type needs, as data: the steps to the value that is wrong
/// and what is wrong with it. ``JSONShapeError`` is its wording for the API; a reader that has
/// words of its own (the configuration's TOML) words it from this.
public struct JSONDecodingFailure: Error, Equatable, Sendable {
    public enum Problem: Equatable, Sendable {
        /// A member the type needs is not there.
        case missing
        /// A member the type does not read. `known` are the members it read, in the order it
        /// asked for them; `meant` is the missing member this one most likely misspells, when
        /// the type needed one.
        case unknownMember(known: [String], meant: String?)
        /// A value of another JSON type than the one wanted, which `expected` names: `a string`,
        /// `an object`, `true or false`.
        case wrongType(expected: String)
        /// A value the type refuses, in its own words (`'x' is not a role`).
        case invalidValue(String)
    }

    /// Where the problem is; empty for the whole document.
    public var path: [JSONPathStep]
    public var problem: Problem

    public init(path: [JSONPathStep], problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// The failure a `DecodingError` from a type or from this decoder stands for. A type
    /// mismatch that says `expected …` gives what was expected; others are kept in their words.
    init(_ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            self.init(path: Self.steps(context.codingPath + [key]), problem: .missing)
        case .valueNotFound(_, let context):
            self.init(path: Self.steps(context.codingPath), problem: .invalidValue("\(context.debugDescription), not null"))
        case .typeMismatch(_, let context):
            let words = context.debugDescription
            let expected = "expected "
            self.init(path: Self.steps(context.codingPath),
                      problem: words.hasPrefix(expected) ? .wrongType(expected: String(words.dropFirst(expected.count))) : .invalidValue(words))
        case .dataCorrupted(let context):
            self.init(path: Self.steps(context.codingPath), problem: .invalidValue(context.debugDescription))
        @unknown default:
            self.init(path: [], problem: .invalidValue("\(error)"))
        }
    }

    /// The failure as the API words it, its path starting with `root`.
    public func shapeError(root: String = "") -> JSONShapeError {
        let words = switch problem {
        case .missing: "missing"
        case .unknownMember(_, let meant?): "unknown member; did you mean \(meant)?"
        case .unknownMember(let known, nil) where known.isEmpty: "unknown member"
        case .unknownMember(let known, nil): "unknown member; known members: \(known.sorted().joined(separator: ", "))"
        case .wrongType(let expected): "expected \(expected)"
        case .invalidValue(let reason): reason
        }
        return JSONShapeError(path: JSONPathStep.text(path, root: root), problem: words)
    }

    /// A coding path as steps: an array's element by its position, anything else by its name.
    static func steps(_ codingPath: [any CodingKey]) -> [JSONPathStep] {
        codingPath.map { key in
            if let position = key.intValue, key is ElementKey { .element(position) } else { .member(key.stringValue) }
        }
    }
}

/// The members each object of a document has, and those its type asked for, in the order the
/// objects were opened: what remains unasked once decoding is done is what the type does not name.
private final class Visits {
    private struct Object {
        var path: [JSONPathStep]
        var present: [String]
        /// In the order asked: a type asks in the order it declares its members.
        var asked: [String] = []
        var askedSet: Set<String> = []
    }

    private var objects: [Object] = []
    private var index: [[JSONPathStep]: Int] = [:]

    func opened(_ members: [String: JSONValue], at codingPath: [any CodingKey]) -> Int {
        let path = JSONDecodingFailure.steps(codingPath)
        if let known = index[path] { return known }
        objects.append(Object(path: path, present: members.keys.sorted()))
        index[path] = objects.count - 1
        return objects.count - 1
    }

    func asked(_ member: String, in object: Int) {
        if objects[object].askedSet.insert(member).inserted { objects[object].asked.append(member) }
    }

    func firstUnknownMember() -> JSONDecodingFailure? {
        for object in objects {
            if let unknown = object.present.first(where: { !object.askedSet.contains($0) }) {
                return JSONDecodingFailure(path: object.path + [.member(unknown)], problem: .unknownMember(known: object.asked, meant: nil))
            }
        }
        return nil
    }

    /// A missing member is most often one misspelt: when the object that lacks it has a member
    /// its type has not asked for and that reads close to it, that member is the error to report.
    func unknownMemberExplaining(_ error: DecodingError) -> JSONDecodingFailure? {
        guard case .keyNotFound(let key, let context) = error,
              let position = index[JSONDecodingFailure.steps(context.codingPath)] else { return nil }
        let object = objects[position]
        let wanted = key.stringValue
        let unasked = object.present.filter { !object.askedSet.contains($0) }
        guard let close = closestName(to: wanted.lowercased(), among: unasked.map { $0.lowercased() }, within: max(2, wanted.count / 3)),
              let member = unasked.first(where: { $0.lowercased() == close }) else { return nil }
        return JSONDecodingFailure(path: object.path + [.member(member)], problem: .unknownMember(known: object.asked, meant: wanted))
    }
}

/// The key of an array's element in a coding path.
private struct ElementKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ position: Int) { intValue = position }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// A member's name in a coding path, for one the type has no key for.
private struct MemberKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let visits: Visits
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch([String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an object"))
        }
        let object = visits.opened(members, at: codingPath)
        return KeyedDecodingContainer(KeyedReader<Key>(members: members, object: object, codingPath: codingPath, visits: visits))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array"))
        }
        return ArrayReader(elements: elements, codingPath: codingPath, visits: visits)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleReader(value: value, codingPath: codingPath, visits: visits)
    }
}

/// Reads one value as a scalar, strictly: a string is not a number, a fraction is not an integer.
private protocol ScalarReading {
    var codingPath: [any CodingKey] { get }
}

extension ScalarReading {
    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: expected))
    }

    func bool(_ value: JSONValue) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, "expected true or false") }
        return flag
    }

    func string(_ value: JSONValue) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, "expected a string") }
        return text
    }

    func floating<T: BinaryFloatingPoint>(_ value: JSONValue) throws -> T {
        switch value {
        case .integer(let number): return T(number)
        case .number(let number): return T(number)
        default: throw mismatch(T.self, "expected a number")
        }
    }

    func integer<T: FixedWidthInteger>(_ value: JSONValue) throws -> T {
        let whole: T? = switch value {
        case .integer(let number): T(exactly: number)
        case .number(let number): number.isFinite ? T(exactly: number) : nil
        default: nil
        }
        guard let whole else {
            throw mismatch(T.self, T.min == 0 ? "expected a whole number from 0 to \(T.max)" : "expected a whole number from \(T.min) to \(T.max)")
        }
        return whole
    }

    func nested<T: Decodable>(_ type: T.Type, _ value: JSONValue, at path: [any CodingKey], _ visits: Visits) throws -> T {
        if type == JSONValue.self, let same = value as? T { return same }
        return try T(from: ValueDecoder(value: value, codingPath: path, visits: visits))
    }
}

private struct SingleReader: SingleValueDecodingContainer, ScalarReading {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let visits: Visits

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(value) }
    func decode(_ type: String.Type) throws -> String { try string(value) }
    func decode(_ type: Double.Type) throws -> Double { try floating(value) }
    func decode(_ type: Float.Type) throws -> Float { try floating(value) }
    func decode(_ type: Int.Type) throws -> Int { try integer(value) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(value) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(value) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(value) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(value) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(value) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(value) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(value) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(value) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(value) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try nested(type, value, at: codingPath, visits) }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let object: Int
    let codingPath: [any CodingKey]
    let visits: Visits

    var allKeys: [Key] {
        members.keys.sorted().compactMap { name in
            visits.asked(name, in: object)
            return Key(stringValue: name)
        }
    }

    func contains(_ key: Key) -> Bool {
        visits.asked(key.stringValue, in: object)
        return members[key.stringValue] != nil
    }

    /// The member's value, which must be there (null included).
    private func member(_ key: Key) throws -> JSONValue {
        visits.asked(key.stringValue, in: object)
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return value
    }

    private func reader(_ key: Key) throws -> SingleReader {
        SingleReader(value: try member(key), codingPath: codingPath + [key], visits: visits)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try reader(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key], visits: visits).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key], visits: visits).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath + [MemberKey("super")], visits: visits)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        visits.asked(key.stringValue, in: object)
        return ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key], visits: visits)
    }
}

private struct ArrayReader: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let visits: Visits
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], visits: Visits) {
        self.elements = elements
        self.codingPath = codingPath
        self.visits = visits
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "expected more elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], codingPath + [ElementKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if elements[currentIndex] == .null {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try SingleReader(value: value, codingPath: path, visits: visits).decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path, visits: visits).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path, visits: visits).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return ValueDecoder(value: value, codingPath: path, visits: visits)
    }
}
