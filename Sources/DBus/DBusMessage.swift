internal import CDBus

/// A message as Swift sees it: the header fields that matter and a decoded body. Messages are
/// copied out of libdbus on the loop thread, so a `DBusMessage` can go anywhere.
public struct DBusMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var path: String?
    public var interface: String?
    public var member: String?
    /// For errors, the error name.
    public var errorName: String?
    /// The unique name of the sender (`:1.42`), or `org.freedesktop.DBus`.
    public var sender: String?
    public var destination: String?
    public var body: [DBusValue]

    public init(kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil,
                errorName: String? = nil, sender: String? = nil, destination: String? = nil, body: [DBusValue] = []) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.sender = sender
        self.destination = destination
        self.body = body
    }

    /// The body's signature.
    public var signature: String { body.map(\.signature).joined() }

    /// True for a signal from `interface` named `member`.
    public func isSignal(_ interface: String, _ member: String) -> Bool {
        kind == .signal && self.interface == interface && self.member == member
    }
}

// MARK: - Conversion to and from libdbus, only on the loop thread

extension DBusMessage {
    /// Copies a libdbus message, decoding its body. A body that cannot be decoded (a type this
    /// layer does not know) is reported as an error rather than partly read.
    init(_ message: OpaquePointer) throws(DBusError) {
        let type = dbus_message_get_type(message)
        kind = switch type {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: .error
        default: .signal
        }
        path = dbus_message_get_path(message).map { String(cString: $0) }
        interface = dbus_message_get_interface(message).map { String(cString: $0) }
        member = dbus_message_get_member(message).map { String(cString: $0) }
        errorName = dbus_message_get_error_name(message).map { String(cString: $0) }
        sender = dbus_message_get_sender(message).map { String(cString: $0) }
        destination = dbus_message_get_destination(message).map { String(cString: $0) }
        body = try Self.decodeBody(of: message)
    }

    static func decodeBody(of message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(try decode(&iterator))
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    /// Appends `body` to a message made by libdbus.
    static func encode(_ body: [DBusValue], into message: OpaquePointer) -> Bool {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        return body.allSatisfy { append($0, to: &iterator) }
    }

    private static func decode(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iterator, UInt8.self))
        // dbus_bool_t is 32 bits wide: read it as one.
        case CDBUS_TYPE_BOOLEAN: return .bool(basic(&iterator, UInt32.self) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iterator, Int16.self))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iterator, UInt16.self))
        case CDBUS_TYPE_INT32: return .int32(basic(&iterator, Int32.self))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iterator, UInt32.self))
        case CDBUS_TYPE_INT64: return .int64(basic(&iterator, Int64.self))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iterator, UInt64.self))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iterator, Double.self))
        case CDBUS_TYPE_UNIX_FD: return .unixFD(basic(&iterator, Int32.self))
        case CDBUS_TYPE_STRING: return .string(text(&iterator))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(text(&iterator))
        case CDBUS_TYPE_SIGNATURE: return .signature(text(&iterator))
        case CDBUS_TYPE_VARIANT:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return .variant(try decode(&inner))
        case CDBUS_TYPE_ARRAY:
            return try decodeArray(&iterator)
        case CDBUS_TYPE_STRUCT, CDBUS_TYPE_DICT_ENTRY:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != CDBUS_TYPE_INVALID {
                fields.append(try decode(&inner))
                dbus_message_iter_next(&inner)
            }
            if type == CDBUS_TYPE_DICT_ENTRY {
                guard fields.count == 2 else {
                    throw DBusError(name: DBusError.invalidArgsName, message: "a dictionary entry with \(fields.count) fields")
                }
                return .dictEntry(fields[0], fields[1])
            }
            return .structure(fields)
        default:
            throw DBusError(name: DBusError.invalidArgsName, message: "unsupported D-Bus type code \(type)")
        }
    }

    private static func decodeArray(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iterator)
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &inner)
        if elementType == CDBUS_TYPE_BYTE {
            var pointer: UnsafeMutableRawPointer?
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&inner, $0, &count) }
            guard let pointer, count > 0 else { return .bytes([]) }
            // The pointer is into the message, which is freed after decoding: copy now.
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        let element = dbus_message_iter_get_signature(&inner).map { pointer in
            defer { dbus_free(pointer) }
            return String(cString: pointer)
        } ?? ""
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&inner) != CDBUS_TYPE_INVALID {
            values.append(try decode(&inner))
            dbus_message_iter_next(&inner)
        }
        return .array(element: element, values)
    }

    private static func basic<T>(_ iterator: inout DBusMessageIter, _: T.Type) -> T where T: BitwiseCopyable {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 1) { storage in
            storage[0] = 0
            dbus_message_iter_get_basic(&iterator, storage.baseAddress)
            return UnsafeRawPointer(storage.baseAddress!).loadUnaligned(as: T.self)
        }
    }

    private static func text(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let value): return appendBasic(value, CDBUS_TYPE_BYTE, &iterator)
        case .bool(let value): return appendBasic(UInt32(value ? 1 : 0), CDBUS_TYPE_BOOLEAN, &iterator)
        case .int16(let value): return appendBasic(value, CDBUS_TYPE_INT16, &iterator)
        case .uint16(let value): return appendBasic(value, CDBUS_TYPE_UINT16, &iterator)
        case .int32(let value): return appendBasic(value, CDBUS_TYPE_INT32, &iterator)
        case .uint32(let value): return appendBasic(value, CDBUS_TYPE_UINT32, &iterator)
        case .int64(let value): return appendBasic(value, CDBUS_TYPE_INT64, &iterator)
        case .uint64(let value): return appendBasic(value, CDBUS_TYPE_UINT64, &iterator)
        case .double(let value): return appendBasic(value, CDBUS_TYPE_DOUBLE, &iterator)
        case .unixFD(let value): return appendBasic(value, CDBUS_TYPE_UNIX_FD, &iterator)
        case .string(let text): return appendText(text, CDBUS_TYPE_STRING, &iterator)
        // libdbus aborts the process on an invalid path or signature: check first.
        case .objectPath(let text): return isValidObjectPath(text) && appendText(text, CDBUS_TYPE_OBJECT_PATH, &iterator)
        case .signature(let text):
            return text.withCString { dbus_signature_validate($0, nil) != 0 } && appendText(text, CDBUS_TYPE_SIGNATURE, &iterator)
        case .bytes(let bytes):
            return container(CDBUS_TYPE_ARRAY, "y", &iterator) { inner in
                bytes.withUnsafeBufferPointer { buffer in
                    // libdbus wants the address of a non-null pointer, even for no bytes.
                    var pointer = UnsafeRawPointer(buffer.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
                    return dbus_message_iter_append_fixed_array(&inner, CDBUS_TYPE_BYTE, &pointer, Int32(buffer.count)) != 0
                }
            }
        case .array(let element, let values):
            guard values.allSatisfy({ $0.signature == element }) else { return false }
            return container(CDBUS_TYPE_ARRAY, element, &iterator) { inner in
                values.allSatisfy { append($0, to: &inner) }
            }
        case .dictEntry(let key, let value):
            return container(CDBUS_TYPE_DICT_ENTRY, nil, &iterator) { inner in
                append(key, to: &inner) && append(value, to: &inner)
            }
        case .structure(let fields):
            return container(CDBUS_TYPE_STRUCT, nil, &iterator) { inner in
                fields.allSatisfy { append($0, to: &inner) }
            }
        case .variant(let inner):
            return container(CDBUS_TYPE_VARIANT, inner.signature, &iterator) { content in
                append(inner, to: &content)
            }
        }
    }

    /// True when `path` is a valid object path (`/`, or `/`-separated `[A-Za-z0-9_]+` elements).
    static func isValidObjectPath(_ path: String) -> Bool {
        path.withCString { dbus_validate_path($0, nil) != 0 }
    }

    static func isValidBusName(_ name: String) -> Bool { name.withCString { dbus_validate_bus_name($0, nil) != 0 } }
    static func isValidInterface(_ name: String) -> Bool { name.withCString { dbus_validate_interface($0, nil) != 0 } }
    static func isValidMember(_ name: String) -> Bool { name.withCString { dbus_validate_member($0, nil) != 0 } }

    private static func appendBasic<T: BitwiseCopyable>(_ value: T, _ type: Int32, _ iterator: inout DBusMessageIter) -> Bool {
        var copy = value
        return dbus_message_iter_append_basic(&iterator, type, &copy) != 0
    }

    private static func appendText(_ text: String, _ type: Int32, _ iterator: inout DBusMessageIter) -> Bool {
        text.withCString { pointer in
            var pointer = pointer
            return dbus_message_iter_append_basic(&iterator, type, &pointer) != 0
        }
    }

    private static func container(
        _ type: Int32, _ signature: String?, _ iterator: inout DBusMessageIter,
        _ fill: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var inner = DBusMessageIter()
        let opened: Bool = if let signature {
            // An array's element may be a dictionary entry, which is only a complete type inside the array.
            (type == CDBUS_TYPE_ARRAY ? "a" + signature : signature).withCString { dbus_signature_validate_single($0, nil) != 0 }
                && signature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &inner) != 0 }
        } else {
            dbus_message_iter_open_container(&iterator, type, nil, &inner) != 0
        }
        guard opened else { return false }
        guard fill(&inner) else {
            dbus_message_iter_abandon_container(&iterator, &inner)
            return false
        }
        return dbus_message_iter_close_container(&iterator, &inner) != 0
    }
}
