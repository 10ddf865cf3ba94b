/// One value of the D-Bus type system, with enough type information to be sent back as it came:
/// an empty array still knows its element type, and a variant its content.
///
/// Byte arrays (`ay`) get their own case because BlueZ moves every characteristic value as one,
/// and a `[UInt8]` is far cheaper than an array of `.byte` values.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor; a decoded one is a duplicate that the receiver owns and must close.
    case unixFD(Int32)
    /// `ay`.
    case bytes([UInt8])
    /// An array of values of the type `element` (a single complete type signature).
    case array(element: String, [DBusValue])
    /// One entry of a dictionary; only inside an array whose element is `{kv}`.
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// An `a{sv}` dictionary, the shape of every property set and options argument in BlueZ.
    public static func properties(_ entries: [String: DBusValue]) -> DBusValue {
        .array(element: "{sv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map(DBusValue.string))
    }

    /// An `ao` array.
    public static func objectPaths(_ values: [String]) -> DBusValue {
        .array(element: "o", values.map(DBusValue.objectPath))
    }

    // MARK: - Reading

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The text of a string, object path or signature.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type that fits in an `Int`.
    public var intValue: Int? {
        switch unwrapped {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        default: nil
        }
    }

    /// The bytes of an `ay` (or of an array of bytes built by hand).
    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let bytes): return bytes
        case .array("y", let values):
            return values.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
        default: return nil
        }
    }

    /// The elements of an array.
    public var arrayValue: [DBusValue]? {
        switch unwrapped {
        case .array(_, let values): values
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: nil
        }
    }

    /// The strings of an `as` or `ao`.
    public var stringArrayValue: [String]? {
        arrayValue?.compactMap(\.stringValue)
    }

    /// A dictionary with string keys (`a{sv}`, `a{ss}`, `a{oa{sv}}`, ...), values left as they are.
    public var dictionaryValue: [String: DBusValue]? { keyedDictionary(\.stringValue) }

    /// A dictionary with integer keys (`a{qv}` manufacturer data, `a{yv}` advertising data).
    public var integerKeyedDictionaryValue: [Int: DBusValue]? { keyedDictionary(\.intValue) }

    /// The entries of a dictionary, each key read by `key`; nil when one cannot be.
    private func keyedDictionary<Key: Hashable>(_ key: (DBusValue) -> Key?) -> [Key: DBusValue]? {
        guard case .array(_, let entries) = unwrapped else { return nil }
        var result: [Key: DBusValue] = [:]
        for case .dictEntry(let entryKey, let value) in entries {
            guard let converted = key(entryKey) else { return nil }
            result[converted] = value
        }
        return result
    }
}

extension DBusValue: CustomStringConvertible {
    /// A GVariant-like text, for logs and error messages.
    public var description: String {
        switch self {
        case .byte(let value): "byte \(value)"
        case .bool(let value): "\(value)"
        case .int16(let value): "int16 \(value)"
        case .uint16(let value): "uint16 \(value)"
        case .int32(let value): "\(value)"
        case .uint32(let value): "uint32 \(value)"
        case .int64(let value): "int64 \(value)"
        case .uint64(let value): "uint64 \(value)"
        case .double(let value): "\(value)"
        case .string(let value): "'\(value)'"
        case .objectPath(let value): "objectpath '\(value)'"
        case .signature(let value): "signature '\(value)'"
        case .unixFD(let value): "handle \(value)"
        case .bytes(let bytes): "[" + bytes.map { "0x" + String($0, radix: 16) }.joined(separator: ", ") + "]"
        case .array(_, let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictEntry(let key, let value): "\(key): \(value)"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }
}
