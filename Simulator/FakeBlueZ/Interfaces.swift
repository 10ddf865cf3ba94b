import CameraProtocols
import DBus
import GATT

/// The D-Bus interfaces the fake serves: their methods with exact argument signatures (calls
/// are checked against them, as BlueZ's gdbus does) and which properties a client may set.
struct InterfaceSpec: Sendable {
    struct Method: Sendable {
        let name: String
        let arguments: String
        let returns: String
    }

    let name: String
    let methods: [Method]
    /// Writable properties and the type a `Set` must carry.
    let writable: [String: String]

    func method(_ name: String) -> Method? { methods.first { $0.name == name } }

    static let objectManager = InterfaceSpec(name: "org.freedesktop.DBus.ObjectManager", methods: [
        Method(name: "GetManagedObjects", arguments: "", returns: "a{oa{sa{sv}}}"),
    ], writable: [:])
    static let properties = InterfaceSpec(name: "org.freedesktop.DBus.Properties", methods: [
        Method(name: "Get", arguments: "ss", returns: "v"),
        Method(name: "GetAll", arguments: "s", returns: "a{sv}"),
        Method(name: "Set", arguments: "ssv", returns: ""),
    ], writable: [:])
    static let introspectable = InterfaceSpec(name: "org.freedesktop.DBus.Introspectable", methods: [
        Method(name: "Introspect", arguments: "", returns: "s"),
    ], writable: [:])
    static let agentManager = InterfaceSpec(name: "org.bluez.AgentManager1", methods: [
        Method(name: "RegisterAgent", arguments: "os", returns: ""),
        Method(name: "UnregisterAgent", arguments: "o", returns: ""),
        Method(name: "RequestDefaultAgent", arguments: "o", returns: ""),
    ], writable: [:])
    static let adapter = InterfaceSpec(name: "org.bluez.Adapter1", methods: [
        Method(name: "StartDiscovery", arguments: "", returns: ""),
        Method(name: "StopDiscovery", arguments: "", returns: ""),
        Method(name: "SetDiscoveryFilter", arguments: "a{sv}", returns: ""),
        Method(name: "GetDiscoveryFilters", arguments: "", returns: "as"),
        Method(name: "RemoveDevice", arguments: "o", returns: ""),
    ], writable: ["Powered": "b", "Alias": "s", "Discoverable": "b", "DiscoverableTimeout": "u",
                  "Pairable": "b", "PairableTimeout": "u"])
    static let device = InterfaceSpec(name: "org.bluez.Device1", methods: [
        Method(name: "Connect", arguments: "", returns: ""),
        Method(name: "Disconnect", arguments: "", returns: ""),
        Method(name: "Pair", arguments: "", returns: ""),
        Method(name: "CancelPairing", arguments: "", returns: ""),
        Method(name: "ConnectProfile", arguments: "s", returns: ""),
        Method(name: "DisconnectProfile", arguments: "s", returns: ""),
    ], writable: ["Trusted": "b", "Blocked": "b", "Alias": "s"])
    static let gattService = InterfaceSpec(name: "org.bluez.GattService1", methods: [], writable: [:])
    static let gattCharacteristic = InterfaceSpec(name: "org.bluez.GattCharacteristic1", methods: [
        Method(name: "ReadValue", arguments: "a{sv}", returns: "ay"),
        Method(name: "WriteValue", arguments: "aya{sv}", returns: ""),
        Method(name: "StartNotify", arguments: "", returns: ""),
        Method(name: "StopNotify", arguments: "", returns: ""),
        Method(name: "AcquireWrite", arguments: "a{sv}", returns: "hq"),
        Method(name: "AcquireNotify", arguments: "a{sv}", returns: "hq"),
    ], writable: [:])
    static let control = InterfaceSpec(name: FakeBlueZ.controlInterface, methods: [
        Method(name: "LoseLink", arguments: "su", returns: ""),
        Method(name: "RestartBluetoothd", arguments: "u", returns: ""),
        Method(name: "SetFaults", arguments: "s", returns: ""),
        Method(name: "SetPowered", arguments: "b", returns: ""),
        Method(name: "Passkey", arguments: "s", returns: "u"),
        Method(name: "Stats", arguments: "", returns: "a{sv}"),
        Method(name: "Modules", arguments: "", returns: "as"),
        Method(name: "Cameras", arguments: "", returns: "as"),
        Method(name: "SetCameraAsleep", arguments: "sb", returns: ""),
        Method(name: "SetCameraPairing", arguments: "sb", returns: ""),
        Method(name: "SetCameraRemote", arguments: "sb", returns: ""),
        Method(name: "CameraPictures", arguments: "s", returns: "u"),
    ], writable: [:])

    static let all: [String: InterfaceSpec] = Dictionary(uniqueKeysWithValues: [
        objectManager, properties, introspectable, agentManager, adapter, device, gattService, gattCharacteristic, control,
    ].map { ($0.name, $0) })
}

/// The errors BlueZ answers with (`src/error.c`), and the ones libdbus and gdbus make up.
enum BlueZError {
    static func invalidArguments(_ message: String = "Invalid arguments in method call") -> DBusError {
        DBusError(name: "org.bluez.Error.InvalidArguments", message: message)
    }
    static let inProgress = DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    static let alreadyConnected = DBusError(name: "org.bluez.Error.AlreadyConnected", message: "Already Connected")
    static let notConnected = DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected")
    static let notReady = DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
    static let alreadyExists = DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
    static let doesNotExist = DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
    static let notSupported = DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
    static let notPaired = DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")
    static let readNotPermitted = DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
    static let writeNotPermitted = DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
    static let writeAcquired = DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired")
    static let notifyAcquired = DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
    static let notAuthorized = DBusError(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")
    static let invalidOffset = DBusError(name: "org.bluez.Error.InvalidOffset", message: "Invalid offset")
    static let authenticationRejected = DBusError(name: "org.bluez.Error.AuthenticationRejected", message: "Authentication Rejected")
    static let authenticationFailed = DBusError(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
    static let authenticationCanceled = DBusError(name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled")
    static let connectionAttemptFailed = DBusError(name: "org.bluez.Error.ConnectionAttemptFailed", message: "Page Timeout")
    static func failed(_ message: String) -> DBusError { DBusError(name: "org.bluez.Error.Failed", message: message) }
    static let notConnectedGATT = failed("Not connected")
    /// What a failed LE connection attempt answers.
    static let connectionAborted = failed("le-connection-abort-by-local")

    /// What `ReadValue` or `WriteValue` answers when the peripheral refused with an ATT error, as
    /// BlueZ's `create_gatt_dbus_error` (`src/gatt-client.c`) maps them.
    static func att(_ error: ATTError) -> DBusError {
        switch error.code {
        case ATTError.readNotPermitted.code: readNotPermitted
        case ATTError.writeNotPermitted.code: writeNotPermitted
        // Insufficient authentication, encryption key size, encryption.
        case 0x05, 0x0C, 0x0F: notPaired
        case 0x07: invalidArguments("Invalid offset")
        case ATTError.invalidAttributeValueLength.code: invalidArguments("Invalid Length")
        case 0x08: notAuthorized
        case ATTError.requestNotSupported.code: notSupported
        case 0x00: failed("Operation failed")
        default:
            // printf's "0x%02x".
            failed("Operation failed with ATT error: 0x" + (error.code < 0x10 ? "0" : "") + String(error.code, radix: 16))
        }
    }

    /// libdbus's answer to a call nothing handled: `UnknownObject` when no object is at the path,
    /// else `UnknownMethod`; gdbus ends up here too when the arguments' signature is wrong.
    static func unhandled(_ message: DBusMessage, objectExists: Bool) -> DBusError {
        DBusError(
            name: objectExists ? DBusError.unknownMethodName : DBusError.unknownObjectName,
            message: "Method \"\(message.member ?? "")\" with signature \"\(message.signature)\" on interface \"\(message.interface ?? "(null)")\" doesn't exist")
    }

    /// gdbus's answers for `org.freedesktop.DBus.Properties`.
    static func noSuchInterface(_ name: String) -> DBusError {
        DBusError(name: DBusError.invalidArgsName, message: "No such interface '\(name)'")
    }
    static func noSuchProperty(_ name: String) -> DBusError {
        DBusError(name: DBusError.invalidArgsName, message: "No such property '\(name)'")
    }
    static func wrongPropertyType(_ signature: String) -> DBusError {
        DBusError(name: DBusError.invalidArgsName, message: "Invalid argument type: '\(signature)'")
    }
    static let propertyReadOnly = DBusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property is read-only")
}
