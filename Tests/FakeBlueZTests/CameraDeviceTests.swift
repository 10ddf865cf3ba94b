import CameraProtocols
import DBus
@testable import FakeBlueZ
import Foundation
import GATT
import SimulatedCameras
import Testing
import UnleashedProtocol
import UnleashedTestSupport

@Suite("Simulated cameras on the fake org.bluez", .timeLimit(.minutes(1)))
struct CameraDeviceTests {
    typealias Rig = FakeBlueZRig
    typealias Body = TestCameraBody
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let device = "org.bluez.Device1"

    /// A fake with one camera (this body) and no module.
    static func rig(requiresBond: Bool = false, _ configure: @escaping (inout FakeBlueZ.Configuration) -> Void = { _ in }) async throws -> Rig {
        try await Rig {
            $0.modules = 0
            $0.cameras = [Body.source(requiresBond: requiresBond)]
            configure(&$0)
        }
    }

    static func discover(_ rig: Rig) async throws {
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await rig.signals.wait(for: .interfacesAdded(Body.path()))
    }

    static func connect(_ rig: Rig) async throws {
        try await discover(rig)
        try await rig.call(Body.path(), device, "Connect")
        try await rig.signals.wait(for: .changed(Body.path(), "ServicesResolved", .bool(true)))
    }

    static func body(_ rig: Rig) async throws -> TestCameraBody {
        try #require(await rig.fake.camera(address: SimulatedCameraCatalog.address(index: 0)) as? TestCameraBody)
    }

    static func write(_ rig: Rig, _ value: [UInt8], type: String = "request") async -> DBusError? {
        await rig.outcome(Body.commandPath(), "WriteValue", [.bytes(value), Rig.options(["type": .string(type)])])
    }

    @Test("a camera's device object shows its advertisement: name, manufacturer and service data, UUIDs, RSSI")
    func advertisement() async throws {
        let rig = try await Self.rig()
        try await Self.discover(rig)
        let objects = try await rig.managedObjects()
        let device = try #require(objects[Body.path()]?[Self.device]?.dictionaryValue)
        #expect(device["Address"]?.unwrapped == .string(SimulatedCameraCatalog.address(index: 0)))
        #expect(device["Name"]?.unwrapped == .string(Body.name))
        #expect(device["Alias"]?.unwrapped == .string(Body.name))
        #expect(device["RSSI"]?.unwrapped.signature == "n")
        #expect(device["UUIDs"]?.unwrapped == .strings([BluetoothUUID.normalized("fea6")]))
        let manufacturer = try #require(device["ManufacturerData"]?.unwrapped)
        #expect(manufacturer.signature == "a{qv}")
        #expect(manufacturer.integerKeyedDictionaryValue?[Int(Body.companyIdentifier)]?.bytesValue == [0x00])
        let service = try #require(device["ServiceData"]?.unwrapped)
        #expect(service.signature == "a{sv}")
        #expect(service.dictionaryValue?[BluetoothUUID.normalized("fea6")]?.bytesValue == [0x42, 0x01])
        #expect(try await rig.control("Cameras").first == .strings([SimulatedCameraCatalog.address(index: 0)]))

        // Pairing mode and the remote setting show at once, not at the next advertisement.
        try await rig.control("SetCameraPairing", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(true)])
        let opened = DBusValue.array(element: "{qv}", [.dictEntry(.uint16(Body.companyIdentifier), .variant(.bytes([0x01])))])
        try await rig.signals.wait(for: .changed(Body.path(), "ManufacturerData", opened))
        try await rig.control("SetCameraRemote", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(false)])
        let remoteOff = DBusValue.array(element: "{sv}", [.dictEntry(.string(BluetoothUUID.normalized("fea6")), .variant(.bytes([0x42, 0x00])))])
        try await rig.signals.wait(for: .changed(Body.path(), "ServiceData", remoteOff))
        let unknown = await #expect(throws: DBusError.self) {
            try await rig.control("SetCameraAsleep", [.string("00:00:00:00:00:00"), .bool(true)])
        }
        #expect(unknown?.name == "org.unleashed.Simulator.Error.UnknownCamera")
        await rig.stop()
    }

    @Test("asleep, a camera stops advertising (no RSSI) and Connect fails as BlueZ's abort-by-local, Connected going true then false; awake, it connects")
    func sleepAndWake() async throws {
        let rig = try await Self.rig()
        try await Self.discover(rig)
        try await rig.control("SetCameraAsleep", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(true)])
        try await rig.signals.wait(for: .invalidated(Body.path(), "RSSI"))
        let mark = rig.signals.all.count
        let failed = await rig.failure(Body.path(), Self.device, "Connect")
        #expect(failed == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(await rig.fake.statistics["pageTimeouts"] == 1, "the attempt ran to the page timeout")
        let up = try await rig.signals.wait(for: .changed(Body.path(), "Connected", .bool(true)), from: mark)
        try await rig.signals.wait(for: .changed(Body.path(), "Connected", .bool(false)), from: up)
        // Still asleep: no round of advertisements brings the RSSI back.
        let rounds = await rig.fake.statistics["advertisingRounds"] ?? 0
        try #require(await eventually { (await rig.fake.statistics["advertisingRounds"] ?? 0) >= rounds + 2 })
        #expect(try await rig.managedObjects()[Body.path()]?[Self.device]?.dictionaryValue?["RSSI"] == nil)

        try await rig.control("SetCameraAsleep", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(false)])
        try await rig.signals.wait(for: .changed(Body.path(), "RSSI"), from: mark)
        try await rig.call(Body.path(), Self.device, "Connect")
        try await rig.signals.wait(for: .changed(Body.path(), "ServicesResolved", .bool(true)))
        await rig.stop()
    }

    @Test("after Connect the body's services are GATT objects; a write reaches the body and its notification comes back as Value")
    func servicesWriteAndNotify() async throws {
        let rig = try await Self.rig()
        try await Self.connect(rig)
        let objects = try await rig.managedObjects()
        let service = try #require(objects[Body.path() + "/service000a"]?["org.bluez.GattService1"]?.dictionaryValue)
        #expect(service["UUID"]?.unwrapped == .string(Body.service))
        #expect(service["Primary"]?.unwrapped == .bool(true))
        let command = try #require(objects[Body.commandPath()]?[Self.characteristic]?.dictionaryValue)
        #expect(command["UUID"]?.unwrapped == .string(Body.command.characteristic))
        #expect(command["Flags"]?.unwrapped == .strings(["write", "write-without-response"]))
        #expect(command["WriteAcquired"]?.unwrapped == .bool(false))
        #expect(command["NotifyAcquired"] == nil)
        let status = try #require(objects[Body.statusPath()]?[Self.characteristic]?.dictionaryValue)
        #expect(status["Flags"]?.unwrapped == .strings(["notify"]))
        #expect(status["NotifyAcquired"]?.unwrapped == .bool(false))
        #expect(status["Notifying"]?.unwrapped == .bool(false))
        let uuids = try #require(try await rig.property(Body.path(), Self.device, "UUIDs")?.stringArrayValue)
        #expect(uuids.contains(Body.service))

        try await rig.call(Body.statusPath(), Self.characteristic, "StartNotify")
        let mark = rig.signals.all.count
        #expect(await Self.write(rig, [0x01, 0x02]) == nil)
        try await rig.signals.wait(for: .changed(Body.statusPath(), "Value", .bytes([0xAC, 0x01, 0x02])), from: mark)
        #expect(await Self.write(rig, [0x03], type: "command") == nil)
        try await rig.signals.wait(for: .changed(Body.statusPath(), "Value", .bytes([0xAC, 0x03])), from: mark)
        #expect(try await Self.body(rig).written == [[0x01, 0x02], [0x03]])
        #expect(try await rig.control("CameraPictures", [.string(SimulatedCameraCatalog.address(index: 0))]).first == .uint32(1))
        let read = try await rig.call(Body.infoPath(), Self.characteristic, "ReadValue", [Rig.options([:])])
        #expect(read.first == .bytes(Array("v1".utf8)))
        await rig.stop()
    }

    @Test("ATT errors from the body are answered as BlueZ's create_gatt_dbus_error maps them; a command's refusal is not")
    func attErrors() async throws {
        let rig = try await Self.rig()
        try await Self.connect(rig)
        let cases: [(UInt8, DBusError)] = [
            (0x05, DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")),
            (0x0F, DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")),
            (0x0C, DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")),
            (0x03, DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")),
            (0x06, DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")),
            (0x08, DBusError(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")),
            (0x0D, DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length")),
            (0x0E, DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")),
            (0x90, DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x90")),
        ]
        for (code, expected) in cases {
            #expect(await Self.write(rig, [0xE0, code]) == expected, "ATT error \(code)")
        }
        #expect(await Self.write(rig, [0xE0, 0x90], type: "command") == nil)
        try await rig.control("SetCameraRemote", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(false)])
        #expect(await Self.write(rig, [0x01])
            == DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x90"))
        let unreadable = await rig.failure(Body.commandPath(), Self.characteristic, "ReadValue", [Rig.options([:])])
        #expect(unreadable == DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"))
        #expect(try await Self.body(rig).written.isEmpty)
        await rig.stop()
    }

    @Test("a camera that drops the link (falls asleep) ends the connection as BlueZ reports a link loss")
    func dropLink() async throws {
        let rig = try await Self.rig()
        try await Self.connect(rig)
        try await rig.call(Body.statusPath(), Self.characteristic, "StartNotify")
        let mark = rig.signals.all.count
        try await rig.control("SetCameraAsleep", [.string(SimulatedCameraCatalog.address(index: 0)), .bool(true)])
        let unresolved = try await rig.signals.wait(for: .changed(Body.path(), "ServicesResolved", .bool(false)), from: mark)
        let down = try await rig.signals.wait(for: .changed(Body.path(), "Connected", .bool(false)), from: mark)
        #expect(unresolved < down)
        try await rig.signals.wait(for: .interfacesRemoved(Body.statusPath()), from: down)
        try await rig.signals.wait(for: .interfacesRemoved(Body.path() + "/service000a"), from: down)
        #expect(try await rig.managedObjects()[Body.commandPath()] == nil)
        #expect(await rig.fake.statistics["linkLosses"] == 1)
        await rig.stop()
    }

    @Test("a body that requires a bond refuses its characteristics until paired through the agent's pairing")
    func bondRequired() async throws {
        let rig = try await Self.rig(requiresBond: true)
        try await Self.connect(rig)
        #expect(await Self.write(rig, [0x01]) == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        let notify = await rig.failure(Body.statusPath(), Self.characteristic, "StartNotify")
        #expect(notify == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        try await rig.call(Body.path(), Self.device, "Pair")
        #expect(try await rig.property(Body.path(), Self.device, "Paired") == .bool(true))
        #expect(await Self.write(rig, [0x01]) == nil)
        #expect(try await Self.body(rig).written == [[0x01]])
        await rig.stop()
    }

    @Test("--camera takes any brand from the catalogue, in any case, and refuses an unknown one")
    func brandSources() throws {
        for brand in CameraBrand.allCases {
            let source = try FakeBlueZ.CameraSource.brand(named: brand.rawValue.uppercased())
            #expect(source.name == brand.displayName)
            #expect(source.make(SimulatedCameraCatalog.address(index: 0)).brand == brand)
        }
        #expect(throws: FakeBlueZError.self) { try FakeBlueZ.CameraSource.brand(named: "leica") }
    }

    @Test("unleashed-sim bluez --camera refuses an unknown brand with the brands there are and status 64")
    func unknownCameraBrand() async throws {
        let simulator = try SimulatorProcess(["bluez", "--bus", "unix:path=/nonexistent", "--camera", "leica"])
        #expect(await simulator.exitStatus() == 64)
        #expect(simulator.errors.contains("no camera brand 'leica'; there are: gopro, sony, canon, fujifilm, nikon"))
    }

    @Test("LoseLink and the linkloss fault take a camera out of range as they do a module")
    func cameraLinkLoss() async throws {
        let rig = try await Self.rig { $0.faults.linkLosses = [.init(length: .seconds(30), after: .milliseconds(200))] }
        try await Self.connect(rig)
        try await rig.signals.wait(for: .changed(Body.path(), "Connected", .bool(false)))
        let failed = await rig.failure(Body.path(), Self.device, "Connect")
        #expect(failed == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        await rig.stop()
    }
}
