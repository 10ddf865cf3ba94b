import DBus
import UnleashedKit
import UnleashedProtocol

/// One adapter, `hciN`: its power and the discovery sessions of its clients.
struct Adapter {
    let index: Int
    var powered: Bool
    var alias: String?
    /// Unique names of the clients that have a discovery session.
    var discoveryClients: Set<String> = []
    /// Each client's filter, set before or during its session.
    var filters: [String: DiscoveryFilter] = [:]
    /// Reports what is in range while anyone discovers.
    var ticker: Task<Void, Never>?

    var path: String { "/org/bluez/hci\(index)" }
    var address: String { "00:1A:7D:DA:71:" + SimulatedModule.hex(UInt8(truncatingIfNeeded: index)) }
    var name: String { "unleashed-sim #\(index + 1)" }
}

/// A client's `SetDiscoveryFilter`, as BlueZ parses it (`adapter.c` `parse_discovery_filter_dict`).
struct DiscoveryFilter: Equatable {
    var uuids: [String] = []
    var rssi: Int?
    var pathloss: Int?
    var transport = "auto"
    var duplicateData = true
    var discoverable = false
    var pattern = ""

    static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// No filter: everything BlueZ finds.
    init() {}

    /// Nil when a key is unknown, a value has the wrong type, or RSSI and Pathloss are both set.
    init?(_ entries: [String: DBusValue]) {
        for (key, value) in entries {
            let inner = value.unwrapped
            switch (key, inner) {
            case ("UUIDs", .array("s", _)): uuids = (inner.stringArrayValue ?? []).map { GATTDatabase.normalizedUUID($0) }
            case ("RSSI", .int16(let level)): rssi = Int(level)
            case ("Pathloss", .uint16(let loss)): pathloss = Int(loss)
            case ("Transport", .string(let text)) where ["auto", "bredr", "le"].contains(text): transport = text
            case ("DuplicateData", .bool(let flag)): duplicateData = flag
            case ("Discoverable", .bool(let flag)): discoverable = flag
            case ("Pattern", .string(let text)): pattern = text
            default: return nil
            }
        }
        if rssi != nil && pathloss != nil { return nil }
    }

    /// Whether `sighting`'s advertisement at `rssi` passes this filter.
    func accepts(_ sighting: Sighting, rssi level: Int) -> Bool {
        guard transport != "bredr" else { return false }
        if !uuids.isEmpty && Set(uuids).isDisjoint(with: sighting.uuids) { return false }
        if let rssi, level < rssi { return false }
        if let pathloss, Self.txPower - level > pathloss { return false }
        return pattern.isEmpty || sighting.address.hasPrefix(pattern) || sighting.name.hasPrefix(pattern)
    }

    /// The transmit power the modules advertise, for pathloss.
    static let txPower = 0
}

/// One advertisement heard from a module or a camera in range: what a device object shows of it.
struct Sighting {
    let peer: Device.Peer
    let address: String
    let name: String
    let uuids: [String]
    let manufacturerData: [UInt16: [UInt8]]
    let serviceData: [String: [UInt8]]
    let baseRSSI: Int

    /// The device object path under adapter `hciN`.
    func path(adapter: Int) -> String { "/org/bluez/hci\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_") }
}

extension FakeBlueZ {
    func adapterProperties(_ adapter: Adapter) -> [String: DBusValue] {
        [
            "Address": .string(adapter.address), "AddressType": .string("public"), "Name": .string(adapter.name),
            "Alias": .string(adapter.alias ?? adapter.name), "Class": .uint32(0), "Powered": .bool(adapter.powered),
            "PowerState": .string(adapter.powered ? "on" : "off"), "Discoverable": .bool(false),
            "DiscoverableTimeout": .uint32(180), "Pairable": .bool(true), "PairableTimeout": .uint32(0),
            "Discovering": .bool(!adapter.discoveryClients.isEmpty),
            "UUIDs": .strings([0x1800, 0x1801, 0x180A].map(GATTDatabase.uuid16)),
            "Modalias": .string("usb:v1D6Bp0246d0542"), "Roles": .strings(["central", "peripheral"]),
        ]
    }

    func adapterIndex(_ path: String) -> Int? {
        adapters.firstIndex { $0.path == path }
    }

    func handleAdapter(_ call: DBusIncomingCall, _ path: String, _ method: String) {
        guard let index = adapterIndex(path) else { return call.fail(BlueZError.unhandled(call.message, objectExists: false)) }
        let client = call.message.sender ?? ""
        switch method {
        case "StartDiscovery":
            count("startDiscoveryCalls")
            guard adapters[index].powered else { return call.fail(BlueZError.notReady) }
            guard !adapters[index].discoveryClients.contains(client) else { return call.fail(BlueZError.inProgress) }
            adapters[index].discoveryClients.insert(client)
            log("\(client) discovers on hci\(index)")
            discoveryChanged(index)
            call.reply()
        case "StopDiscovery":
            guard adapters[index].powered, adapters[index].discoveryClients.remove(client) != nil else {
                return call.fail(BlueZError.notReady)
            }
            adapters[index].filters[client] = nil
            discoveryChanged(index)
            call.reply()
        case "SetDiscoveryFilter":
            guard adapters[index].powered else { return call.fail(BlueZError.notReady) }
            guard let entries = call.message.body[0].dictionaryValue, let filter = DiscoveryFilter(entries) else {
                return call.fail(BlueZError.invalidArguments())
            }
            adapters[index].filters[client] = entries.isEmpty ? nil : filter
            call.reply()
        case "GetDiscoveryFilters":
            call.reply([.strings(DiscoveryFilter.keys)])
        case "RemoveDevice":
            let target = call.message.body[0].stringValue ?? ""
            guard let device = devices[target], device.adapter == index else { return call.fail(BlueZError.doesNotExist) }
            dropLink(target, connectError: BlueZError.failed("Cancelled"), pairError: BlueZError.authenticationCanceled)
            removeDevice(target)
            call.reply()
        default:
            call.fail(BlueZError.unhandled(call.message, objectExists: true))
        }
    }

    func setAdapterProperty(_ path: String, _ name: String, _ value: DBusValue) {
        guard let index = adapterIndex(path) else { return }
        switch (name, value) {
        case ("Powered", .bool(let on)): setPowered(on, adapter: index)
        case ("Alias", .string(let alias)):
            adapters[index].alias = alias.isEmpty ? nil : alias
            update(path, InterfaceSpec.adapter.name, ["Alias": .string(adapters[index].alias ?? adapters[index].name)])
        default: update(path, InterfaceSpec.adapter.name, [name: value])
        }
    }

    /// Powers an adapter on or off; off ends its discovery sessions and drops its links.
    func setPowered(_ on: Bool, adapter index: Int) {
        guard adapters[index].powered != on else { return }
        log("hci\(index) powered \(on ? "on" : "off")")
        adapters[index].powered = on
        if !on {
            adapters[index].discoveryClients = []
            adapters[index].filters = [:]
            for (path, device) in devices where device.adapter == index {
                dropLink(path, connectError: BlueZError.failed("Not Powered"), pairError: BlueZError.authenticationCanceled)
            }
            discoveryChanged(index)
        }
        update(adapters[index].path, InterfaceSpec.adapter.name, ["Powered": .bool(on), "PowerState": .string(on ? "on" : "off")])
    }

    /// Starts or stops reporting advertisements when the first session starts or the last ends.
    func discoveryChanged(_ index: Int) {
        let discovering = !adapters[index].discoveryClients.isEmpty
        update(adapters[index].path, InterfaceSpec.adapter.name, ["Discovering": .bool(discovering)])
        if discovering {
            guard adapters[index].ticker == nil else { return }
            let timing = configuration.timing
            adapters[index].ticker = Task { [weak self] in
                var delay = timing.discoveryDelay
                while !Task.isCancelled {
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled, let self else { return }
                    let cameraOn = await self.camerasOn()
                    let sightings = await self.cameraSightings()
                    await self.perform { $0.reportAdvertisements(adapter: index, cameraOn: cameraOn, cameraSightings: sightings) }
                    delay = timing.rssiInterval
                }
            }
        } else {
            adapters[index].ticker?.cancel()
            adapters[index].ticker = nil
            for (path, device) in devices where device.adapter == index {
                devices[path]?.rssi = nil
                update(path, InterfaceSpec.device.name, [:], invalidating: ["RSSI"])
                scheduleRemovalIfTemporary(path)
            }
        }
    }

    func endDiscoverySessions(of client: String) {
        for index in adapters.indices where adapters[index].discoveryClients.contains(client) || adapters[index].filters[client] != nil {
            adapters[index].filters[client] = nil
            if adapters[index].discoveryClients.remove(client) != nil { discoveryChanged(index) }
        }
    }

    private func camerasOn() async -> [Bool] {
        var on: [Bool] = []
        for module in modules { on.append(await module.module.camera.power == .on) }
        return on
    }

    /// What each module and camera in range advertises, reported as BlueZ reports a device
    /// found: a new device object, or new RSSI and advertising data on the existing one. A camera
    /// that stopped advertising (asleep, out of range) loses its `RSSI`.
    func reportAdvertisements(adapter index: Int, cameraOn: [Bool], cameraSightings: [CameraSighting]) {
        let adapter = adapters[index]
        guard adapter.powered, !adapter.discoveryClients.isEmpty else { return }
        count("advertisingRounds")
        let filters = adapter.discoveryClients.map { adapter.filters[$0] ?? DiscoveryFilter() }
        var sightings: [Sighting] = []
        for module in modules where module.radio.timeOutOfRange == .zero {
            sightings.append(Sighting(peer: .module(module.index), address: module.address, name: module.name,
                                      uuids: [GATTDatabase.unleashedService],
                                      manufacturerData: [ModuleAdvertisement.companyIdentifier: advertisedData(module, cameraOn: cameraOn[module.index])],
                                      serviceData: [:], baseRSSI: module.baseRSSI))
        }
        for (camera, seen) in zip(cameras, cameraSightings) {
            guard seen.advertising else {
                refreshCamera(camera.index, seen)
                continue
            }
            sightings.append(sighting(of: camera, seen))
        }
        for sighting in sightings {
            let rssi = sighting.baseRSSI + Int(random.next() % 7) - 3
            guard filters.contains(where: { $0.accepts(sighting, rssi: rssi) }) else { continue }
            let path = sighting.path(adapter: index)
            if devices[path] == nil {
                var device = Device(path: path, adapter: index, peer: sighting.peer, name: sighting.name, address: sighting.address)
                device.rssi = Int16(rssi)
                device.manufacturerData = sighting.manufacturerData
                device.serviceData = sighting.serviceData
                device.advertisedUUIDs = sighting.uuids
                devices[path] = device
                export(path, [InterfaceSpec.device.name: deviceProperties(device)])
                log("found \(sighting.name) at \(path)")
            } else {
                devices[path]?.rssi = Int16(rssi)
                devices[path]?.removal?.cancel()
                devices[path]?.removal = nil
                applyAdvertisement(path, sighting, extra: ["RSSI": .int16(Int16(rssi))])
            }
        }
    }

    /// A camera's advertisement as a device object shows it.
    func sighting(of camera: SimulatedCamera, _ seen: CameraSighting) -> Sighting {
        let advertisement = seen.advertisement
        return Sighting(peer: .camera(camera.index), address: camera.address, name: advertisement.name ?? camera.body.model,
                        uuids: advertisement.serviceUUIDs, manufacturerData: advertisement.manufacturerData,
                        serviceData: advertisement.serviceData, baseRSSI: camera.baseRSSI)
    }

    /// Brings every device object of a camera up to date with what it advertises now, at once
    /// (the control interface changed it) rather than at the next round of advertisements; a
    /// camera that stopped advertising loses its `RSSI`.
    func refreshCamera(_ index: Int, _ seen: CameraSighting) {
        let sighting = sighting(of: cameras[index], seen)
        for (path, device) in devices where device.peer == .camera(index) {
            if seen.advertising {
                applyAdvertisement(path, sighting)
            } else if device.rssi != nil {
                devices[path]?.rssi = nil
                update(path, InterfaceSpec.device.name, [:], invalidating: ["RSSI"])
            }
        }
    }

    /// Stores a new advertisement on an existing device object and announces what changed.
    private func applyAdvertisement(_ path: String, _ sighting: Sighting, extra: [String: DBusValue] = [:]) {
        guard let device = devices[path] else { return }
        devices[path]?.name = sighting.name
        devices[path]?.manufacturerData = sighting.manufacturerData
        devices[path]?.serviceData = sighting.serviceData
        devices[path]?.advertisedUUIDs = sighting.uuids
        var changes = extra
        changes["Name"] = .string(sighting.name)
        if device.alias == nil { changes["Alias"] = .string(sighting.name) }
        if device.gatt == nil { changes["UUIDs"] = .strings(sighting.uuids) }
        if !sighting.manufacturerData.isEmpty { changes["ManufacturerData"] = Self.manufacturerData(sighting.manufacturerData) }
        if !sighting.serviceData.isEmpty { changes["ServiceData"] = Self.serviceData(sighting.serviceData) }
        update(path, InterfaceSpec.device.name, changes)
    }

    /// What each camera advertises now, asked of their actors.
    func cameraSightings() async -> [CameraSighting] {
        var sightings: [CameraSighting] = []
        for camera in cameras {
            sightings.append(await sighting(of: camera))
        }
        return sightings
    }

    /// The manufacturer data bytes after the company identifier (PROTOCOL.md §2).
    private func advertisedData(_ module: SimulatedModule, cameraOn: Bool) -> [UInt8] {
        var state: ModuleAdvertisement.State = [.cameraAttached, .pairingOpen]
        if cameraOn { state.insert(.cameraOn) }
        if devices.values.contains(where: { $0.peer == .module(module.index) && $0.isConnected }) { state.insert(.clientConnected) }
        return ModuleAdvertisement(model: .simulated, state: state).manufacturerData
    }

    /// `ManufacturerData` as BlueZ types it: `a{qv}`, each value an `ay`.
    static func manufacturerData(_ entries: [UInt16: [UInt8]]) -> DBusValue {
        .array(element: "{qv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.uint16($0.key), .variant(.bytes($0.value))) })
    }

    /// `ServiceData` as BlueZ types it: `a{sv}`, each value an `ay`.
    static func serviceData(_ entries: [String: [UInt8]]) -> DBusValue {
        .array(element: "{sv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant(.bytes($0.value))) })
    }

    /// An unpaired device that nobody is connected to or discovering goes after `TemporaryTimeout`.
    func scheduleRemovalIfTemporary(_ path: String) {
        guard let device = devices[path], !device.paired, !device.isConnected, device.removal == nil,
              adapters.indices.contains(device.adapter), adapters[device.adapter].discoveryClients.isEmpty else { return }
        devices[path]?.removal = schedule(after: configuration.timing.temporaryTimeout) { fake in
            guard let device = fake.devices[path], !device.paired, !device.isConnected else { return }
            fake.log("\(device.name) was not seen for a while: removed")
            fake.removeDevice(path)
        }
    }

    func removeDevice(_ path: String) {
        devices[path]?.removal?.cancel()
        devices[path] = nil
        unexport(path)
    }
}
