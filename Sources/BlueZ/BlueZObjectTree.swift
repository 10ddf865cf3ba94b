public import CameraProtocols
public import DBus
import Foundation
public import GATT
public import UnleashedProtocol

/// A mirror of BlueZ's objects (`path -> interface -> properties`), loaded from
/// `GetManagedObjects` and kept current from `InterfacesAdded`, `InterfacesRemoved` and
/// `PropertiesChanged`. A plain value: the client applies signals to it and reads snapshots.
public struct BlueZObjectTree: Sendable, Hashable {
    public private(set) var objects: [String: [String: [String: DBusValue]]] = [:]

    public init() {}

    /// Replaces everything with a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    public mutating func load(_ managedObjects: DBusValue) {
        objects = [:]
        for (path, interfaces) in managedObjects.dictionaryValue ?? [:] {
            objects[path] = Self.interfaces(interfaces)
        }
    }

    /// Empties the mirror, as when bluetoothd leaves the bus.
    public mutating func clear() {
        objects = [:]
    }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        (value.dictionaryValue ?? [:]).mapValues { ($0.dictionaryValue ?? [:]).mapValues(\.unwrapped) }
    }

    /// Applies one signal from BlueZ; returns whether anything changed. Signals of other kinds
    /// and malformed bodies are ignored.
    @discardableResult
    public mutating func apply(_ message: DBusMessage) -> Bool {
        if message.isSignal(BlueZName.objectManager, "InterfacesAdded"), message.body.count == 2,
           let path = message.body[0].stringValue {
            objects[path, default: [:]].merge(Self.interfaces(message.body[1])) { _, new in new }
            return true
        }
        if message.isSignal(BlueZName.objectManager, "InterfacesRemoved"), message.body.count == 2,
           let path = message.body[0].stringValue, let removed = message.body[1].stringArrayValue {
            for interface in removed { objects[path]?[interface] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
            return true
        }
        if message.isSignal(BlueZName.properties, "PropertiesChanged"), message.body.count == 3,
           let path = message.path, let interface = message.body[0].stringValue,
           objects[path]?[interface] != nil {
            for (name, value) in message.body[1].dictionaryValue ?? [:] { objects[path]?[interface]?[name] = value.unwrapped }
            // BlueZ drops properties such as RSSI when discovery stops: forget them too.
            for name in message.body[2].stringArrayValue ?? [] { objects[path]?[interface]?[name] = nil }
            return true
        }
        return false
    }

    public func properties(_ path: String, _ interface: String) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    /// The adapters, in name order.
    public var adapters: [BlueZAdapter] {
        objects.compactMap { path, interfaces in
            interfaces[BlueZName.adapter].map { BlueZAdapter(path: path, properties: $0) }
        }.sorted { $0.name < $1.name }
    }

    /// The devices BlueZ knows on `adapter` (found by a scan, paired, or connected).
    public func devices(on adapter: String) -> [BlueZDevice] {
        objects.compactMap { path, interfaces -> BlueZDevice? in
            guard let properties = interfaces[BlueZName.device],
                  properties["Adapter"]?.stringValue == adapter else { return nil }
            return BlueZDevice(path: path, properties: properties)
        }.sorted { $0.address < $1.address }
    }

    public func device(at path: String) -> BlueZDevice? {
        properties(path, BlueZName.device).map { BlueZDevice(path: path, properties: $0) }
    }

    /// The path of the characteristic with this UUID in the service with that UUID on a device.
    /// Found by UUID and parent, never by handle: handles change with firmware and caches.
    public func characteristic(_ uuid: String, service serviceUUID: String, device: String) -> String? {
        let services = objects.compactMap { path, interfaces -> String? in
            guard let service = interfaces[BlueZName.gattService], service["Device"]?.stringValue == device,
                  service["UUID"]?.stringValue?.lowercased() == serviceUUID.lowercased() else { return nil }
            return path
        }
        return objects.first { _, interfaces in
            guard let characteristic = interfaces[BlueZName.characteristic],
                  let service = characteristic["Service"]?.stringValue else { return false }
            return services.contains(service) && characteristic["UUID"]?.stringValue?.lowercased() == uuid.lowercased()
        }?.key
    }

    /// Every characteristic of a device's resolved services, by service and UUID.
    public func characteristics(of device: String) -> [GATTCharacteristicID: String] {
        var services: [String: String] = [:]
        for (path, interfaces) in objects {
            if let service = interfaces[BlueZName.gattService], service["Device"]?.stringValue == device,
               let uuid = service["UUID"]?.stringValue {
                services[path] = uuid
            }
        }
        var found: [GATTCharacteristicID: String] = [:]
        for (path, interfaces) in objects {
            guard let characteristic = interfaces[BlueZName.characteristic], let uuid = characteristic["UUID"]?.stringValue,
                  let service = characteristic["Service"]?.stringValue.flatMap({ services[$0] }) else { continue }
            found[GATTCharacteristicID(service: service, characteristic: uuid)] = path
        }
        return found
    }

    /// True when the device offers a service with this UUID among its resolved GATT objects.
    public func hasService(_ uuid: String, device: String) -> Bool {
        objects.values.contains { interfaces in
            guard let service = interfaces[BlueZName.gattService] else { return false }
            return service["Device"]?.stringValue == device && service["UUID"]?.stringValue?.lowercased() == uuid.lowercased()
        }
    }
}

/// A Bluetooth adapter (`/org/bluez/hciN`).
public struct BlueZAdapter: Sendable, Hashable {
    public var path: String
    public var address: String
    public var alias: String
    public var powered: Bool
    public var discovering: Bool
    /// `PowerState` (BlueZ 5.66 and later): `off-blocked` when rfkill blocks the adapter; nil
    /// from an older BlueZ.
    public var powerState: String?

    /// The adapter's short name, `hci0`.
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }

    init(path: String, properties: [String: DBusValue]) {
        self.path = path
        address = properties["Address"]?.stringValue ?? ""
        alias = properties["Alias"]?.stringValue ?? properties["Name"]?.stringValue ?? ""
        powered = properties["Powered"]?.boolValue ?? false
        discovering = properties["Discovering"]?.boolValue ?? false
        powerState = properties["PowerState"]?.stringValue
    }
}

/// A device as BlueZ knows it.
public struct BlueZDevice: Sendable, Hashable {
    public var path: String
    public var address: String
    public var name: String?
    public var rssi: Int?
    public var paired: Bool
    public var connected: Bool
    public var servicesResolved: Bool
    public var serviceUUIDs: [String]
    /// Manufacturer data by company identifier.
    public var manufacturerData: [Int: [UInt8]]
    /// Service data by service UUID (lower case).
    public var serviceData: [String: [UInt8]]

    init(path: String, properties: [String: DBusValue]) {
        self.path = path
        address = properties["Address"]?.stringValue ?? ""
        name = properties["Alias"]?.stringValue ?? properties["Name"]?.stringValue
        rssi = properties["RSSI"]?.intValue
        paired = properties["Paired"]?.boolValue ?? false
        connected = properties["Connected"]?.boolValue ?? false
        servicesResolved = properties["ServicesResolved"]?.boolValue ?? false
        serviceUUIDs = (properties["UUIDs"]?.stringArrayValue ?? []).map { $0.lowercased() }
        manufacturerData = (properties["ManufacturerData"]?.integerKeyedDictionaryValue ?? [:]).compactMapValues(\.bytesValue)
        serviceData = Dictionary((properties["ServiceData"]?.dictionaryValue ?? [:]).compactMap { key, value in
            value.bytesValue.map { (key.lowercased(), $0) }
        }) { first, _ in first }
    }

    /// The advertisement as the camera protocols read it.
    public var advertisementData: AdvertisementData {
        AdvertisementData(name: name, serviceUUIDs: serviceUUIDs,
                          manufacturerData: Dictionary(manufacturerData.compactMap { key, value in
                              UInt16(exactly: key).map { ($0, value) }
                          }) { first, _ in first },
                          serviceData: serviceData)
    }

    /// The camera this device is, when its advertisement says it is one this project drives
    /// through the camera's own remote protocol.
    public var camera: RecognizedCamera? {
        CameraAdvertisement.recognize(advertisementData)
    }

    /// True when `wanted` is this device's address or name, in any case: how a person names a
    /// module on the command line.
    public func matches(_ wanted: String) -> Bool {
        address.caseInsensitiveCompare(wanted) == .orderedSame || name?.caseInsensitiveCompare(wanted) == .orderedSame
    }

    /// What the module says about itself in its advertisement, if it is a module.
    public var advertisement: ModuleAdvertisement? {
        manufacturerData[Int(ModuleAdvertisement.companyIdentifier)].flatMap(ModuleAdvertisement.init(manufacturerData:))
    }
}
