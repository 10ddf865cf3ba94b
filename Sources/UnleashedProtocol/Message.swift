import CameraKit
public import JSON

/// One protocol message: a request, a response or an event (PROTOCOL.md §4).
public struct Message: Hashable, Sendable {
    /// What the message is, with the codes of its envelope.
    public enum Kind: Hashable, Sendable {
        case request(Opcode)
        case response(Opcode, StatusCode)
        case event(EventCode)
    }

    public var kind: Kind
    /// The correlation id of a request or response (1...65535), the sequence number of an event.
    public var id: UInt16
    public var fields: Fields

    public init(_ kind: Kind, id: UInt16, fields: Fields = Fields()) {
        self.kind = kind
        self.id = id
        self.fields = fields
    }

    /// The largest correlation id; ids count 1...65535 and wrap to 1.
    public static let maximumID: UInt16 = .max

    private var kindByte: MessageKind {
        switch kind {
        case .request: .request
        case .response: .response
        case .event: .event
        }
    }

    private var code: UInt8 {
        switch kind {
        case .request(let opcode), .response(let opcode, _): opcode.rawValue
        case .event(let code): code.rawValue
        }
    }

    // MARK: Bytes

    /// The message's bytes (PROTOCOL.md §4), checked against its message table.
    public func encoded() throws(MessageEncodingError) -> [UInt8] {
        if case .event = kind {} else if id == 0 {
            throw .invalidValue(field: "id", reason: "0 is reserved for requests and responses")
        }
        var writer = FieldWriter()
        writer.bytes.reserveCapacity(32)
        writer.bytes.append(kindByte.rawValue)
        writer.appendBigEndian(id)
        writer.bytes.append(code)
        if case .response(_, let status) = kind { writer.bytes.append(status.rawValue) }
        try Schema.encode(fields, rules: Schema.rules(for: kind), into: &writer)
        guard writer.bytes.count <= Framing.maximumMessageLength else {
            throw .messageTooLong(length: writer.bytes.count, limit: Framing.maximumMessageLength)
        }
        return writer.bytes
    }

    /// Decodes message bytes as delivered by a ``Reassembler``; any input gives a message or an error.
    public init(decoding bytes: [UInt8]) throws(MessageDecodingError) {
        guard bytes.count >= 4 else { throw .truncatedEnvelope(length: bytes.count) }
        guard let kindByte = MessageKind(rawValue: bytes[0]) else { throw .unknownKind(bytes[0]) }
        let id = UInt16(bytes[1]) << 8 | UInt16(bytes[2])
        let code = bytes[3]
        let kind: Kind
        let bodyStart: Int
        switch kindByte {
        case .request:
            kind = .request(Opcode(rawValue: code))
            bodyStart = 4
        case .response:
            guard bytes.count >= 5 else { throw .truncatedEnvelope(length: bytes.count) }
            kind = .response(Opcode(rawValue: code), StatusCode(rawValue: bytes[4]))
            bodyStart = 5
        case .event:
            kind = .event(EventCode(rawValue: code))
            bodyStart = 4
        }
        if kindByte != .event && id == 0 { throw .reservedId }
        self.init(kind, id: id, fields: try Schema.decode(bytes, in: bodyStart..<bytes.count, rules: Schema.rules(for: kind)))
    }

    // MARK: JSON form

    /// The JSON form of PROTOCOL.md §11.1.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["id": .integer(Int64(id)), "fields": Schema.json(fields, rules: Schema.rules(for: kind))]
        func name(_ code: some WireEnumeration) -> JSONValue { code.name.map(JSONValue.string) ?? .integer(Int64(code.wireCode)) }
        switch kind {
        case .request(let opcode):
            members["kind"] = "request"
            members["op"] = name(opcode)
        case .response(let opcode, let status):
            members["kind"] = "response"
            members["op"] = name(opcode)
            members["status"] = name(status)
        case .event(let code):
            members["kind"] = "event"
            members["event"] = name(code)
        }
        return .object(members)
    }

    /// Reads the JSON form of PROTOCOL.md §11.1.
    public init(json: JSONValue) throws(MessageEncodingError) {
        func code<Code: WireEnumeration>(_ key: String, as: Code.Type) throws(MessageEncodingError) -> Code {
            if let name = json[key]?.stringValue, let value = Code(name: name) { return value }
            if let number = json[key]?.integerValue, let raw = UInt8(exactly: number) { return Code(wireCode: raw) }
            throw .invalidJSON("\(key) is missing or unknown")
        }
        guard let rawID = json["id"]?.integerValue, let id = UInt16(exactly: rawID) else {
            throw .invalidJSON("id must be an integer 0...65535")
        }
        let kind: Kind
        switch json["kind"]?.stringValue {
        case "request": kind = .request(try code("op", as: Opcode.self))
        case "response": kind = .response(try code("op", as: Opcode.self), try code("status", as: StatusCode.self))
        case "event": kind = .event(try code("event", as: EventCode.self))
        default: throw .invalidJSON("kind must be request, response or event")
        }
        self.init(kind, id: id, fields: try Schema.fields(fromJSON: json["fields"], rules: Schema.rules(for: kind)))
    }
}


/// The value of the Info characteristic (PROTOCOL.md §1.1).
public struct ModuleInfo: Hashable, Sendable {
    public var protocolVersions: ClosedRange<UInt8>
    public var firmwareVersion: String
    public var hardwareRevision: String
    public var serialNumber: String

    public init(protocolVersions: ClosedRange<UInt8>, firmwareVersion: String, hardwareRevision: String, serialNumber: String) {
        self.protocolVersions = protocolVersions
        self.firmwareVersion = firmwareVersion
        self.hardwareRevision = hardwareRevision
        self.serialNumber = serialNumber
    }

    /// The characteristic's bytes: a bare field list.
    public func encoded() throws(MessageEncodingError) -> [UInt8] {
        var writer = FieldWriter()
        try Schema.encode(Fields {
            $0.minProtocolVersion = protocolVersions.lowerBound
            $0.maxProtocolVersion = protocolVersions.upperBound
            $0.firmwareVersion = firmwareVersion
            $0.hardwareRevision = hardwareRevision
            $0.serialNumber = serialNumber
        }, rules: Schema.info, into: &writer)
        return writer.bytes
    }

    /// Reads the characteristic's bytes, skipping unknown fields.
    public init(decoding bytes: [UInt8]) throws(MessageDecodingError) {
        let fields = try Schema.decode(bytes, in: bytes.indices, rules: Schema.info)
        self.init(
            protocolVersions: fields.minProtocolVersion!...fields.maxProtocolVersion!,
            firmwareVersion: fields.firmwareVersion!, hardwareRevision: fields.hardwareRevision!,
            serialNumber: fields.serialNumber!)
    }
}
