import DBus

/// What one D-Bus signal means for a link to one device: a characteristic's new value, or the
/// link's end. The module transport and the camera link read signals the same way.
enum BlueZLinkSignal: Equatable {
    case value(path: String, [UInt8])
    case lost(reason: String)

    /// Reads `message` for the link to `devicePath` whose characteristics of interest are
    /// `characteristicPaths`; nil when it is about something else.
    static func read(_ message: DBusMessage, devicePath: String, characteristicPaths: Set<String>,
                     deviceWord: String = "device") -> BlueZLinkSignal? {
        if message.isSignal(BlueZName.properties, "PropertiesChanged"), message.body.count >= 2, let path = message.path {
            let interface = message.body[0].stringValue
            let changed = message.body[1].dictionaryValue ?? [:]
            if interface == BlueZName.characteristic, characteristicPaths.contains(path), let value = changed["Value"]?.bytesValue {
                return .value(path: path, value)
            }
            if path == devicePath, interface == BlueZName.device, changed["Connected"]?.boolValue == false {
                return .lost(reason: "the \(deviceWord) disconnected")
            }
            return nil
        }
        if message.isSignal(BlueZName.objectManager, "InterfacesRemoved"), message.body.count == 2,
           let path = message.body[0].stringValue, let removed = message.body[1].stringArrayValue {
            // Only the device itself, or a characteristic of interest (or a parent of one), going
            // away ends the link; another interface leaving the device's path (Battery1) does not.
            let deviceGone = path == devicePath && removed.contains(BlueZName.device)
            let characteristicGone = path != devicePath
                && characteristicPaths.contains { $0 == path || $0.hasPrefix(path + "/") }
            if deviceGone || characteristicGone { return .lost(reason: "the \(deviceWord)'s objects were removed from BlueZ") }
            return nil
        }
        if message.isSignal("org.freedesktop.DBus", "NameOwnerChanged"), message.body.count == 3,
           message.body[0].stringValue == BlueZName.service, message.body[2].stringValue?.isEmpty == true {
            return .lost(reason: "bluetoothd left the system bus")
        }
        if message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
            return .lost(reason: "the system bus went away")
        }
        return nil
    }
}
