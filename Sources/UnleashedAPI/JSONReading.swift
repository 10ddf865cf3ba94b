import Foundation
import JSON

// How the API's documents and the camera values in them are read: each through `Decodable`, by
// ``StrictJSONDecoder``, so that a failure names the member's path (`status.cameras[1].status.busy`).

/// A camera value that reads its JSON form from a decoder, which names the member where the
/// form goes wrong. CameraKit's values know no coder: their forms are read here, and like
/// every document, by ``StrictJSONDecoder``.
protocol JSONReadable {
    init(reading decoder: any Decoder) throws
}

/// A ``JSONReadable`` value as a `Decodable` one, to decode it as a document or an element.
struct Readable<Value: JSONReadable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        value = try Value(reading: decoder)
    }
}

extension Decodable {
    /// Reads what the daemon answered: paths start with `root` (`status.busy`), and a member a
    /// newer daemon has added is let be.
    init(answer json: JSONValue, root: String) throws(JSONShapeError) {
        self = try StrictJSONDecoder(root: root, refusesUnknownMembers: false).decode(Self.self, from: json)
    }
}

extension JSONReadable {
    /// Reads what the daemon answered, as ``Swift/Decodable/init(answer:root:)`` does.
    init(answer json: JSONValue, root: String) throws(JSONShapeError) {
        self = try Readable<Self>(answer: json, root: root).value
    }
}

extension KeyedDecodingContainer {
    /// The camera value at `key`.
    func decode<Value: JSONReadable>(_: Value.Type, forKey key: Key) throws -> Value {
        try decode(Readable<Value>.self, forKey: key).value
    }

    /// The camera value at `key`, or nil when it is absent or null.
    func decodeIfPresent<Value: JSONReadable>(_: Value.Type, forKey key: Key) throws -> Value? {
        try decodeIfPresent(Readable<Value>.self, forKey: key)?.value
    }
}

extension Array: JSONReadable where Element: JSONReadable {
    init(reading decoder: any Decoder) throws {
        var elements = try decoder.unkeyedContainer()
        var values: [Element] = []
        while !elements.isAtEnd { values.append(try Element(reading: elements.superDecoder())) }
        self = values
    }
}

extension Decoder {
    /// A value written as a name: `value(name)`, or else a failure here that says `problem(name)`.
    func named<T>(_ value: (String) -> T?, otherwise problem: (String) -> String) throws -> T {
        let container = try singleValueContainer()
        let name = try container.decode(String.self)
        guard let found = value(name) else { throw DecodingError.dataCorruptedError(in: container, debugDescription: problem(name)) }
        return found
    }
}

/// A duration written as milliseconds, whole or not.
struct Milliseconds: Decodable {
    let duration: Duration

    init(from decoder: any Decoder) throws {
        duration = try decoder.duration(nanosecondsPerUnit: 1_000_000, unit: "milliseconds")
    }
}

/// A duration written as seconds, whole or not.
struct Seconds: Decodable {
    let duration: Duration

    init(from decoder: any Decoder) throws {
        duration = try decoder.duration(nanosecondsPerUnit: 1_000_000_000, unit: "seconds")
    }
}

extension Decoder {
    /// A number of units, exact when it is whole and to the nanosecond when it is not; one past
    /// what 64 bits of nanoseconds hold is refused, not trapped on.
    fileprivate func duration(nanosecondsPerUnit scale: Int64, unit: String) throws -> Duration {
        let container = try singleValueContainer()
        let number = try container.decode(Double.self)
        guard abs(number) < 9e18 / Double(scale) else { throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected \(unit)") }
        if let whole = try? container.decode(Int64.self) { return .nanoseconds(whole * scale) }
        return .nanoseconds(Int64((number * Double(scale)).rounded()))
    }
}

/// An unsigned 64-bit number as ``JSONValue/unsigned(_:)`` writes it: an integer, or digits
/// beyond JSON's signed integers.
struct Unsigned: Decodable {
    let value: UInt64

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let digits = try? container.decode(String.self), let number = UInt64(digits) {
            value = number
        } else {
            value = try container.decode(UInt64.self)
        }
    }
}

/// A time written as ISO 8601 text (`2026-11-27T21:00:00.000Z`), as the daemon writes times.
struct Timestamp: Decodable {
    let date: Date

    init(from decoder: any Decoder) throws {
        date = try decoder.named(FleetTime.parse, otherwise: { "'\($0)' is not an ISO 8601 time" })
    }
}
