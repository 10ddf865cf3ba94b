/// Why a message could not be encoded. These are caller mistakes, caught before anything is sent.
public enum MessageEncodingError: Error, Hashable, Sendable {
    case invalidMTU(Int)
    case messageTooLong(length: Int, limit: Int)
    case missingField(String)
    case unexpectedField(String)
    case invalidValue(field: String, reason: String)
    case invalidJSON(String)
}

extension MessageEncodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidMTU(let mtu): "ATT MTU \(mtu) is outside \(Framing.mtuRange)"
        case .messageTooLong(let length, let limit): "message of \(length) bytes is outside 1...\(limit)"
        case .missingField(let name): "required field \(name) is missing"
        case .unexpectedField(let name): "field \(name) does not belong in this message"
        case .invalidValue(let field, let reason): "field \(field): \(reason)"
        case .invalidJSON(let reason): "JSON form: \(reason)"
        }
    }
}

/// What a decoder reports for message bytes that arrived intact but do not form a valid message
/// (PROTOCOL.md §10). None of these traps or ends the connection.
public enum MessageDecodingError: Error, Hashable, Sendable {
    case truncatedEnvelope(length: Int)
    case unknownKind(UInt8)
    case reservedId
    case truncatedField(offset: Int)
    case invalidVarint(offset: Int)
    case invalidFieldLength(field: String, length: Int)
    case duplicateField(String)
    case missingField(String)
    case invalidValue(field: String, reason: String)

    /// The error's name in PROTOCOL.md §10 and in the golden vectors.
    public var name: String {
        switch self {
        case .truncatedEnvelope: "truncatedEnvelope"
        case .unknownKind: "unknownKind"
        case .reservedId: "reservedId"
        case .truncatedField: "truncatedField"
        case .invalidVarint: "invalidVarint"
        case .invalidFieldLength: "invalidFieldLength"
        case .duplicateField: "duplicateField"
        case .missingField: "missingField"
        case .invalidValue: "invalidValue"
        }
    }
}

extension MessageDecodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .truncatedEnvelope(let length): "message of \(length) bytes is shorter than its envelope"
        case .unknownKind(let kind): "message kind 0x\(hex(kind)) is not request, response or event"
        case .reservedId: "request or response with the reserved id 0"
        case .truncatedField(let offset): "field at offset \(offset) runs past the end of the message"
        case .invalidVarint(let offset): "field length at offset \(offset) is not minimal LEB128 of at most 2 bytes"
        case .invalidFieldLength(let field, let length): "field \(field) has the wrong length \(length)"
        case .duplicateField(let field): "field \(field) appears twice"
        case .missingField(let field): "required field \(field) is missing"
        case .invalidValue(let field, let reason): "field \(field): \(reason)"
        }
    }
}

/// Anything a receiver can report for incoming packets: a framing or a decoding problem.
public enum ReceiveError: Error, Hashable, Sendable {
    case framing(FramingError)
    case decoding(MessageDecodingError)

    /// The error's name in PROTOCOL.md §10.
    public var name: String {
        switch self {
        case .framing(let error): error.name
        case .decoding(let error): error.name
        }
    }
}

extension ReceiveError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .framing(let error): error.description
        case .decoding(let error): error.description
        }
    }
}
