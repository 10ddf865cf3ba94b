import CameraKit
import JSON

/// Whether a message must carry a field (PROTOCOL.md §7, §8).
enum Presence {
    case required, optional, repeated
}

/// One line of a message table: a field and whether it must be there.
struct FieldRule: Sendable {
    let spec: FieldSpec
    let presence: Presence

    var tag: FieldTag { spec.tag }

    static func required(_ tag: FieldTag) -> FieldRule { FieldRule(spec: Schema.spec(tag), presence: .required) }
    static func optional(_ tag: FieldTag) -> FieldRule { FieldRule(spec: Schema.spec(tag), presence: .optional) }
    static func repeated(_ tag: FieldTag) -> FieldRule { FieldRule(spec: Schema.spec(tag), presence: .repeated) }
}

/// The field registry (PROTOCOL.md §5.2) and the message tables (§1.1, §7, §8): every rule about
/// which field a message carries lives here.
enum Schema {
    /// Times are at most 2^53 - 1 (ms or µs) so that the JSON form's doubles hold them exactly (PROTOCOL.md §5.2).
    static let maximumTime: UInt64 = (1 << 53) - 1
    static let registry: [FieldTag: FieldSpec] = {
        let specs: [FieldSpec] = [
            FieldSpec(.protocolVersion, get: { $0.protocolVersion }, set: { $0.protocolVersion = $1 }, .integer(1...UInt8.max)),
            FieldSpec(.minProtocolVersion, get: { $0.minProtocolVersion }, set: { $0.minProtocolVersion = $1 }, .integer(1...UInt8.max)),
            FieldSpec(.maxProtocolVersion, get: { $0.maxProtocolVersion }, set: { $0.maxProtocolVersion = $1 }, .integer(1...UInt8.max)),
            FieldSpec(.clientName, get: { $0.clientName }, set: { $0.clientName = $1 }, .string(maximumBytes: 32)),
            FieldSpec(.firmwareVersion, get: { $0.firmwareVersion }, set: { $0.firmwareVersion = $1 }, .string(maximumBytes: 32)),
            FieldSpec(.hardwareRevision, get: { $0.hardwareRevision }, set: { $0.hardwareRevision = $1 }, .string(maximumBytes: 32)),
            FieldSpec(.serialNumber, get: { $0.serialNumber }, set: { $0.serialNumber = $1 }, .string(maximumBytes: 32)),
            FieldSpec(.capabilities, get: { $0.capabilities }, set: { $0.capabilities = $1 }, .mapped(.integer(), toValue: { Capabilities(wireBits: $0) }, toWire: { $0.wireBits })),
            FieldSpec(.cameraModel, get: { $0.cameraModel }, set: { $0.cameraModel = $1 }, .string(maximumBytes: 64)),
            FieldSpec(.uptime, get: { $0.uptime }, set: { $0.uptime = $1 }, .integer()),
            FieldSpec(.uptimeMicros, get: { $0.uptimeMicros }, set: { $0.uptimeMicros = $1 }, .integer(0...maximumTime)),
            FieldSpec(.moduleBattery, get: { $0.moduleBattery }, set: { $0.moduleBattery = $1 }, .integer(0...100)),
            FieldSpec(.cameraBattery, get: { $0.cameraBattery }, set: { $0.cameraBattery = $1 }, .integer(0...100)),
            FieldSpec(.storageState, get: { $0.storageState }, set: { $0.storageState = $1 }, .enumeration),
            FieldSpec(.shotsRemaining, get: { $0.shotsRemaining }, set: { $0.shotsRemaining = $1 }, .integer()),
            FieldSpec(.cameraPower, get: { $0.cameraPower }, set: { $0.cameraPower = $1 }, .enumeration),
            FieldSpec(.exposureMode, get: { $0.exposureMode }, set: { $0.exposureMode = $1 }, .enumeration),
            FieldSpec(.meteredEV, get: { $0.meteredEV }, set: { $0.meteredEV = $1 }, .mapped(
                FieldCoding<Int16>.integer(-1440...1440),
                toValue: { ExposureStops(twentyFourths: Int32($0)) },
                toWire: { Int16(clamping: $0.twentyFourths) })),
            FieldSpec(.busy, get: { $0.busy }, set: { $0.busy = $1 }, .bool),
            FieldSpec(.shotCounter, get: { $0.shotCounter }, set: { $0.shotCounter = $1 }, .integer()),
            FieldSpec(.setting, get: { $0.setting }, set: { $0.setting = $1 }, .enumeration),
            FieldSpec(.value, get: { $0.value }, set: { $0.value = $1 }, .settingValue),
            FieldSpec(.choices, get: { $0.choices }, set: { $0.choices = $1 }, .settingValueList),
            descriptorSpec,
            FieldSpec(.readOnly, get: { $0.readOnly }, set: { $0.readOnly = $1 }, .bool),
            FieldSpec(.focusResult, get: { $0.focusResult }, set: { $0.focusResult = $1 }, .enumeration),
            FieldSpec(.hold, get: { $0.hold }, set: { $0.hold = $1 }, .bool),
            FieldSpec(.duration, get: { $0.duration }, set: { $0.duration = $1 }, .integer(0...86_400_000)),
            FieldSpec(.cameraTime, get: { $0.cameraTime }, set: { $0.cameraTime = $1 }, .integer(0...maximumTime)),
            FieldSpec(.utcTime, get: { $0.utcTime }, set: { $0.utcTime = $1 }, .integer(0...maximumTime)),
            FieldSpec(.utcOffset, get: { $0.utcOffset }, set: { $0.utcOffset = $1 }, .integer(-720...840)),
            FieldSpec(.latitude, get: { $0.latitude }, set: { $0.latitude = $1 }, .integer(-900_000_000...900_000_000)),
            FieldSpec(.longitude, get: { $0.longitude }, set: { $0.longitude = $1 }, .integer(-1_800_000_000...1_800_000_000)),
            FieldSpec(.altitude, get: { $0.altitude }, set: { $0.altitude = $1 }, .integer(-100_000_000...100_000_000)),
            FieldSpec(.statusCode, get: { $0.statusCode }, set: { $0.statusCode = $1 }, .enumeration),
            FieldSpec(.errorMessage, get: { $0.errorMessage }, set: { $0.errorMessage = $1 }, .string(maximumBytes: 200)),
            FieldSpec(.fireAt, get: { $0.fireAt }, set: { $0.fireAt = $1 }, .integer(0...maximumTime)),
        ]
        return Dictionary(uniqueKeysWithValues: specs.map { ($0.tag, $0) })
    }()

    static let allSpecs: [FieldSpec] = FieldTag.allCases.map(spec)

    static func spec(_ tag: FieldTag) -> FieldSpec { registry[tag]! }

    // MARK: Message tables

    static let requests: [Opcode: [FieldRule]] = [
        .hello: [.required(.minProtocolVersion), .required(.maxProtocolVersion), .optional(.clientName)],
        .getSetting: [.required(.setting)],
        .setSetting: [.required(.setting), .required(.value)],
        .halfPress: [.optional(.hold)],
        .shoot: [.optional(.fireAt)],
        .bulbStart: [.required(.duration)],
        .setTime: [.required(.utcTime), .required(.utcOffset)],
        .geotag: [.required(.utcTime), .required(.latitude), .required(.longitude), .optional(.altitude)],
    ]

    static let okResponses: [Opcode: [FieldRule]] = [
        .hello: [.required(.protocolVersion), .required(.firmwareVersion), .required(.capabilities), .optional(.cameraModel)],
        .keepAlive: [.required(.uptime), .optional(.uptimeMicros)],
        .getStatus: [
            .required(.moduleBattery), .optional(.cameraBattery), .optional(.storageState), .optional(.shotsRemaining),
            .required(.cameraPower), .optional(.exposureMode), .optional(.meteredEV), .required(.busy),
            .required(.shotCounter),
        ],
        .listSettings: [.repeated(.descriptor)],
        .getSetting: [.required(.setting), .required(.value)],
        .setSetting: [.required(.setting), .required(.value)],
        .halfPress: [.required(.focusResult)],
        .shoot: [.optional(.uptimeMicros)],
        .bulbEnd: [.required(.duration)],
        .videoStop: [.required(.duration)],
    ]

    static let failedResponse: [FieldRule] = [.optional(.errorMessage)]
    static let helloVersionMismatch: [FieldRule] = [
        .required(.minProtocolVersion), .required(.maxProtocolVersion), .optional(.errorMessage),
    ]

    static let events: [EventCode: [FieldRule]] = [
        .shotCompleted: [.required(.shotCounter), .optional(.cameraTime)],
        .settingChanged: [.required(.setting), .required(.value)],
        .battery: [.required(.moduleBattery), .optional(.cameraBattery)],
        .storage: [.required(.storageState), .optional(.shotsRemaining)],
        .cameraPower: [.required(.cameraPower)],
        .busy: [.required(.busy)],
        .meteredEV: [.required(.meteredEV)],
        .bulbDeadlineFired: [.required(.duration)],
        .error: [.required(.statusCode), .optional(.errorMessage)],
    ]

    static let descriptor: [FieldRule] = [
        .required(.setting), .required(.value), .required(.choices), .optional(.readOnly),
    ]

    static let info: [FieldRule] = [
        .required(.minProtocolVersion), .required(.maxProtocolVersion), .required(.firmwareVersion),
        .required(.hardwareRevision), .required(.serialNumber),
    ]

    /// The fields a message of this kind carries, in ascending tag order. Unknown opcodes and
    /// event codes carry none that this version can read.
    static func rules(for kind: Message.Kind) -> [FieldRule] {
        switch kind {
        case .request(let opcode):
            return requests[opcode] ?? []
        case .response(let opcode, let status):
            if status == .ok { return okResponses[opcode] ?? [] }
            return opcode == .hello && status == .notSupported ? helloVersionMismatch : failedResponse
        case .event(let code):
            return events[code] ?? []
        }
    }

    // MARK: Field lists

    /// Writes the fields of `rules` that are present, refusing fields the rules do not list.
    static func encode(_ fields: Fields, rules: [FieldRule], into writer: inout FieldWriter) throws(MessageEncodingError) {
        for spec in allSpecs where spec.isPresent(fields) && !rules.contains(where: { $0.tag == spec.tag }) {
            throw .unexpectedField(spec.name)
        }
        for rule in rules {
            let spec = rule.spec
            if rule.presence == .required && !spec.isPresent(fields) { throw .missingField(spec.name) }
            try spec.encode(fields, &writer)
        }
        try checkVersionRange(fields, MessageEncodingError.invalidValue)
    }

    /// Reads the fields of `rules` from a field list, skipping all others (PROTOCOL.md §5).
    ///
    /// Errors come in a fixed order: structure (as met), duplicates (as met), missing fields
    /// (in tag order), then values (in tag order).
    static func decode(_ bytes: [UInt8], in range: Range<Int>, rules: [FieldRule]) throws(MessageDecodingError) -> Fields {
        precondition(rules.count <= 64, "a message table has at most 64 fields")
        let raw = try scanFields(bytes, in: range)
        var seen: UInt64 = 0
        for field in raw {
            guard let index = rules.firstIndex(where: { $0.tag.rawValue == field.tag }) else { continue }
            let bit: UInt64 = 1 << index
            if seen & bit != 0 && rules[index].presence != .repeated { throw .duplicateField(rules[index].spec.name) }
            seen |= bit
        }
        for (index, rule) in rules.enumerated() where rule.presence == .required && seen & (1 << index) == 0 {
            throw .missingField(rule.spec.name)
        }
        var fields = Fields()
        for (index, rule) in rules.enumerated() where seen & (1 << index) != 0 {
            for field in raw where field.tag == rule.tag.rawValue {
                try rule.spec.decode(bytes, field.value, &fields)
            }
        }
        try checkVersionRange(fields, MessageDecodingError.invalidValue)
        return fields
    }

    private static func checkVersionRange<E: Error>(_ fields: Fields, _ error: (String, String) -> E) throws(E) {
        if let low = fields.minProtocolVersion, let high = fields.maxProtocolVersion, high < low {
            throw error("maxProtocolVersion", "\(high) is below minProtocolVersion \(low)")
        }
    }

    static func json(_ fields: Fields, rules: [FieldRule]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for rule in rules {
            let spec = rule.spec
            if let value = spec.toJSON(fields) { members[spec.name] = value }
        }
        return .object(members)
    }

    static func fields(fromJSON json: JSONValue?, rules: [FieldRule]) throws(MessageEncodingError) -> Fields {
        guard let members = json?.objectValue ?? (json == nil ? [:] : nil) else {
            throw .invalidJSON("fields must be an object")
        }
        for key in members.keys where !rules.contains(where: { $0.spec.name == key }) {
            throw .unexpectedField(key)
        }
        var fields = Fields()
        for rule in rules {
            let spec = rule.spec
            if let value = members[spec.name] { try spec.fromJSON(value, &fields) }
        }
        return fields
    }

    // MARK: The descriptor group

    static let descriptorSpec = FieldSpec(
        tag: .descriptor,
        name: "descriptor",
        isPresent: { !$0.descriptors.isEmpty },
        encode: { fields, writer throws(MessageEncodingError) in
            for descriptor in fields.descriptors {
                var group = FieldWriter()
                try encode(descriptor.fields, rules: Schema.descriptor, into: &group)
                writer.append(tag: FieldTag.descriptor.rawValue, group.bytes)
            }
        },
        decode: { bytes, span, fields throws(MessageDecodingError) in
            let group = try decode(bytes, in: span, rules: Schema.descriptor)
            fields.descriptors.append(SettingDescriptor(group))
        },
        toJSON: { fields in
            fields.descriptors.isEmpty ? nil : .array(fields.descriptors.map { json($0.fields, rules: Schema.descriptor) })
        },
        fromJSON: { json, fields throws(MessageEncodingError) in
            guard let items = json.arrayValue else { throw .invalidJSON("descriptor must be an array") }
            for item in items {
                let group = try Schema.fields(fromJSON: item, rules: Schema.descriptor)
                guard group.setting != nil, group.value != nil, group.choices != nil else {
                    throw .missingField("descriptor needs setting, value and choices")
                }
                fields.descriptors.append(SettingDescriptor(group))
            }
        }
    )
}

extension SettingDescriptor {
    /// The group's fields; `readOnly` only when true, as senders write it.
    var fields: Fields {
        Fields {
            $0.setting = setting
            $0.value = value
            $0.choices = choices
            $0.readOnly = readOnly ? true : nil
        }
    }

    /// From a decoded group, whose required fields are known to be there.
    init(_ group: Fields) {
        self.init(setting: group.setting!, value: group.value!, choices: group.choices!, readOnly: group.readOnly ?? false)
    }
}
