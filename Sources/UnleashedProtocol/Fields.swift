public import CameraKit
import JSON

/// The fields of one message: every field of the registry (PROTOCOL.md §5.2), present or not.
///
/// Which fields a message must or may carry is fixed by ``Message/Kind`` (PROTOCOL.md §7, §8);
/// encoding checks that, so a `Fields` value can be built up freely.
public struct Fields: Hashable, Sendable {
    public var protocolVersion: UInt8?
    public var minProtocolVersion: UInt8?
    public var maxProtocolVersion: UInt8?
    public var clientName: String?
    public var firmwareVersion: String?
    public var hardwareRevision: String?
    public var serialNumber: String?
    public var capabilities: Capabilities?
    public var cameraModel: String?
    /// Milliseconds since the module started.
    public var uptime: UInt32?
    /// Microseconds since the module started, on the timer that times scheduled shots.
    public var uptimeMicros: UInt64?
    /// Percent, 0...100.
    public var moduleBattery: UInt8?
    /// Percent, 0...100.
    public var cameraBattery: UInt8?
    public var storageState: StorageState?
    public var shotsRemaining: UInt32?
    public var cameraPower: CameraPower?
    public var exposureMode: ExposureMode?
    /// EV at ISO 100, -60...60 stops.
    public var meteredEV: ExposureStops?
    public var busy: Bool?
    public var shotCounter: UInt32?
    public var setting: SettingID?
    /// A value of ``setting``.
    public var value: SettingValue?
    /// Values of ``setting`` the camera offers (inside a descriptor).
    public var choices: [SettingValue]?
    /// Settings as `listSettings` reports them.
    public var descriptors: [SettingDescriptor] = []
    public var readOnly: Bool?
    public var focusResult: FocusResult?
    public var hold: Bool?
    /// Milliseconds, 0...86 400 000.
    public var duration: UInt32?
    /// The camera's clock at the shot, milliseconds since the Unix epoch (UTC).
    public var cameraTime: UInt64?
    /// Milliseconds since the Unix epoch (UTC).
    public var utcTime: UInt64?
    /// Minutes east of UTC, -720...840.
    public var utcOffset: Int16?
    /// 1e-7 degrees north.
    public var latitude: Int32?
    /// 1e-7 degrees east.
    public var longitude: Int32?
    /// Centimetres above mean sea level.
    public var altitude: Int32?
    public var statusCode: StatusCode?
    public var errorMessage: String?
    /// When to press the shutter: an instant on the module's ``uptimeMicros`` clock.
    public var fireAt: UInt64?

    public init() {}

    /// Builds fields in place: `Fields { $0.setting = .iso }`.
    public init(_ build: (inout Fields) -> Void) {
        build(&self)
    }
}

/// The tags of the field registry (PROTOCOL.md §5.2).
enum FieldTag: UInt8, CaseIterable {
    case protocolVersion = 0x01, minProtocolVersion, maxProtocolVersion, clientName, firmwareVersion,
        hardwareRevision, serialNumber, capabilities, cameraModel, uptime,
        uptimeMicros
    case moduleBattery = 0x10, cameraBattery, storageState, shotsRemaining, cameraPower, exposureMode,
        meteredEV, busy, shotCounter
    case setting = 0x20, value, choices, descriptor, readOnly
    case focusResult = 0x30, hold, duration, cameraTime, utcTime, utcOffset, latitude, longitude, altitude,
        statusCode, errorMessage, fireAt
}

/// How one field moves between ``Fields``, wire bytes and JSON.
///
/// A class, so that tables share one instance instead of copying six closures per lookup; its
/// accessors are plain closures rather than key paths, which would copy all of ``Fields`` on
/// every read.
final class FieldSpec: Sendable {
    let tag: FieldTag
    let name: String
    let isPresent: @Sendable (Fields) -> Bool
    let encode: @Sendable (Fields, inout FieldWriter) throws(MessageEncodingError) -> Void
    /// Decodes one occurrence; later fields may read earlier ones (`value` reads `setting`).
    let decode: @Sendable ([UInt8], Range<Int>, inout Fields) throws(MessageDecodingError) -> Void
    let toJSON: @Sendable (Fields) -> JSONValue?
    let fromJSON: @Sendable (JSONValue, inout Fields) throws(MessageEncodingError) -> Void

    init(
        tag: FieldTag,
        name: String,
        isPresent: @escaping @Sendable (Fields) -> Bool,
        encode: @escaping @Sendable (Fields, inout FieldWriter) throws(MessageEncodingError) -> Void,
        decode: @escaping @Sendable ([UInt8], Range<Int>, inout Fields) throws(MessageDecodingError) -> Void,
        toJSON: @escaping @Sendable (Fields) -> JSONValue?,
        fromJSON: @escaping @Sendable (JSONValue, inout Fields) throws(MessageEncodingError) -> Void
    ) {
        self.tag = tag
        self.name = name
        self.isPresent = isPresent
        self.encode = encode
        self.decode = decode
        self.toJSON = toJSON
        self.fromJSON = fromJSON
    }
}

/// A field value that could not be read; ``FieldSpec`` adds the field's name.
enum FieldProblem: Error {
    case length
    case value(String)
}

/// How a value of one type looks on the wire and in JSON.
struct FieldCoding<Value: Sendable>: Sendable {
    let encode: @Sendable (Value, Fields) throws(FieldProblem) -> [UInt8]
    let decode: @Sendable ([UInt8], Range<Int>, Fields) throws(FieldProblem) -> Value
    let toJSON: @Sendable (Value) -> JSONValue
    let fromJSON: @Sendable (JSONValue, Fields) -> Value?
}

extension FieldSpec {
    /// A field stored in an optional property of ``Fields``, read by `get` and written by `set`.
    convenience init<Value>(
        _ tag: FieldTag,
        get: @escaping @Sendable (Fields) -> Value?,
        set: @escaping @Sendable (inout Fields, Value) -> Void,
        _ coding: FieldCoding<Value>
    ) {
        let name = String(describing: tag)
        self.init(tag: tag, name: name, isPresent: { get($0) != nil }, encode: { fields, writer throws(MessageEncodingError) in
            guard let value = get(fields) else { return }
            do throws(FieldProblem) {
                writer.append(tag: tag.rawValue, try coding.encode(value, fields))
            } catch {
                throw .invalidValue(field: name, reason: error.reason)
            }
        }, decode: { bytes, range, fields throws(MessageDecodingError) in
            do throws(FieldProblem) {
                set(&fields, try coding.decode(bytes, range, fields))
            } catch {
                switch error {
                case .length: throw .invalidFieldLength(field: name, length: range.count)
                case .value(let reason): throw .invalidValue(field: name, reason: reason)
                }
            }
        }, toJSON: { fields in get(fields).map(coding.toJSON) }, fromJSON: { json, fields throws(MessageEncodingError) in
            guard let value = coding.fromJSON(json, fields) else {
                throw .invalidValue(field: name, reason: "cannot read \(json) as this field")
            }
            set(&fields, value)
        })
    }
}

extension FieldProblem {
    var reason: String {
        switch self {
        case .length: "wrong length"
        case .value(let reason): reason
        }
    }
}

// MARK: - Codings

extension FieldCoding where Value: FixedWidthInteger {
    /// A big-endian integer, optionally limited to `range`.
    static func integer(_ range: ClosedRange<Value>? = nil) -> Self {
        FieldCoding(
            encode: { value, _ throws(FieldProblem) in
                try check(value, in: range)
                var writer = FieldWriter()
                writer.appendBigEndian(value)
                return writer.bytes
            },
            decode: { bytes, span, _ throws(FieldProblem) in
                guard span.count == Value.bitWidth / 8 else { throw .length }
                let value = readBigEndian(bytes, span, as: Value.self)
                try check(value, in: range)
                return value
            },
            toJSON: { value in Int64(exactly: value).map(JSONValue.integer) ?? .number(Double(value)) },
            fromJSON: { json, _ in
                guard let number = json.integerValue, let value = Value(exactly: number) else { return nil }
                return range.map { $0.contains(value) } ?? true ? value : nil
            }
        )
    }

    private static func check(_ value: Value, in range: ClosedRange<Value>?) throws(FieldProblem) {
        if let range, !range.contains(value) {
            throw .value("\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
    }
}

extension FieldCoding where Value == Bool {
    static let bool = FieldCoding(
        encode: { value, _ in [value ? 1 : 0] },
        decode: { bytes, span, _ throws(FieldProblem) in
            guard span.count == 1 else { throw .length }
            switch bytes[span.lowerBound] {
            case 0: return false
            case 1: return true
            case let other: throw .value("\(other) is not a boolean (0 or 1)")
            }
        },
        toJSON: { .bool($0) },
        fromJSON: { json, _ in json.boolValue }
    )
}

extension FieldCoding where Value == String {
    /// UTF-8 text of at most `maximumBytes` bytes, without a byte-order mark.
    static func string(maximumBytes: Int) -> Self {
        FieldCoding(
            encode: { value, _ throws(FieldProblem) in
                let bytes = Array(value.utf8)
                guard bytes.count <= maximumBytes else {
                    throw .value("\(bytes.count) bytes of UTF-8 exceed the limit of \(maximumBytes)")
                }
                return bytes
            },
            decode: { bytes, span, _ throws(FieldProblem) in
                guard span.count <= maximumBytes else {
                    throw .value("\(span.count) bytes exceed the limit of \(maximumBytes)")
                }
                let slice = bytes[span]
                guard !slice.starts(with: [0xEF, 0xBB, 0xBF]) else { throw .value("starts with a byte-order mark") }
                guard let text = String(validating: slice, as: UTF8.self) else { throw .value("not valid UTF-8") }
                return text
            },
            toJSON: { .string($0) },
            fromJSON: { json, _ in json.stringValue }
        )
    }
}

extension FieldCoding where Value: WireEnumeration {
    /// A one-byte code; unknown values are kept.
    static var enumeration: Self {
        FieldCoding(
            encode: { value, _ in [value.wireCode] },
            decode: { bytes, span, _ throws(FieldProblem) in
                guard span.count == 1 else { throw .length }
                return Value(wireCode: bytes[span.lowerBound])
            },
            toJSON: { value in value.name.map(JSONValue.string) ?? .integer(Int64(value.wireCode)) },
            fromJSON: { json, _ in
                if let name = json.stringValue { return Value(name: name) }
                return json.integerValue.flatMap(UInt8.init(exactly:)).map(Value.init(wireCode:))
            }
        )
    }
}

extension FieldCoding {
    /// A value stored on the wire as the integer `Wire`, converted both ways.
    static func mapped<Wire: FixedWidthInteger & Sendable>(
        _ wire: FieldCoding<Wire>, toValue: @escaping @Sendable (Wire) -> Value, toWire: @escaping @Sendable (Value) -> Wire
    ) -> Self {
        FieldCoding(
            encode: { value, fields throws(FieldProblem) in try wire.encode(toWire(value), fields) },
            decode: { bytes, span, fields throws(FieldProblem) in toValue(try wire.decode(bytes, span, fields)) },
            toJSON: { wire.toJSON(toWire($0)) },
            fromJSON: { json, fields in wire.fromJSON(json, fields).map(toValue) }
        )
    }
}

extension FieldCoding where Value == SettingValue {
    /// A `value` field, read according to the `setting` field beside it.
    static let settingValue = FieldCoding(
        encode: { value, fields throws(FieldProblem) in
            try checkBelongs(value, to: fields)
            var writer = FieldWriter()
            writer.appendBigEndian(value.wireValue)
            return writer.bytes
        },
        decode: { bytes, span, fields throws(FieldProblem) in
            guard span.count == 4 else { throw .length }
            return try decodeSettingValue(readBigEndian(bytes, span, as: UInt32.self), of: fields)
        },
        toJSON: { .string($0.text) },
        fromJSON: { json, fields in parseSettingValue(json, of: fields) }
    )

    static func checkBelongs(_ value: SettingValue, to fields: Fields) throws(FieldProblem) {
        guard value.setting == fields.setting else {
            throw .value("the value is one of setting \(value.setting), not of setting \(fields.setting.map(String.init(describing:)) ?? "(none)")")
        }
    }

    static func decodeSettingValue(_ raw: UInt32, of fields: Fields) throws(FieldProblem) -> SettingValue {
        guard let setting = fields.setting else { throw .value("no setting to read it by") }
        guard let value = SettingValue(setting: setting, wireValue: raw) else {
            throw .value("0x\(hex(raw)) is not a valid \(setting) value")
        }
        return value
    }

    static func parseSettingValue(_ json: JSONValue, of fields: Fields) -> SettingValue? {
        guard let setting = fields.setting else { return nil }
        if let text = json.stringValue { return SettingValue(setting: setting, text: text) }
        return json.integerValue.flatMap(UInt32.init(exactly:)).flatMap { SettingValue(setting: setting, wireValue: $0) }
    }
}

extension FieldCoding where Value == [SettingValue] {
    /// A `choices` field: setting values back to back.
    static let settingValueList = FieldCoding(
        encode: { values, fields throws(FieldProblem) in
            var writer = FieldWriter()
            for value in values {
                try FieldCoding<SettingValue>.checkBelongs(value, to: fields)
                writer.appendBigEndian(value.wireValue)
            }
            return writer.bytes
        },
        decode: { bytes, span, fields throws(FieldProblem) in
            guard span.count % 4 == 0 else { throw .length }
            var values: [SettingValue] = []
            values.reserveCapacity(span.count / 4)
            for start in stride(from: span.lowerBound, to: span.upperBound, by: 4) {
                let raw = readBigEndian(bytes, start..<(start + 4), as: UInt32.self)
                values.append(try FieldCoding<SettingValue>.decodeSettingValue(raw, of: fields))
            }
            return values
        },
        toJSON: { .array($0.map { .string($0.text) }) },
        fromJSON: { json, fields in
            guard let items = json.arrayValue else { return nil }
            var values: [SettingValue] = []
            for item in items {
                guard let value = FieldCoding<SettingValue>.parseSettingValue(item, of: fields) else { return nil }
                values.append(value)
            }
            return values
        }
    )
}
