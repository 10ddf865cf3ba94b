/// A D-Bus error: a reply of type error from a peer, or one libdbus made up (no reply in time,
/// connection gone). The name is what code matches on; the message is for people.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name, such as `org.bluez.Error.InProgress`.
    public var name: String
    /// The human-readable text that came with it.
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String {
        message.isEmpty ? name : "\(name): \(message)"
    }

    /// The call was not answered in time (libdbus's own timeout).
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    /// Nobody owns the destination name: the service is not running.
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The destination exists but has no object at that path.
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    /// The object has no such method.
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    /// The connection to the bus is gone.
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    /// The arguments did not have the expected types.
    public static let invalidArgsName = "org.freedesktop.DBus.Error.InvalidArgs"
    /// Generic failure.
    public static let failedName = "org.freedesktop.DBus.Error.Failed"

    static func disconnected(_ message: String = "the connection to the bus was closed") -> DBusError {
        DBusError(name: disconnectedName, message: message)
    }

    /// True for the errors that mean "nobody answered": a timeout, a missing service, a lost bus.
    public var isUnreachable: Bool {
        [Self.noReplyName, Self.serviceUnknownName, Self.disconnectedName].contains(name)
    }
}
