/// Whether a message must carry a field (PROTOCOL.md §7, §8).
enum Presence {
    case required, optional, repeated
}

/// One line of a message table: a field and whether it must be there.
struct FieldRule {
    let tag: FieldTag
    let presence: Presence

    static func required(_ tag: FieldTag) -> FieldRule { FieldRule(tag: tag, presence: .required) }
    static func optional(_ tag: FieldTag) -> FieldRule { FieldRule(tag: tag, presence: .optional) }
    static func repeated(_ tag: FieldTag) -> FieldRule { FieldRule(tag: tag, presence: .repeated) }
}

/// The field registry (PROTOCOL.md §5.2) and the message tables (§1.1, §7, §8): every rule about
/// which field a message carries lives here.
enum Schema {
    static let registry: [FieldTag: FieldSpec] = {
        let specs: [FieldSpec] = [
            FieldSpec(.protocolVersion, \.protocolVersion, .integer(1...UInt8.max)),
            FieldSpec(.minProtocolVersion, \.minProtocolVersion, .integer(1...UInt8.max)),
            FieldSpec(.maxProtocolVersion, \.maxProtocolVersion, .integer(1...UInt8.max)),
            FieldSpec(.clientName, \.clientName, .string(maximumBytes: 32)),
            FieldSpec(.firmwareVersion, \.firmwareVersion, .string(maximumBytes: 32)),
            FieldSpec(.hardwareRevision, \.hardwareRevision, .string(maximumBytes: 32)),
            FieldSpec(.serialNumber, \.serialNumber, .string(maximumBytes: 32)),
            FieldSpec(.capabilities, \.capabilities, .mapped(.integer(), toValue: Capabilities.init(rawValue:), toWire: \.rawValue)),
            FieldSpec(.cameraModel, \.cameraModel, .string(maximumBytes: 64)),
            FieldSpec(.uptime, \.uptime, .integer()),
            FieldSpec(.moduleBattery, \.moduleBattery, .integer(0...100)),
            FieldSpec(.cameraBattery, \.cameraBattery, .integer(0...100)),
            FieldSpec(.storageState, \.storageState, .enumeration),
            FieldSpec(.shotsRemaining, \.shotsRemaining, .integer()),
            FieldSpec(.cameraPower, \.cameraPower, .enumeration),
            FieldSpec(.exposureMode, \.exposureMode, .enumeration),
            FieldSpec(.meteredEV, \.meteredEV, .mapped(
                FieldCoding<Int16>.integer(-1440...1440),
                toValue: { ExposureStops(twentyFourths: Int32($0)) },
                toWire: { Int16(clamping: $0.twentyFourths) })),
            FieldSpec(.busy, \.busy, .bool),
            FieldSpec(.shotCounter, \.shotCounter, .integer()),
            FieldSpec(.setting, \.setting, .enumeration),
            FieldSpec(.value, \.value, .settingValue),
            FieldSpec(.choices, \.choices, .settingValueList),
            descriptorSpec,
            FieldSpec(.readOnly, \.readOnly, .bool),
            FieldSpec(.focusResult, \.focusResult, .enumeration),
            FieldSpec(.hold, \.hold, .bool),
            FieldSpec(.duration, \.duration, .integer(0...86_400_000)),
            FieldSpec(.cameraTime, \.cameraTime, .integer()),
            FieldSpec(.utcTime, \.utcTime, .integer()),
            FieldSpec(.utcOffset, \.utcOffset, .integer(-720...840)),
            FieldSpec(.latitude, \.latitude, .integer(-900_000_000...900_000_000)),
            FieldSpec(.longitude, \.longitude, .integer(-1_800_000_000...1_800_000_000)),
            FieldSpec(.altitude, \.altitude, .integer(-100_000_000...100_000_000)),
            FieldSpec(.statusCode, \.statusCode, .enumeration),
            FieldSpec(.errorMessage, \.errorMessage, .string(maximumBytes: 200)),
        ]
        return Dictionary(uniqueKeysWithValues: specs.map { ($0.tag, $0) })
    }()

    static let allSpecs: [FieldSpec] = FieldTag.allCases.map { registry[$0]! }

    // MARK: Message tables

    static let requests: [Opcode: [FieldRule]] = [
        .hello: [.required(.minProtocolVersion), .required(.maxProtocolVersion), .optional(.clientName)],
        .getSetting: [.required(.setting)],
        .setSetting: [.required(.setting), .required(.value)],
        .halfPress: [.optional(.hold)],
        .bulbStart: [.required(.duration)],
        .setTime: [.required(.utcTime), .required(.utcOffset)],
        .geotag: [.required(.latitude), .required(.longitude), .optional(.altitude), .required(.utcTime)],
    ]

    static let okResponses: [Opcode: [FieldRule]] = [
        .hello: [.required(.protocolVersion), .required(.firmwareVersion), .required(.capabilities), .optional(.cameraModel)],
        .keepAlive: [.required(.uptime)],
        .getStatus: [
            .required(.moduleBattery), .optional(.cameraBattery), .optional(.storageState), .optional(.shotsRemaining),
            .required(.cameraPower), .optional(.exposureMode), .optional(.meteredEV), .required(.busy),
            .required(.shotCounter),
        ],
        .listSettings: [.repeated(.descriptor)],
        .getSetting: [.required(.setting), .required(.value)],
        .setSetting: [.required(.setting), .required(.value)],
        .halfPress: [.required(.focusResult)],
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
            let spec = registry[rule.tag]!
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
        let raw = try scanFields(bytes, in: range)
        var occurrences = [[Range<Int>]](repeating: [], count: rules.count)
        for field in raw {
            guard let index = rules.firstIndex(where: { $0.tag.rawValue == field.tag }) else { continue }
            if rules[index].presence != .repeated && !occurrences[index].isEmpty {
                throw .duplicateField(registry[rules[index].tag]!.name)
            }
            occurrences[index].append(field.value)
        }
        for (rule, found) in zip(rules, occurrences) where rule.presence == .required && found.isEmpty {
            throw .missingField(registry[rule.tag]!.name)
        }
        var fields = Fields()
        for (rule, found) in zip(rules, occurrences) {
            let spec = registry[rule.tag]!
            for span in found { try spec.decode(bytes, span, &fields) }
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
            let spec = registry[rule.tag]!
            if let value = spec.toJSON(fields) { members[spec.name] = value }
        }
        return .object(members)
    }

    static func fields(fromJSON json: JSONValue?, rules: [FieldRule]) throws(MessageEncodingError) -> Fields {
        guard let members = json?.objectValue ?? (json == nil ? [:] : nil) else {
            throw .invalidJSON("fields must be an object")
        }
        for key in members.keys where !rules.contains(where: { registry[$0.tag]!.name == key }) {
            throw .unexpectedField(key)
        }
        var fields = Fields()
        for rule in rules {
            let spec = registry[rule.tag]!
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
