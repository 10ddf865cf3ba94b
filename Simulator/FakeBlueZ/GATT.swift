import CameraProtocols
import DBus
import GATT
import Glibc
import SimulatedCameras
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// A peripheral's GATT database as BlueZ exports it after service discovery: a module's
/// (PROTOCOL.md §1: the Unleashed service, Battery and Device Information, at fixed attribute
/// handles), or the services a camera's body declares.
struct GATTDatabase {
    /// What a characteristic is for, which decides where its value comes from and goes.
    enum Role: Equatable {
        case command, event, info, batteryLevel, deviceInformation
        /// One of a camera's: reads and writes go to its body.
        case camera(GATTCharacteristicID)
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
        /// Whether it may be used only over a bonded link: a module's Command and Event
        /// (PROTOCOL.md §1), every characteristic of a camera that requires a bond.
        let needsPairing: Bool
        /// Unique names of the clients with a notify session.
        var notifySessions: Set<String> = []
        var reading = false
        var writing = false
        /// The socket `AcquireWrite` handed out, while the client keeps it open.
        var writeSocket: AcquiredSocket?
        /// The socket `AcquireNotify` handed out, while the client keeps it open.
        var notifySocket: AcquiredSocket?

        var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
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
        BluetoothUUID.normalized(text)
    }

    init(device: String, module: SimulatedModule) {
        let layout = UnleashedV1.gattLayout
        func servicePath(_ handle: UInt16) -> String { device + "/service" + Self.handleText(handle) }
        func characteristic(_ service: UInt16, _ handle: UInt16, _ uuid: String, _ flags: [String], _ role: Role,
                            _ value: [UInt8] = []) -> Characteristic {
            Characteristic(path: servicePath(service) + "/char" + Self.handleText(handle), uuid: uuid, handle: handle,
                           servicePath: servicePath(service), flags: flags, role: role, value: value,
                           needsPairing: role == .command || role == .event)
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

    /// A camera's database: its body's services in order, handles counted from `0x000a` as a
    /// peripheral lays them out (a declaration and a value for each characteristic, and a
    /// client configuration descriptor for one that notifies or indicates).
    init(device: String, camera services: [GATTServiceLayout], requiresBond: Bool) {
        var handle: UInt16 = 0x000A
        var exported: [Service] = []
        var characteristics: [Characteristic] = []
        for service in services {
            let servicePath = device + "/service" + Self.handleText(handle)
            exported.append(Service(path: servicePath, uuid: service.uuid, handle: handle))
            handle += 1
            for layout in service.characteristics {
                let role = Role.camera(GATTCharacteristicID(service: service.uuid, characteristic: layout.uuid))
                let characteristic = Characteristic(path: servicePath + "/char" + Self.handleText(handle), uuid: layout.uuid, handle: handle,
                                                    servicePath: servicePath, flags: layout.flags, role: role, value: [],
                                                    needsPairing: requiresBond)
                handle += characteristic.canNotify ? 3 : 2
                characteristics.append(characteristic)
            }
        }
        self.services = exported
        self.characteristics = characteristics
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

    /// The path of a camera's characteristic.
    func path(of characteristic: GATTCharacteristicID) -> String? {
        characteristics.first { $0.role == .camera(characteristic) }?.path
    }

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
        // BlueZ has these only where the flags allow the acquiring method (gatt-client.c).
        if characteristic.flags.contains("write-without-response") { properties["WriteAcquired"] = .bool(characteristic.writeSocket != nil) }
        if characteristic.flags.contains("notify") { properties["NotifyAcquired"] = .bool(characteristic.notifySocket != nil) }
        return properties
    }

    /// Services resolved: the GATT objects appear, then `UUIDs` and `ServicesResolved` change.
    func resolveServices(_ path: String, _ attempt: Int) {
        guard let device = devices[path], device.attempt == attempt, device.isConnected, device.gatt == nil else { return }
        let database = switch device.peer {
        case .module(let index): GATTDatabase(device: path, module: modules[index])
        case .camera(let index): GATTDatabase(device: path, camera: cameras[index].body.services, requiresBond: cameras[index].body.requiresBond)
        }
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
    func devicePath(ofGATTObject path: String) -> String? {
        path.range(of: "/service").map { String(path[..<$0.lowerBound]) }
    }

    func handleCharacteristic(_ call: DBusIncomingCall, _ path: String, _ method: String) async {
        if let devicePath = devicePath(ofGATTObject: path) { releaseClosedSockets(devicePath, path) }
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
            guard !characteristic.needsPairing || device.paired else { return call.fail(BlueZError.notPaired) }
            devices[devicePath]?.gatt?[path]?.reading = true
            let (hold, role, stored, attempt) = (configuration.timing.operationHold, characteristic.role, characteristic.value, device.attempt)
            let (module, camera) = peers(of: device)
            Task { [weak self] in
                try? await Task.sleep(for: hold)
                let outcome: Result<[UInt8], ATTError>
                switch role {
                case .batteryLevel: outcome = .success([await module?.moduleBattery ?? 0])
                case .camera(let id):
                    do throws(ATTError) {
                        outcome = .success(try await camera?.read(id) ?? [])
                    } catch {
                        outcome = .failure(error)
                    }
                default: outcome = .success(stored)
                }
                await self?.perform { $0.finishRead(call, devicePath, path, attempt, outcome, offset: options.offset) }
            }
        case "WriteValue":
            await write(call, devicePath, path, value: call.message.body[0].bytesValue ?? [], options: call.message.body[1])
        case "StartNotify":
            guard characteristic.notifySocket == nil else { return call.fail(BlueZError.notifyAcquired) }
            guard characteristic.canNotify else { return call.fail(BlueZError.notSupported) }
            guard !characteristic.notifySessions.contains(client) else { return call.reply() }
            guard !characteristic.needsPairing || device.paired else { return call.fail(BlueZError.notPaired) }
            devices[devicePath]?.gatt?[path]?.notifySessions.insert(client)
            update(path, InterfaceSpec.gattCharacteristic.name, ["Notifying": .bool(true)])
            call.reply()
        case "AcquireWrite", "AcquireNotify":
            acquire(call, devicePath, path, write: method == "AcquireWrite")
        default:
            if let socket = characteristic.notifySocket {
                // BlueZ ends an acquired notify the same way.
                releaseSocket(devicePath, path, socket)
                return call.reply()
            }
            guard devices[devicePath]?.gatt?[path]?.notifySessions.remove(client) != nil else {
                return call.fail(BlueZError.failed("No notify session started"))
            }
            notifySessionsChanged(devicePath, path)
            call.reply()
        }
    }

    /// The module or the camera body behind a device.
    func peers(of device: Device) -> (VirtualModule?, (any SimulatedCameraBody)?) {
        switch device.peer {
        case .module(let index): (modules[index].module, nil)
        case .camera(let index): (nil, cameras[index].body)
        }
    }

    private func finishRead(_ call: DBusIncomingCall, _ devicePath: String, _ path: String, _ attempt: Int,
                            _ outcome: Result<[UInt8], ATTError>, offset: Int) {
        guard devices[devicePath]?.attempt == attempt, devices[devicePath]?.gatt?[path] != nil else {
            return call.fail(BlueZError.notConnectedGATT)
        }
        devices[devicePath]?.gatt?[path]?.reading = false
        let value: [UInt8]
        switch outcome {
        case .success(let read): value = read
        case .failure(let error): return call.fail(BlueZError.att(error))
        }
        guard offset <= value.count else { return call.fail(BlueZError.invalidOffset) }
        devices[devicePath]?.gatt?[path]?.value = value
        update(path, InterfaceSpec.gattCharacteristic.name, ["Value": .bytes(value)])
        call.reply([.bytes(Array(value[offset...]))])
    }

    /// `WriteValue`: the write type is chosen as BlueZ 5.66 does; every accepted write to a
    /// module's Command is one packet to the module, and every write to a camera's characteristic
    /// one call of its body, in the order the calls arrived.
    private func write(_ call: DBusIncomingCall, _ devicePath: String, _ path: String, value: [UInt8], options: DBusValue) async {
        count("writeCalls")
        guard let device = devices[devicePath], let characteristic = device.gatt?[path] else { return call.fail(BlueZError.notConnectedGATT) }
        guard characteristic.writeSocket == nil else { return call.fail(BlueZError.writeAcquired) }
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
        let refusal: ATTError?
        switch active {
        case .module(let transport):
            do {
                try await transport.send([value])
                count("writes")
                logWrite(value, module: device.address, received: call.receivedNanoseconds)
                refusal = nil
            } catch {
                if request { devices[devicePath]?.gatt?[path]?.writing = false }
                return call.fail(BlueZError.notConnectedGATT)
            }
        case .camera(let body, _):
            guard case .camera(let id) = characteristic.role else { return call.fail(BlueZError.notConnectedGATT) }
            count("writes")
            logWrite(value, module: device.address, received: call.receivedNanoseconds)
            do throws(ATTError) {
                try await body.write(value, to: id)
                refusal = nil
            } catch {
                refusal = error
            }
        }
        // A command has no response: the peripheral's refusal never reaches the client.
        guard request else { return call.reply() }
        let attempt = device.attempt
        schedule(after: configuration.timing.operationHold) { fake in
            guard fake.devices[devicePath]?.attempt == attempt, fake.devices[devicePath]?.gatt?[path] != nil else {
                return call.fail(BlueZError.notConnectedGATT)
            }
            fake.devices[devicePath]?.gatt?[path]?.writing = false
            if let refusal { return call.fail(BlueZError.att(refusal)) }
            call.reply()
        }
    }

    /// A packet from the module: a notification on Event.
    func notified(_ devicePath: String, _ attempt: Int, _ packet: [UInt8]) {
        guard devices[devicePath]?.attempt == attempt, let event = devices[devicePath]?.gatt?.eventPath else { return }
        deliverNotification(devicePath, event, packet)
    }

    /// A notification or indication from a camera's body.
    func cameraNotified(_ devicePath: String, _ attempt: Int, _ characteristic: GATTCharacteristicID, _ value: [UInt8]) {
        guard devices[devicePath]?.attempt == attempt, let path = devices[devicePath]?.gatt?.path(of: characteristic) else { return }
        deliverNotification(devicePath, path, value)
    }

    /// Hands a notification to whoever listens: the `AcquireNotify` socket, which leaves `Value`
    /// alone, else a `Value` change while anyone has a notify session.
    func deliverNotification(_ devicePath: String, _ path: String, _ value: [UInt8]) {
        guard let characteristic = devices[devicePath]?.gatt?[path] else { return }
        if let socket = characteristic.notifySocket {
            count("notifications")
            socket.send(value)
            return
        }
        guard !characteristic.notifySessions.isEmpty else { return }
        count("notifications")
        devices[devicePath]?.gatt?[path]?.value = value
        update(path, InterfaceSpec.gattCharacteristic.name, ["Value": .bytes(value)], announceAll: true)
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
