import DBus
import Foundation
import UnleashedProtocol
import UnleashedTestSupport

/// python-dbusmock's `bluez5` template (an emulation of BlueZ written by others), run by Debian's
/// own python3 on a private bus, with the Unleashed GATT objects added through its Mock
/// interface, since the template has none.
final class MockBlueZ: Sendable {
    let bus: PrivateBus
    let control: DBusConnection
    private let process: Process

    static let python = "/usr/bin/python3"
    static let address = "F0:5E:D0:00:00:11"
    static let devicePath = "/org/bluez/hci0/dev_F0_5E_D0_00_00_11"
    static let servicePath = devicePath + "/service000a"
    static let commandPath = servicePath + "/char000b"
    static let eventPath = servicePath + "/char000d"

    init() async throws {
        bus = try await PrivateBus()
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-m", "dbusmock", "--system", "-t", "bluez5"]
        process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus.address]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        control = try await DBusConnection.open(.address(bus.address))
        // The mock's name on the bus is the sign it is up (a NameOwnerChanged match would race its start).
        let named = try await eventually(every: .milliseconds(50)) {
            try await control.nameOwner("org.bluez") != nil || !process.isRunning
        }
        guard named, try await control.nameOwner("org.bluez") != nil else {
            throw FixtureError("python-dbusmock's bluez5 template did not start: scripts/setup installs python3-dbusmock for \(Self.python)")
        }
        _ = try await mock("AddAdapter", [.string("hci0"), .string("unleashed-test")])
    }

    deinit {
        control.close()
        kill(process.processIdentifier, SIGKILL)
    }

    /// Calls a method of the template's `org.bluez.Mock` interface.
    func mock(_ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await control.call("org.bluez", path: "/", interface: "org.bluez.Mock", member: member, body)
    }

    /// Calls a method of dbusmock's generic `org.freedesktop.DBus.Mock` interface on `path`.
    @discardableResult
    func dbusMock(_ path: String, _ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await control.call("org.bluez", path: path, interface: "org.freedesktop.DBus.Mock", member: member, body)
    }

    func updateProperties(_ path: String, _ interface: String, _ properties: [String: DBusValue]) async throws {
        try await dbusMock(path, "UpdateProperties", [.string(interface), .properties(properties)])
    }

    /// Replaces (or adds) a method with Python code, as dbusmock runs it.
    func addMethod(_ path: String, _ interface: String, _ name: String, in inSignature: String = "", out: String = "", _ code: String) async throws {
        try await dbusMock(path, "AddMethod", [.string(interface), .string(name), .string(inSignature), .string(out), .string(code)])
    }

    /// The arguments of every call of `method` on `path` so far.
    func calls(_ path: String, _ method: String) async throws -> [[DBusValue]] {
        let reply = try await dbusMock(path, "GetMethodCalls", [.string(method)])
        return (reply.first?.arrayValue ?? []).compactMap { call in
            guard case .structure(let fields) = call, fields.count == 2 else { return nil }
            return fields[1].arrayValue?.map(\.unwrapped)
        }
    }

    /// A module as a scan would find it: its advertised service and manufacturer data, and the
    /// Unleashed GATT service with Command and Event. `Connect` also resolves services, which the
    /// template's own `Connect` does not.
    func addModule(name: String = "Unleashed 0011") async throws {
        _ = try await mock("AddDevice", [.string("hci0"), .string(Self.address), .string(name)])
        let gatt = UnleashedV1.gattLayout
        try await updateProperties(Self.devicePath, "org.bluez.Device1", ["UUIDs": .strings([gatt.service]), "RSSI": .int16(-52)])
        // The template's UpdateProperties cannot wrap a dictionary; Properties.Set can.
        _ = try await control.call("org.bluez", path: Self.devicePath, interface: "org.freedesktop.DBus.Properties", member: "Set", [
            .string("org.bluez.Device1"), .string("ManufacturerData"),
            .variant(.array(element: "{qv}", [.dictEntry(.uint16(0x03EF), .variant(.bytes([0x01, 0xF0, 0x07])))])),
        ])
        try await addObject(Self.servicePath, "org.bluez.GattService1", [
            "UUID": .string(gatt.service), "Primary": .bool(true), "Device": .objectPath(Self.devicePath), "Handle": .uint16(10),
        ])
        let notifyCode = "self.UpdateProperties('org.bluez.GattCharacteristic1', {'Notifying': dbus.Boolean(%@)})"
        try await addObject(Self.commandPath, "org.bluez.GattCharacteristic1", characteristic(gatt.command, ["write", "write-without-response"], 11),
                            methods: [("WriteValue", "aya{sv}", "", "pass")])
        try await addObject(Self.eventPath, "org.bluez.GattCharacteristic1", characteristic(gatt.event, ["notify"], 13), methods: [
            ("StartNotify", "", "", notifyCode.replacingOccurrences(of: "%@", with: "True")),
            ("StopNotify", "", "", notifyCode.replacingOccurrences(of: "%@", with: "False")),
        ])
        try await connectResolves(failingFirst: 0)
    }

    /// Makes `Connect` fail with BlueZ's abort error the first `failures` times, then connect and
    /// resolve services.
    func connectResolves(failingFirst failures: Int) async throws {
        try await addMethod(Self.devicePath, "org.bluez.Device1", "Connect", """
            self.attempts = getattr(self, 'attempts', 0) + 1
            if self.attempts <= \(failures):
                raise dbus.exceptions.DBusException('le-connection-abort-by-local', name='org.bluez.Error.Failed')
            self.UpdateProperties('org.bluez.Device1', {'Connected': dbus.Boolean(True), 'ServicesResolved': dbus.Boolean(True)})
            """)
    }

    private func characteristic(_ uuid: String, _ flags: [String], _ handle: UInt16) -> [String: DBusValue] {
        ["UUID": .string(uuid), "Service": .objectPath(Self.servicePath), "Flags": .strings(flags), "Value": .bytes([]),
         "Notifying": .bool(false), "MTU": .uint16(247), "Handle": .uint16(handle)]
    }

    private func addObject(_ path: String, _ interface: String, _ properties: [String: DBusValue],
                           methods: [(String, String, String, String)] = []) async throws {
        try await dbusMock("/", "AddObject", [
            .string(path), .string(interface), .properties(properties),
            .array(element: "(ssss)", methods.map { .structure([.string($0.0), .string($0.1), .string($0.2), .string($0.3)]) }),
        ])
        // AddObject does not announce the object; BlueZ would.
        try await dbusMock("/", "EmitSignal", [
            .string("org.freedesktop.DBus.ObjectManager"), .string("InterfacesAdded"), .signature("oa{sa{sv}}"),
            .array(element: "v", [.variant(.objectPath(path)),
                                  .variant(.array(element: "{sa{sv}}", [.dictEntry(.string(interface), .properties(properties))]))]),
        ])
    }
}
