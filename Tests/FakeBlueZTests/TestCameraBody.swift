import CameraProtocols
import FakeBlueZ
import Foundation
import GATT
import SimulatedCameras

/// A small camera for the fake bluetoothd's tests, independent of every brand's body: a write to
/// Command is echoed as a notification on Status (`0xAC` then the bytes written); a write
/// `[0xE0, code]` is refused with ATT error `code`; `[0x01, …]` takes a picture; with the remote
/// setting off every write is refused with `0x90`, as cameras refuse with application errors.
actor TestCameraBody: SimulatedCameraBody {
    static let service = "c0de0000-4c1b-4a3e-9f0a-5e1f0c2d3b4a"
    static let command = GATTCharacteristicID(service: service, characteristic: "c0de0001-4c1b-4a3e-9f0a-5e1f0c2d3b4a")
    static let status = GATTCharacteristicID(service: service, characteristic: "c0de0002-4c1b-4a3e-9f0a-5e1f0c2d3b4a")
    static let info = GATTCharacteristicID(service: service, characteristic: "c0de0003-4c1b-4a3e-9f0a-5e1f0c2d3b4a")
    static let companyIdentifier: UInt16 = 0x02F2
    static let name = "TestCam 42"

    nonisolated let brand = CameraBrand.gopro
    nonisolated let model = "Test Camera"
    nonisolated let address: String
    nonisolated let requiresBond: Bool
    nonisolated let services = [
        GATTServiceLayout(uuid: service, characteristics: [
            GATTCharacteristicLayout(uuid: command.characteristic, flags: ["write", "write-without-response"]),
            GATTCharacteristicLayout(uuid: status.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: info.characteristic, flags: ["read"]),
        ]),
    ]

    private var basics = BodyBasics(pairingOpen: false)
    /// Every value that reached the body, in order.
    private(set) var written: [[UInt8]] = []

    init(address: String, requiresBond: Bool = false) {
        self.address = address
        self.requiresBond = requiresBond
    }

    /// The device object path of the `index`th simulated camera on `hci0`.
    static func path(index: Int = 0) -> String {
        "/org/bluez/hci0/dev_" + SimulatedCameraCatalog.address(index: index).replacingOccurrences(of: ":", with: "_")
    }

    /// Its characteristics' object paths, as the fake lays out the handles.
    static func commandPath(index: Int = 0) -> String { path(index: index) + "/service000a/char000b" }
    static func statusPath(index: Int = 0) -> String { path(index: index) + "/service000a/char000d" }
    static func infoPath(index: Int = 0) -> String { path(index: index) + "/service000a/char0010" }

    /// A fake serving one camera with this body and no module.
    static func source(requiresBond: Bool = false) -> FakeBlueZ.CameraSource {
        FakeBlueZ.CameraSource(name: "Test") { TestCameraBody(address: $0, requiresBond: requiresBond) }
    }

    func advertisement() -> AdvertisementData {
        AdvertisementData(name: Self.name, serviceUUIDs: ["fea6"],
                          manufacturerData: [Self.companyIdentifier: [basics.pairingOpen ? 0x01 : 0x00]],
                          serviceData: ["fea6": [0x42, basics.remoteEnabled ? 0x01 : 0x00]])
    }

    var isConnectable: Bool { !basics.asleep }

    func connected(_ deliver: @escaping @Sendable (BodySignal) -> Void) {
        basics.connected(deliver)
    }

    func disconnected() {
        basics.disconnected()
    }

    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        guard basics.remoteEnabled else { throw ATTError(0x90) }
        if value.count == 2, value[0] == 0xE0 { throw ATTError(value[1]) }
        written.append(value)
        if value.first == 0x01 { basics.picturesTaken += 1 }
        basics.send([0xAC] + value, on: Self.status)
    }

    func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        guard characteristic == Self.info else { throw .readNotPermitted }
        return Array("v1".utf8)
    }

    var picturesTaken: Int { basics.picturesTaken }

    func sleep() { basics.sleep() }
    func wake() { basics.wake() }
    func setPairingMode(_ open: Bool) { basics.pairingOpen = open }
    func setRemoteEnabled(_ enabled: Bool) { basics.remoteEnabled = enabled }
}
