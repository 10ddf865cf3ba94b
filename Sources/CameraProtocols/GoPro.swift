/// Open GoPro over Bluetooth LE (HERO9 Black and later): GoPro's own published remote protocol.
///
/// Every message travels in 20-byte packets (``GoPro/Fragmenter``, ``GoPro/Reassembler``), and
/// each function has a write characteristic and a notify characteristic for its answers, in
/// service `FEA6`: commands (`GP-0072` → `GP-0073`), settings (`GP-0074` → `GP-0075`) and
/// queries (`GP-0076` → `GP-0077`). Sources: gopro/OpenGoPro, `docs/ble/protocol/*`; the golden
/// vectors in `Protocol/cameras/gopro.json` cite each file.
public import GATT

public enum GoPro: CameraRemoteProtocol {
    public static let brand = CameraBrand.gopro

    /// `GP-XXXX`: GoPro's characteristics sit on one vendor base UUID.
    static func gp(_ short: String) -> String { "b5f9\(short)-aa8d-11e3-9046-0002a5d5c51b" }

    /// The Control & Query service, also advertised, so scans filter on it.
    public static let controlService = BluetoothUUID.normalized("fea6")
    /// GP-0072: commands (TLV and protobuf), written.
    public static let command = GATTCharacteristicID(service: controlService, characteristic: gp("0072"))
    /// GP-0073: command responses, notified.
    public static let commandResponse = GATTCharacteristicID(service: controlService, characteristic: gp("0073"))
    /// GP-0074: settings (and the keep-alive), written.
    public static let settings = GATTCharacteristicID(service: controlService, characteristic: gp("0074"))
    /// GP-0075: setting responses, notified.
    public static let settingsResponse = GATTCharacteristicID(service: controlService, characteristic: gp("0075"))
    /// GP-0076: queries, written.
    public static let query = GATTCharacteristicID(service: controlService, characteristic: gp("0076"))
    /// GP-0077: query responses and asynchronous status pushes, notified.
    public static let queryResponse = GATTCharacteristicID(service: controlService, characteristic: gp("0077"))

    /// GP-0090: Camera Management, present on every Open GoPro camera.
    public static let cameraManagementService = gp("0090")
    /// GP-0091: network management commands (protobuf), written: among them GoPro's own
    /// software's "pairing finished".
    public static let networkManagementCommand = GATTCharacteristicID(service: cameraManagementService, characteristic: gp("0091"))
    /// GP-0092: network management responses, notified.
    public static let networkManagementResponse = GATTCharacteristicID(service: cameraManagementService, characteristic: gp("0092"))

    /// GP-0001: the camera's Wi-Fi access point.
    public static let wifiAccessPointService = gp("0001")
    /// GP-0002: the access point's SSID, read (and written).
    public static let wifiSSID = GATTCharacteristicID(service: wifiAccessPointService, characteristic: gp("0002"))
    /// GP-0003: the access point's password, read (and written).
    public static let wifiPassword = GATTCharacteristicID(service: wifiAccessPointService, characteristic: gp("0003"))
    /// GP-0004: the access point's power, written.
    public static let wifiPower = GATTCharacteristicID(service: wifiAccessPointService, characteristic: gp("0004"))
    /// GP-0005: the access point's state, read and indicated.
    public static let wifiState = GATTCharacteristicID(service: wifiAccessPointService, characteristic: gp("0005"))

    /// The notify characteristics: the camera does not remember their subscriptions, so a
    /// client subscribes to each on every connection.
    public static let responseCharacteristics = [commandResponse, settingsResponse, queryResponse, networkManagementResponse]

    /// Every service and characteristic of the published GATT table, with its properties:
    /// gopro/OpenGoPro `docs/ble/protocol/ble_setup` ("BLE Characteristics"), all of which GoPro's
    /// Python SDK lists too (`open_gopro/models/constants/uuids.py`, `GoProUUID`, which adds
    /// unpublished ones: GP-0006, GP-0078/0079, GP-0080 to 0084). A client
    /// written to the documents (GoPro's SDK subscribes to every characteristic that notifies,
    /// and expects GP-0091) meets the table it was written to.
    public static let services: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: wifiAccessPointService, characteristics: [
            GATTCharacteristicLayout(uuid: wifiSSID.characteristic, flags: ["read", "write"]),
            GATTCharacteristicLayout(uuid: wifiPassword.characteristic, flags: ["read", "write"]),
            GATTCharacteristicLayout(uuid: wifiPower.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: wifiState.characteristic, flags: ["read", "indicate"]),
        ]),
        GATTServiceLayout(uuid: cameraManagementService, characteristics: [
            GATTCharacteristicLayout(uuid: networkManagementCommand.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: networkManagementResponse.characteristic, flags: ["notify"]),
        ]),
        GATTServiceLayout(uuid: controlService, characteristics: [
            GATTCharacteristicLayout(uuid: command.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: commandResponse.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: settings.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: settingsResponse.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: query.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: queryResponse.characteristic, flags: ["notify"]),
        ]),
    ]

    /// GoPro, Inc.'s Bluetooth SIG company identifier. The Open GoPro docs write it `0xF202`,
    /// the bytes as they appear on air (`F2 02`); read little-endian it is `0x02F2`.
    public static let companyID: UInt16 = 0x02F2

    /// The menu path that opens pairing; the camera then advertises the pairing bit.
    public static let howToPair = "on the camera, open Preferences → Wireless Connections → Connect Device → GoPro Quik App; "
        + "it stays pairable for a few minutes"

    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        let data = advertisement.manufacturerData[companyID]
        guard advertisement.serviceUUIDs.contains(controlService) || data != nil else { return nil }
        let pairing: RecognizedCamera.Pairing
        if let data, let parsed = try? Advertisement(manufacturerData: data) {
            pairing = parsed.status.contains(.pairing) ? .open : .closed
        } else {
            pairing = .unknown
        }
        // The advertisement carries a numeric model ID only; the model's name comes from Get
        // Hardware Info during the handshake.
        return RecognizedCamera(brand: .gopro, pairing: pairing, howToPair: howToPair)
    }

    /// The manufacturer-specific data of a GoPro's advertisement (schema versions 2 and 3),
    /// without the company identifier: 12 bytes.
    public struct Advertisement: Hashable, Sendable {
        /// The camera-status byte.
        public struct Status: OptionSet, Hashable, Sendable {
            public let rawValue: UInt8
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// The processor is awake (0: low power).
            public static let processorAwake = Status(rawValue: 1 << 0)
            public static let wifiAccessPointOn = Status(rawValue: 1 << 1)
            /// The camera accepts a new pairing now.
            public static let pairing = Status(rawValue: 1 << 2)
            public static let centralRoleEnabled = Status(rawValue: 1 << 3)
            public static let newMediaAvailable = Status(rawValue: 1 << 4)
        }

        public var schemaVersion: UInt8
        public var status: Status
        /// GoPro's numeric model ID (the docs' "Supported Cameras" table).
        public var modelID: UInt8
        /// Bit 0: the command, settings and query characteristics are offered.
        public var capabilities: UInt8
        /// Bytes 4–10: reserved in schema 2; schema 3 carries an ID hash in 5–10.
        public var reserved: [UInt8]
        public var mediaOffloadStatus: UInt8

        public static let length = 12

        public init(schemaVersion: UInt8 = 2, status: Status, modelID: UInt8, capabilities: UInt8 = 0x01,
                    reserved: [UInt8] = Array(repeating: 0, count: 7), mediaOffloadStatus: UInt8 = 0) {
            self.schemaVersion = schemaVersion
            self.status = status
            self.modelID = modelID
            self.capabilities = capabilities
            self.reserved = Array((reserved + Array(repeating: 0, count: 7)).prefix(7))
            self.mediaOffloadStatus = mediaOffloadStatus
        }

        /// Reads the manufacturer data; throws when it is too short to be a GoPro's.
        public init(manufacturerData data: [UInt8]) throws(MalformedMessage) {
            guard data.count >= Self.length else {
                throw MalformedMessage(.gopro, "a GoPro advertisement has \(Self.length) bytes of manufacturer data, not \(data.count)")
            }
            self.init(schemaVersion: data[0], status: Status(rawValue: data[1]), modelID: data[2], capabilities: data[3],
                      reserved: Array(data[4..<11]), mediaOffloadStatus: data[11])
        }

        /// The manufacturer data bytes (after the company identifier).
        public var manufacturerData: [UInt8] {
            [schemaVersion, status.rawValue, modelID, capabilities] + reserved + [mediaOffloadStatus]
        }
    }
}
