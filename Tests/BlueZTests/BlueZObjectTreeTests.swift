import BlueZ
import DBus
import Testing
import UnleashedProtocol

/// The object mirror as a plain value: signals in, state out.
@Suite("BlueZ object tree")
struct BlueZObjectTreeTests {
    let device = "/org/bluez/hci0/dev_F0_5E_D0_00_00_01"

    func signal(_ interface: String, _ member: String, path: String = "/", _ body: [DBusValue]) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, sender: ":1.1", body: body)
    }

    func added(_ path: String, _ interface: String, _ properties: [String: DBusValue]) -> DBusMessage {
        signal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded",
               [.objectPath(path), .array(element: "{sa{sv}}", [.dictEntry(.string(interface), .properties(properties))])])
    }

    func changed(_ path: String, _ interface: String, _ properties: [String: DBusValue], invalidated: [String] = []) -> DBusMessage {
        signal("org.freedesktop.DBus.Properties", "PropertiesChanged", path: path,
               [.string(interface), .properties(properties), .strings(invalidated)])
    }

    @Test("objects come and go with InterfacesAdded and InterfacesRemoved; properties follow PropertiesChanged")
    func followsSignals() {
        var tree = BlueZObjectTree()
        tree.load(.array(element: "{oa{sa{sv}}}", [.dictEntry(.objectPath("/org/bluez/hci0"), .array(element: "{sa{sv}}", [
            .dictEntry(.string("org.bluez.Adapter1"), .properties(["Address": .string("00:11:22:33:44:55"), "Powered": .bool(true)])),
        ]))]))
        #expect(tree.adapters.map(\.name) == ["hci0"])
        #expect(tree.adapters.first?.powered == true)

        tree.apply(added(device, "org.bluez.Device1", [
            "Address": .string("F0:5E:D0:00:00:01"), "Adapter": .objectPath("/org/bluez/hci0"), "RSSI": .int16(-40),
            "ManufacturerData": .array(element: "{qv}", [.dictEntry(.uint16(0x03EF), .variant(.bytes([1, 2, 0b1_1011])))]),
        ]))
        let found = tree.devices(on: "/org/bluez/hci0")
        #expect(found.map(\.address) == ["F0:5E:D0:00:00:01"])
        #expect(found.first?.advertisement?.modelName == "Canon")
        #expect(found.first?.advertisement?.state.contains(.cameraOn) == true)
        #expect(found.first?.advertisement?.state.contains(.pairingOpen) == false)
        #expect(found.first?.advertisement?.state.contains(.batteryLow) == true)

        // Discovery stopped: BlueZ invalidates RSSI rather than sending a value.
        tree.apply(changed(device, "org.bluez.Device1", ["Connected": .bool(true)], invalidated: ["RSSI"]))
        #expect(tree.device(at: device)?.connected == true)
        #expect(tree.device(at: device)?.rssi == nil)

        tree.apply(signal("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", [.objectPath(device), .strings(["org.bluez.Device1"])]))
        #expect(tree.device(at: device) == nil)
        #expect(tree.devices(on: "/org/bluez/hci0").isEmpty)
    }

    @Test("characteristics are found by UUID under the right service and device, never by handle")
    func characteristicsByUUID() {
        var tree = BlueZObjectTree()
        let other = "/org/bluez/hci0/dev_F0_5E_D0_00_00_02"
        for (owner, handle) in [(device, "0010"), (other, "0020")] {
            tree.apply(added("\(owner)/service\(handle)", "org.bluez.GattService1", ["UUID": .string("7A4E0001-X"), "Device": .objectPath(owner)]))
            tree.apply(added("\(owner)/service\(handle)/char0011", "org.bluez.GattCharacteristic1",
                             ["UUID": .string("7a4e0002-x"), "Service": .objectPath("\(owner)/service\(handle)")]))
        }
        #expect(tree.characteristic("7a4e0002-X", service: "7a4e0001-x", device: other) == "\(other)/service0020/char0011")
        #expect(tree.characteristic("7a4e0003-x", service: "7a4e0001-x", device: other) == nil)
        #expect(tree.hasService("7a4e0001-x", device: device))
    }

    @Test("malformed signals and unknown advertisement formats are ignored, not misread")
    func malformed() {
        var tree = BlueZObjectTree()
        let addedNothing = tree.apply(signal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded", [.string("no dictionary")]))
        let changedNothing = tree.apply(changed(device, "org.bluez.Device1", ["Connected": .bool(true)]))
        #expect(!addedNothing && !changedNothing)
        #expect(tree.objects.isEmpty)
        #expect(ModuleAdvertisement(manufacturerData: [2, 1, 0]) == nil)
        #expect(ModuleAdvertisement(manufacturerData: [1]) == nil)
    }
}
