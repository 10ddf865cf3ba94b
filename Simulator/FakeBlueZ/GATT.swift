import DBus
import UnleashedKit
import UnleashedProtocol

/// A module's GATT database as BlueZ exports it after service discovery (PROTOCOL.md §1): the
/// Unleashed service, Battery and Device Information, at fixed attribute handles.
struct GATTDatabase {
    /// What a characteristic is for, which decides where its value comes from and goes.
    enum Role: Equatable {
        case command, event, info, batteryLevel, deviceInformation
    }

    struct Service {
        let path: String
        let uuid: String
        let handle: UInt16
    }

    struct Characteristic {
        let path: String
        let uuid: String
        let handle: UInt16
        let servicePath: String
        let flags: [String]
        let role: Role
        var value: [UInt8]
        /// Unique names of the clients with a notify session.
        var notifySessions: Set<String> = []
        var reading = false
        var writing = false

        var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
        /// Command and Event need an encrypted link (PROTOCOL.md §1): a bond.
        var needsPairing: Bool { role == .command || role == .event }
    }

    static let unleashedService = UnleashedV1.gattLayout.service

    let services: [Service]
    /// In handle order.
    private(set) var characteristics: [Characteristic]

    /// The full UUID of a 16-bit Bluetooth SIG UUID.
    static func uuid16(_ short: UInt16) -> String {
        "0000" + SimulatedModule.hex(UInt8(short >> 8)).lowercased() + SimulatedModule.hex(UInt8(short & 0xFF)).lowercased()
            + "-0000-1000-8000-00805f9b34fb"
    }

    /// A UUID as BlueZ compares them: lower case, 16- and 32-bit forms expanded.
    static func normalizedUUID(_ text: String) -> String {
        let lower = text.lowercased()
        switch lower.count {
        case 4: return "0000" + lower + "-0000-1000-8000-00805f9b34fb"
        case 8: return lower + "-0000-1000-8000-00805f9b34fb"
        default: return lower
        }
    }

    init(device: String, module: SimulatedModule) {
        let layout = UnleashedV1.gattLayout
        func servicePath(_ handle: UInt16) -> String { device + "/service" + Self.handleText(handle) }
        func characteristic(_ service: UInt16, _ handle: UInt16, _ uuid: String, _ flags: [String], _ role: Role,
                            _ value: [UInt8] = []) -> Characteristic {
            Characteristic(path: servicePath(service) + "/char" + Self.handleText(handle), uuid: uuid, handle: handle,
                           servicePath: servicePath(service), flags: flags, role: role, value: value)
        }
        services = [
            Service(path: servicePath(0x000A), uuid: layout.service, handle: 0x000A),
            Service(path: servicePath(0x0012), uuid: Self.uuid16(0x180F), handle: 0x0012),
            Service(path: servicePath(0x0016), uuid: Self.uuid16(0x180A), handle: 0x0016),
        ]
        characteristics = [
            characteristic(0x000A, 0x000B, layout.command, ["write-without-response", "write"], .command),
            characteristic(0x000A, 0x000D, layout.event, ["notify"], .event),
            characteristic(0x000A, 0x0010, layout.info, ["read"], .info, (try? module.info.encoded()) ?? []),
            characteristic(0x0012, 0x0013, Self.uuid16(0x2A19), ["read", "notify"], .batteryLevel),
        ] + module.deviceInformation.enumerated().map { offset, entry in
            characteristic(0x0016, 0x0017 + 2 * UInt16(offset), entry.uuid, ["read"], .deviceInformation, Array(entry.value.utf8))
        }
    }

    /// Every service UUID, as `Device1.UUIDs` lists them once resolved (GAP and GATT included).
    var allServiceUUIDs: [String] {
        ([Self.uuid16(0x1800), Self.uuid16(0x1801)] + services.map(\.uuid)).sorted()
    }

    subscript(path: String) -> Characteristic? {
        get { characteristics.first { $0.path == path } }
        set {
            guard let newValue, let index = characteristics.firstIndex(where: { $0.path == path }) else { return }
            characteristics[index] = newValue
        }
    }

    var eventPath: String? { characteristics.first { $0.role == .event }?.path }

    private static func handleText(_ handle: UInt16) -> String {
        (SimulatedModule.hex(UInt8(handle >> 8)) + SimulatedModule.hex(UInt8(handle & 0xFF))).lowercased()
    }
}

/// `ReadValue` and `WriteValue` options, checked as strictly as BlueZ's `parse_options`.
struct OperationOptions {
    var offset = 0
    var type: String?

    /// Nil when `offset` is not a `q` or `type` not an `s`; other keys are ignored.
    init?(_ value: DBusValue) {
        guard let entries = value.dictionaryValue else { return nil }
        for (key, value) in entries {
            switch (key.lowercased(), value.unwrapped) {
            case ("offset", .uint16(let offset)): self.offset = Int(offset)
            case ("type", .string(let type)): self.type = type.lowercased()
            case ("offset", _), ("type", _): return nil
            default: continue
            }
        }
    }
}

extension FakeBlueZ {
    private func characteristicProperties(_ characteristic: GATTDatabase.Characteristic) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            "UUID": .string(characteristic.uuid), "Service": .objectPath(characteristic.servicePath),
            "Value": .bytes(characteristic.value), "Flags": .strings(characteristic.flags),
            "Handle": .uint16(characteristic.handle), "MTU": .uint16(UInt16(configuration.mtu)),
        ]
        if characteristic.canNotify { properties["Notifying"] = .bool(!characteristic.notifySessions.isEmpty) }
        return properties
    }

    /// Services resolved: the GATT objects appear, then `UUIDs` and `ServicesResolved` change.
    func resolveServices(_ path: String, _ attempt: Int) {
        guard let device = devices[path], device.attempt == attempt, device.isConnected, device.gatt == nil else { return }
        let database = GATTDatabase(device: path, module: modules[device.module])
        for service in database.services {
            export(service.path, [InterfaceSpec.gattService.name: [
                "UUID": .string(service.uuid), "Primary": .bool(true), "Device": .objectPath(path),
                "Includes": .objectPaths([]), "Handle": .uint16(service.handle),
            ]])
            for characteristic in database.characteristics where characteristic.servicePath == service.path {
                export(characteristic.path, [InterfaceSpec.gattCharacteristic.name: characteristicProperties(characteristic)])
            }
        }
        devices[path]?.gatt = database
        log("services of \(device.name) resolved")
        update(path, InterfaceSpec.device.name, ["UUIDs": .strings(database.allServiceUUIDs), "ServicesResolved": .bool(true)])
    }

    func unexportGATT(_ path: String) {
        guard let database = devices[path]?.gatt else { return }
        devices[path]?.gatt = nil
        for characteristic in database.characteristics.reversed() { unexport(characteristic.path) }
        for service in database.services.reversed() { unexport(service.path) }
    }

    /// The device a GATT object belongs to.
    private func devicePath(ofGATTObject path: String) -> String? {
        path.range(of: "/service").map { String(path[..<$0.lowerBound]) }
    }

    func handleCharacteristic(_ call: DBusIncomingCall, _ path: String, _ method: String) async {
        guard let devicePath = devicePath(ofGATTObject: path), let device = devices[devicePath],
              let characteristic = device.gatt?[path] else {
            return call.fail(BlueZError.unhandled(call.message, objectExists: false))
        }
        let client = call.message.sender ?? ""
        switch method {
        case "ReadValue":
            count("readCalls")
            guard let options = OperationOptions(call.message.body[0]) else { return call.fail(BlueZError.invalidArguments()) }
            guard device.isConnected else { return call.fail(BlueZError.notConnectedGATT) }
            guard !characteristic.reading else { return call.fail(BlueZError.inProgress) }
            guard characteristic.flags.contains("read") else { return call.fail(BlueZError.readNotPermitted) }
            devices[devicePath]?.gatt?[path]?.reading = true
            let (hold, module, role, stored, attempt) = (configuration.timing.operationHold, modules[device.module].module,
                                                         characteristic.role, characteristic.value, device.attempt)
            Task { [weak self] in
                try? await Task.sleep(for: hold)
                let value = role == .batteryLevel ? [await module.moduleBattery] : stored
                await self?.perform { $0.finishRead(call, devicePath, path, attempt, value, offset: options.offset) }
            }
        case "WriteValue":
            await write(call, devicePath, path, value: call.message.body[0].bytesValue ?? [], options: call.message.body[1])
        case "StartNotify":
            guard characteristic.canNotify else { return call.fail(BlueZError.notSupported) }
            guard !characteristic.notifySessions.contains(client) else { return call.reply() }
            guard !characteristic.needsPairing || device.paired else { return call.fail(BlueZError.notPaired) }
            devices[devicePath]?.gatt?[path]?.notifySessions.insert(client)
            update(path, InterfaceSpec.gattCharacteristic.name, ["Notifying": .bool(true)])
            call.reply()
        default:
            guard devices[devicePath]?.gatt?[path]?.notifySessions.remove(client) != nil else {
                return call.fail(BlueZError.failed("No notify session started"))
            }
            notifySessionsChanged(devicePath, path)
            call.reply()
        }
    }

    private func finishRead(_ call: DBusIncomingCall, _ devicePath: String, _ path: String, _ attempt: Int, _ value: [UInt8], offset: Int) {
        guard devices[devicePath]?.attempt == attempt, devices[devicePath]?.gatt?[path] != nil else {
            return call.fail(BlueZError.notConnectedGATT)
        }
        devices[devicePath]?.gatt?[path]?.reading = false
        guard offset <= value.count else { return call.fail(BlueZError.invalidOffset) }
        devices[devicePath]?.gatt?[path]?.value = value
        update(path, InterfaceSpec.gattCharacteristic.name, ["Value": .bytes(value)])
        call.reply([.bytes(Array(value[offset...]))])
    }

    /// `WriteValue`: the write type is chosen as BlueZ 5.66 does; every accepted write to Command
    /// is one packet to the module, in the order the calls arrived.
    private func write(_ call: DBusIncomingCall, _ devicePath: String, _ path: String, value: [UInt8], options: DBusValue) async {
        count("writeCalls")
        guard let device = devices[devicePath], let characteristic = device.gatt?[path] else { return call.fail(BlueZError.notConnectedGATT) }
        guard let options = OperationOptions(options) else { return call.fail(BlueZError.invalidArguments()) }
        guard let active = device.activeLink else { return call.fail(BlueZError.notConnectedGATT) }
        guard !characteristic.writing else { return call.fail(BlueZError.inProgress) }
        let request: Bool
        switch options.type {
        case nil where characteristic.flags.contains("write"): request = true
        case nil where characteristic.flags.contains("write-without-response"): request = false
        case "request" where characteristic.flags.contains("write"): request = true
        // BlueZ sends the request anyway; the module answers Write Not Permitted.
        case "request": return call.fail(BlueZError.writeNotPermitted)
        case "command" where characteristic.flags.contains("write-without-response"): request = false
        default: return call.fail(BlueZError.notSupported)
        }
        guard !characteristic.needsPairing || device.paired else { return call.fail(BlueZError.notPaired) }
        let limit = configuration.mtu - 3
        // A long write (Prepare Write) is not something the module supports.
        if request, options.offset != 0 || value.count > limit { return call.fail(BlueZError.notSupported) }
        if !request, options.offset != 0 { return call.fail(BlueZError.notSupported) }
        if !request, value.count > limit { return call.fail(BlueZError.failed("Failed to initiate write")) }
        if request { devices[devicePath]?.gatt?[path]?.writing = true }
        do {
            try await active.transport.send([value])
            count("writes")
            logWrite(value, module: device.address, received: call.receivedNanoseconds)
        } catch {
            if request { devices[devicePath]?.gatt?[path]?.writing = false }
            return call.fail(BlueZError.notConnectedGATT)
        }
        guard request else { return call.reply() }
        let attempt = device.attempt
        schedule(after: configuration.timing.operationHold) { fake in
            guard fake.devices[devicePath]?.attempt == attempt, fake.devices[devicePath]?.gatt?[path] != nil else {
                return call.fail(BlueZError.notConnectedGATT)
            }
            fake.devices[devicePath]?.gatt?[path]?.writing = false
            call.reply()
        }
    }

    /// A packet from the module: a `Value` change on Event while anyone has a notify session.
    func notified(_ devicePath: String, _ attempt: Int, _ packet: [UInt8]) {
        guard devices[devicePath]?.attempt == attempt, let database = devices[devicePath]?.gatt, let event = database.eventPath,
              database[event]?.notifySessions.isEmpty == false else { return }
        count("notifications")
        devices[devicePath]?.gatt?[event]?.value = packet
        update(event, InterfaceSpec.gattCharacteristic.name, ["Value": .bytes(packet)], announceAll: true)
    }

    private func notifySessionsChanged(_ devicePath: String, _ path: String) {
        guard let characteristic = devices[devicePath]?.gatt?[path] else { return }
        update(path, InterfaceSpec.gattCharacteristic.name, ["Notifying": .bool(!characteristic.notifySessions.isEmpty)])
    }

    func endNotifySessions(of client: String) {
        for (devicePath, device) in devices {
            for characteristic in device.gatt?.characteristics ?? [] where characteristic.notifySessions.contains(client) {
                devices[devicePath]?.gatt?[characteristic.path]?.notifySessions.remove(client)
                notifySessionsChanged(devicePath, characteristic.path)
            }
        }
    }
}
