/// Bluetooth UUIDs as BlueZ writes them: lower case, 128-bit, with 16- and 32-bit SIG UUIDs
/// expanded on the Bluetooth base UUID, so that two spellings of one UUID compare equal.
public enum BluetoothUUID {
    /// `fea6`, `0000FEA6`, `0000fea6-0000-1000-8000-00805f9b34fb` all give the last form.
    public static func normalized(_ text: String) -> String {
        let lower = text.lowercased()
        switch lower.count {
        case 4: return "0000" + lower + "-0000-1000-8000-00805f9b34fb"
        case 8: return lower + "-0000-1000-8000-00805f9b34fb"
        default: return lower
        }
    }
}

/// One characteristic of a device's GATT database (a camera's, a module's), named by its service
/// and its own UUID (a camera may use one characteristic UUID in two services).
public struct GATTCharacteristicID: Hashable, Sendable, CustomStringConvertible {
    /// The service's UUID, normalized.
    public let service: String
    /// The characteristic's UUID, normalized.
    public let characteristic: String

    public init(service: String, characteristic: String) {
        self.service = BluetoothUUID.normalized(service)
        self.characteristic = BluetoothUUID.normalized(characteristic)
    }

    public var description: String { characteristic }
}

/// A characteristic as the device declares it: what a client may do with it.
public struct GATTCharacteristicLayout: Hashable, Sendable {
    public var uuid: String
    /// BlueZ's `Flags` names: `read`, `write`, `write-without-response`, `notify`, `indicate`,
    /// `encrypt-write`, …
    public var flags: [String]

    public init(uuid: String, flags: [String]) {
        self.uuid = BluetoothUUID.normalized(uuid)
        self.flags = flags
    }
}

/// A primary service and its characteristics.
public struct GATTServiceLayout: Hashable, Sendable {
    public var uuid: String
    public var characteristics: [GATTCharacteristicLayout]

    public init(uuid: String, characteristics: [GATTCharacteristicLayout]) {
        self.uuid = BluetoothUUID.normalized(uuid)
        self.characteristics = characteristics
    }

    /// The identifiers of this service's characteristics.
    public var identifiers: [GATTCharacteristicID] {
        characteristics.map { GATTCharacteristicID(service: uuid, characteristic: $0.uuid) }
    }
}

/// An ATT error response: the code a peripheral refuses a read or write with (Core Spec Vol 3
/// Part F 3.4.1.1; 0x80–0x9F are the application's own, which cameras use for their refusals).
public struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: UInt8

    public init(_ code: UInt8) { self.code = code }

    public static let readNotPermitted = ATTError(0x02)
    public static let writeNotPermitted = ATTError(0x03)
    public static let insufficientAuthentication = ATTError(0x05)
    public static let requestNotSupported = ATTError(0x06)
    public static let invalidAttributeValueLength = ATTError(0x0D)
    public static let unlikely = ATTError(0x0E)
    public static let insufficientEncryption = ATTError(0x0F)

    public var description: String {
        let hex = String(code, radix: 16, uppercase: true)
        return "ATT error 0x" + (hex.count < 2 ? "0" : "") + hex
    }
}
