import CameraProtocols
import DBus
@testable import FakeBlueZ
import GATT
import SimulatedCameras
import Testing
import UnleashedTestSupport

/// Each brand's simulated body, served by the fake bluetoothd, shows its brand's whole published
/// GATT table (the services and characteristics, with their flags, that the sources cited in
/// `Sources/CameraProtocols` list) and answers reads of the characteristics a source gives a
/// value for. The tables are written out here again, so that a row dropped from a codec fails.
@Suite("Published GATT tables on the fake org.bluez", .timeLimit(.minutes(1)))
struct PublishedGATTTableTests {
    typealias Rig = FakeBlueZRig
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let serviceInterface = "org.bluez.GattService1"
    static let device = "org.bluez.Device1"
    static let path = TestCameraBody.path()

    /// One characteristic of a table: its service, its UUID and its flags.
    struct Row: Hashable, CustomStringConvertible {
        let id: GATTCharacteristicID
        let flags: [String]
        var description: String { "\(id.service) \(id.characteristic) \(flags)" }
    }

    static func rows(_ service: String, _ entries: [(String, [String])]) -> [Row] {
        entries.map { Row(id: GATTCharacteristicID(service: BluetoothUUID.normalized(service), characteristic: BluetoothUUID.normalized($0.0)), flags: $0.1) }
    }

    /// What the fake exported after service discovery.
    struct Exported {
        var services: Set<String> = []
        var rows: Set<Row> = []
        var paths: [GATTCharacteristicID: String] = [:]
    }

    /// A fake serving `body` alone; connected, and paired when `pair` says.
    static func rig(pair: Bool, _ body: @escaping @Sendable (String) -> any SimulatedCameraBody) async throws -> Rig {
        let rig = try await Rig {
            $0.modules = 0
            $0.cameras = [FakeBlueZ.CameraSource(name: "camera", body: body)]
        }
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await rig.signals.wait(for: .interfacesAdded(path))
        try await rig.call(path, device, "Connect")
        try await rig.signals.wait(for: .changed(path, "ServicesResolved", .bool(true)))
        if pair {
            try await rig.call(path, device, "Pair")
            #expect(try await rig.property(path, device, "Paired") == .bool(true))
        }
        return rig
    }

    static func exported(_ rig: Rig) async throws -> Exported {
        let objects = try await rig.managedObjects()
        var serviceUUIDs: [String: String] = [:]
        var result = Exported()
        for (objectPath, interfaces) in objects where objectPath.hasPrefix(path + "/") {
            if let service = interfaces[serviceInterface]?.dictionaryValue, case .string(let uuid)? = service["UUID"]?.unwrapped {
                serviceUUIDs[objectPath] = uuid
                result.services.insert(uuid)
            }
        }
        for (objectPath, interfaces) in objects {
            guard let properties = interfaces[characteristicInterface]?.dictionaryValue,
                  case .string(let uuid)? = properties["UUID"]?.unwrapped,
                  case .objectPath(let servicePath)? = properties["Service"]?.unwrapped,
                  let service = serviceUUIDs[servicePath] else { continue }
            let id = GATTCharacteristicID(service: service, characteristic: uuid)
            result.rows.insert(Row(id: id, flags: properties["Flags"]?.unwrapped.stringArrayValue ?? []))
            result.paths[id] = objectPath
        }
        return result
    }

    /// The table on the bus is `expected`, no more and no less; each value in `reads` is what a
    /// read answers, and each characteristic in `refused` is readable in the table but refused.
    static func check(_ rig: Rig, expected: [Row], reads: [GATTCharacteristicID: [UInt8]], refused: [GATTCharacteristicID] = []) async throws {
        let exported = try await exported(rig)
        #expect(exported.services == Set(expected.map(\.id.service)))
        #expect(exported.rows.subtracting(expected).isEmpty, "not in the published table: \(exported.rows.subtracting(expected))")
        #expect(Set(expected).subtracting(exported.rows).isEmpty, "missing: \(Set(expected).subtracting(exported.rows))")
        for (id, value) in reads {
            let objectPath = try #require(exported.paths[id], "\(id) is not on the bus")
            let reply = try await rig.call(objectPath, characteristicInterface, "ReadValue", [Rig.options([:])])
            #expect(reply.first?.bytesValue == value, "\(id)")
        }
        for id in refused {
            let objectPath = try #require(exported.paths[id], "\(id) is not on the bus")
            #expect(await rig.failure(objectPath, characteristicInterface, "ReadValue", [Rig.options([:])])
                == DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"), "\(id)")
        }
    }

    @Test("Sony: remote, location, camera, pairing and Generic Access services; model, firmware and device name read")
    func sony() async throws {
        let rig = try await Self.rig(pair: true) { SonyBody(address: $0, model: "ILCE-7M4", pairingOpen: true, firmwareVersion: "2.01") }
        let expected = Self.rows("8000ff00-ff00-ffff-ffff-ffffffffffff", [("ff01", ["write", "encrypt-write"]), ("ff02", ["notify"])])
            + Self.rows("8000dd00-dd00-ffff-ffff-ffffffffffff", [
                ("dd01", ["notify"]), ("dd11", ["write", "encrypt-write"]), ("dd21", ["read"]),
                ("dd30", ["read", "write", "encrypt-write"]), ("dd31", ["read", "write", "encrypt-write"]),
                ("dd32", ["read"]), ("dd33", ["read"]),
            ])
            + Self.rows("8000cc00-cc00-ffff-ffff-ffffffffffff", [
                ("cc03", ["notify"]), ("cc06", ["read"]), ("cc07", ["read"]), ("cc08", ["write"]),
                ("cc09", ["read", "notify"]), ("cc0a", ["read"]), ("cc0b", ["read"]), ("cc0c", ["read"]),
                ("cc0d", ["read"]), ("cc0e", ["read", "notify"]), ("cc0f", ["read", "notify"]),
                ("cc10", ["read", "notify"]), ("cc12", ["write"]), ("cc13", ["write"]),
                ("cca6", ["read", "notify"]), ("ccab", ["read"]),
            ])
            + Self.rows("8000ee00-ee00-ffff-ffff-ffffffffffff", [("ee01", ["write"]), ("ee04", ["read"])])
            + Self.rows("1800", [("2a00", ["read"])])
        try await Self.check(rig, expected: expected, reads: [
            Sony.modelName: Array("ILCE-7M4".utf8), Sony.firmwareVersion: Array("2.01".utf8),
            Sony.deviceName: Array("ILCE-7M4".utf8), Sony.locationFormat: [0, 0, 0, 0, 0x02],
        ], refused: [Sony.timeCorrection, Sony.areaAdjustment, Sony.battery, Sony.pairingInfo])
        await rig.stop()
    }

    @Test("Canon, remote mode: the BR-E1 service alone, written with or without a response")
    func canonRemote() async throws {
        let rig = try await Self.rig(pair: true) { CanonBody(address: $0, pairingOpen: true) }
        let expected = Self.rows("00050000-0000-1000-0000-d8492fffa821", [
            ("00050002-0000-1000-0000-d8492fffa821", ["write", "write-without-response", "encrypt-write"]),
            ("00050003-0000-1000-0000-d8492fffa821", ["write", "write-without-response", "encrypt-write"]),
        ])
        try await Self.check(rig, expected: expected, reads: [:])
        await rig.stop()
    }

    @Test("Canon, smart-device mode: handshake, Wi-Fi, operation, location and Device Information; an EOS M6's readings")
    func canonSmart() async throws {
        // The camera answers pairing only from its remote screen, so the table is read
        // unpaired and the values from the body.
        let rig = try await Self.rig(pair: false) { CanonSmartBody(address: $0) }
        func canon(_ prefix: String) -> String { prefix + "-0000-1000-0000-d8492fffa821" }
        let expected = Self.rows(canon("00010000"), [
            (canon("00010005"), ["read"]), (canon("00010006"), ["write", "indicate"]),
            (canon("0001000a"), ["write"]), (canon("0001000b"), ["read"]),
        ])
            + Self.rows(canon("00020000"), [
                (canon("00020001"), ["read"]), (canon("00020002"), ["write", "notify"]), (canon("00020003"), ["notify"]),
                (canon("00020004"), ["read"]), (canon("00020005"), ["read"]), (canon("00020006"), ["read"]),
            ])
            + Self.rows(canon("00030000"), [
                (canon("00030001"), ["read"]), (canon("00030002"), ["notify"]), (canon("00030010"), ["write"]),
                (canon("00030011"), ["notify"]), (canon("00030020"), ["write"]), (canon("00030021"), ["notify"]),
                (canon("00030030"), ["write"]), (canon("00030031"), ["notify"]),
            ])
            + Self.rows(canon("00040000"), [(canon("00040002"), ["write"]), (canon("00040003"), ["indicate"])])
            + Self.rows("180a", [("2a29", ["read"]), ("2a24", ["read"]), ("2a26", ["read"]), ("2a28", ["read"])])
        try await Self.check(rig, expected: expected, reads: [:])
        let body = try #require(await rig.fake.camera(address: SimulatedCameraCatalog.address(index: 0)) as? CanonSmartBody)
        #expect(try await body.read(Canon.manufacturerName) == Array("Canon Inc.".utf8) + [0])
        #expect(try await body.read(Canon.modelNumber) == Array("32c5".utf8) + [0])
        #expect(try await body.read(Canon.firmwareRevision) == Array("1.0.0".utf8) + [0])
        #expect(try await body.read(Canon.softwareRevision) == Array("1.0.0".utf8) + [0])
        #expect(try await body.read(Canon.handshakeUnknown) == [0x01])
        #expect(try await body.read(Canon.handshakeFeatures) == [0x07, 0, 0, 0])
        #expect(try await body.read(Canon.wifiUnknown1) == [0x0F, 0, 0, 0])
        #expect(try await body.read(Canon.wifiUnknown2) == [0x09, 0, 0, 0])
        #expect(try await body.read(Canon.operationUnknown) == [0x01, 0x01, 0x01])
        // The access point's name and password are zeros until `0a` asks for them.
        #expect(try await body.read(Canon.wifiSSID) == [UInt8](repeating: 0, count: 20))
        #expect(try await body.read(Canon.wifiPassword) == [UInt8](repeating: 0, count: 8))
        try await body.write([0x0A], to: Canon.wifiControl)
        let ssid = try await body.read(Canon.wifiSSID)
        #expect(ssid.count == 20)
        #expect(String(decoding: ssid.prefix { $0 != 0 }, as: UTF8.self) == "EOSRP-001_Canon0A")
        let password = try await body.read(Canon.wifiPassword)
        #expect(password.count == 8 && password.allSatisfy { (0x30...0x39).contains($0) })
        await #expect(throws: ATTError.writeNotPermitted) { try await body.write([0x01], to: Canon.wifiControl) }
        await #expect(throws: ATTError.readNotPermitted) { try await body.read(Canon.shootingState) }
        await rig.stop()
    }

    static func fujifilmCommon() -> [Row] {
        Self.rows("4c0020fe-f3b6-40de-acc9-77d129067b14", [
            ("a68e3f66-0fcc-4395-8d4c-aa980b5877fa", ["indicate"]), ("bd17ba04-b76b-4892-a545-b73ba1f74dae", ["indicate"]),
            ("f9150137-5d40-4801-a8dc-f7fc5b01da50", ["notify"]), ("ad06c7b7-f41a-46f4-a29a-712055319122", ["notify"]),
            ("049ec406-ef75-4205-a390-08fe209c51f0", ["indicate"]),
        ])
            + Self.rows("6514eb81-4e8f-458d-aa2a-e691336cdfac", [("7fcf49c6-4ff0-4777-a03d-1a79166af7a8", ["write"])])
            + Self.rows("3b46ec2b-48ba-41fd-b1b8-ed860b60d22b", [("0f36ec14-29e5-411a-a1b6-64ee8383f090", ["write"])])
    }

    @Test("Fujifilm, basic firmware: pairing, configuration, shutter and geotag services; nothing to read")
    func fujifilmBasic() async throws {
        let rig = try await Self.rig(pair: false) { FujifilmBody(address: $0) }
        let expected = Self.rows("91f1de68-dff6-466e-8b65-ff13b0f16fb8", [
            ("aba356eb-9633-4e60-b73f-f52516dbd671", ["write"]), ("85b9163e-62d1-49ff-a6f5-054b4630d4a1", ["write"]),
        ]) + Self.fujifilmCommon()
        try await Self.check(rig, expected: expected, reads: [:])
        await rig.stop()
    }

    @Test("Fujifilm, secure firmware: the secure pairing service, eleven notifications (one in a service of its own); the status reads")
    func fujifilmSecure() async throws {
        let status: [UInt8] = [0xB4, 0x12, 0x00, 0x00]
        let rig = try await Self.rig(pair: true) {
            FujifilmBody(address: $0, generation: .secure(serial: [1, 2, 3, 4, 5]), status: status)
        }
        let expected = Self.rows("123d8f06-62a1-4935-9322-833c531ee225", [
            ("f557d96b-8284-4667-8793-b971c1deca2a", ["read", "write", "encrypt-read", "encrypt-write"]),
            ("85b9163e-62d1-49ff-a6f5-054b4630d4a1", ["write", "encrypt-write"]),
        ])
            + Self.rows("4e941240-d01d-46b9-a5ea-67636806830b", [
                ("c95d91ae-b247-4d6d-8661-7dd5d6a0f85b", ["write", "encrypt-write", "notify"]),
                ("bf6dc9cf-3606-4ec9-a4c8-d77576e93ea4", ["notify"]), ("75823784-fbb7-4b71-abae-cd9a34072e3c", ["notify"]),
                ("aab609c4-94dd-4d89-bc60-665d5090b828", ["notify"]), ("2a125640-706d-4dd1-b420-c0f4ab93c361", ["notify"]),
                ("82a9f452-c5ce-4ef5-8203-3fc9a47f8171", ["notify"]), ("deef7187-3f43-4364-9e22-11a8c8a15951", ["notify"]),
            ])
            + Self.rows("804daa8e-ffeb-4ab3-8e75-6edd7303208d", [("7170fd5a-56d9-4c19-b043-7a7047d8e1a0", ["notify"])])
            + Self.fujifilmCommon()
            + Self.rows("4c0020fe-f3b6-40de-acc9-77d129067b14", [("e6692c5c-b7cd-44f4-95fc-eda07ce32560", ["notify"])])
        try await Self.check(rig, expected: expected, reads: [Fujifilm.secureStatus: status])
        await rig.stop()
    }

    @Test("Nikon, remote mode: the remote service with R1, W1 and R2 beside the shutter, indication and handshake")
    func nikon() async throws {
        let rig = try await Self.rig(pair: false) { NikonBody(address: $0) }
        func nikon(_ short: String) -> String { "0000\(short)-3dd4-4255-8d62-6dc7b9bd5561" }
        let expected = Self.rows(nikon("de00"), [
            (nikon("2080"), ["read"]), (nikon("2082"), ["write"]), (nikon("2083"), ["write"]),
            (nikon("2084"), ["indicate"]), (nikon("2086"), ["read"]), (nikon("2087"), ["write", "indicate"]),
        ])
        try await Self.check(rig, expected: expected, reads: [:], refused: [Nikon.remoteR1, Nikon.remoteR2])
        await rig.stop()
    }
}
