public import CameraKit
public import GATT

/// Sony's Bluetooth LE remote (the protocol of the RMT-P1BT remote, on α bodies, ZV and RX
/// models): button presses on FF01, three status bits on FF02, and the location service the
/// Imaging Edge app fills for geotags. It has no exposure settings.
///
/// The camera must be bonded, and its "Bluetooth Rmt Ctrl" menu item must be On; with it off,
/// every button write is refused with ATT error `0x90`. A write the camera does not understand
/// drops the link, so only the codes in ``Button`` are ever sent.
public enum Sony: CameraRemoteProtocol {
    public static let brand = CameraBrand.sony

    /// Sony's Bluetooth SIG company identifier, the key of its manufacturer data.
    public static let companyID: UInt16 = 0x012D

    public static let remoteService = BluetoothUUID.normalized("8000ff00-ff00-ffff-ffff-ffffffffffff")
    public static let locationService = BluetoothUUID.normalized("8000dd00-dd00-ffff-ffff-ffffffffffff")
    /// The camera service: status, battery, media, date and time, the Wi-Fi hand-over, and
    /// the body's firmware version and model name (furble `Sony.h` calls it the primary service).
    public static let cameraService = BluetoothUUID.normalized("8000cc00-cc00-ffff-ffff-ffffffffffff")
    /// The pairing service Sony's phone apps use.
    public static let pairingService = BluetoothUUID.normalized("8000ee00-ee00-ffff-ffff-ffffffffffff")
    /// Generic Access, whose Device Name the camera fills with its model (`ILCE-7M3`).
    public static let genericAccessService = BluetoothUUID.normalized("1800")

    /// Button commands (write).
    public static let command = GATTCharacteristicID(service: remoteService, characteristic: "ff01")
    /// Focus, shutter and recording status (notify).
    public static let status = GATTCharacteristicID(service: remoteService, characteristic: "ff02")
    /// Location status (notify): the camera says here when it turns location linkage off.
    public static let locationStatus = GATTCharacteristicID(service: locationService, characteristic: "dd01")
    /// The position fix (write), ``LocationFix``.
    public static let locationFix = GATTCharacteristicID(service: locationService, characteristic: "dd11")
    /// Whether the camera takes a time zone with the fix (read), ``LocationFormat``.
    public static let locationFormat = GATTCharacteristicID(service: locationService, characteristic: "dd21")
    /// Takes the location feature for this client (write `01`).
    public static let locationLock = GATTCharacteristicID(service: locationService, characteristic: "dd30")
    /// Turns location linkage on (write `01`).
    public static let locationEnable = GATTCharacteristicID(service: locationService, characteristic: "dd31")
    /// Time correction (read); its layout is not published.
    public static let timeCorrection = GATTCharacteristicID(service: locationService, characteristic: "dd32")
    /// Area adjustment (read); its layout is not published.
    public static let areaAdjustment = GATTCharacteristicID(service: locationService, characteristic: "dd33")
    /// Push-transfer status (notify).
    public static let pushTransfer = GATTCharacteristicID(service: cameraService, characteristic: "cc03")
    /// The Wi-Fi access point's SSID (read).
    public static let wifiSSID = GATTCharacteristicID(service: cameraService, characteristic: "cc06")
    /// The Wi-Fi access point's password (read).
    public static let wifiPassword = GATTCharacteristicID(service: cameraService, characteristic: "cc07")
    /// Turns the Wi-Fi access point on (write `01`).
    public static let wifiOn = GATTCharacteristicID(service: cameraService, characteristic: "cc08")
    /// Camera status, tagged values: Wi-Fi, transfer, remote, time set, recording (read, notify).
    public static let cameraStatus = GATTCharacteristicID(service: cameraService, characteristic: "cc09")
    /// The firmware version, US-ASCII (read).
    public static let firmwareVersion = GATTCharacteristicID(service: cameraService, characteristic: "cc0a")
    /// The model name, US-ASCII (read).
    public static let modelName = GATTCharacteristicID(service: cameraService, characteristic: "cc0b")
    /// The access point's BSSID (read).
    public static let wifiBSSID = GATTCharacteristicID(service: cameraService, characteristic: "cc0c")
    /// Device information (read).
    public static let deviceInfo = GATTCharacteristicID(service: cameraService, characteristic: "cc0d")
    /// The result of a date, time or initial setting (read, notify).
    public static let settingResult = GATTCharacteristicID(service: cameraService, characteristic: "cc0e")
    /// Media: each slot's state, shots and seconds remaining (read, notify).
    public static let media = GATTCharacteristicID(service: cameraService, characteristic: "cc0f")
    /// Battery packs and power source (read, notify).
    public static let battery = GATTCharacteristicID(service: cameraService, characteristic: "cc10")
    /// The date format (write).
    public static let dateFormat = GATTCharacteristicID(service: cameraService, characteristic: "cc12")
    /// The date, time and time zone (write).
    public static let timeArea = GATTCharacteristicID(service: cameraService, characteristic: "cc13")
    /// The lens mounted (read, notify).
    public static let lensInfo = GATTCharacteristicID(service: cameraService, characteristic: "cca6")
    /// The Wi-Fi band, 2.4 or 5 GHz (read).
    public static let wifiBand = GATTCharacteristicID(service: cameraService, characteristic: "ccab")
    /// Pairing and power commands (write).
    public static let pairingCommand = GATTCharacteristicID(service: pairingService, characteristic: "ee01")
    /// The camera's information for a phone that pairs, firmware version and model name among it (read).
    public static let pairingInfo = GATTCharacteristicID(service: pairingService, characteristic: "ee04")
    public static let deviceName = GATTCharacteristicID(service: genericAccessService, characteristic: "2a00")

    /// The value written to ``locationLock`` and ``locationEnable``.
    public static let locationOn: [UInt8] = [0x01]

    /// Every service and characteristic the published sources list, with its properties. The
    /// remote service comes first: its presence proves a Sony camera in remote mode.
    ///
    /// - Remote `8000FF00`: FF01 written with a response, FF02 notified (coral/freemote
    ///   `README.md`, `src/BLECamera.cpp`; Staacks/alpharemote `camera/CameraBLE.kt`; gkoh/furble
    ///   `lib/furble/Sony.h`). The link must be bonded (alpharemote, furble `secureConnection`).
    /// - Location `8000DD00`: DD11 written, DD21 read (furble `Sony.h`, `Sony.cpp`), DD30 and DD31
    ///   read and written (furble reads them before writing `01`), DD01 notified (furble names it;
    ///   rock3r/CameraSync `docs/sony/BLE_STATE_MONITORING.md` §4 and `SonyGattSpec.kt`), DD32
    ///   and DD33 read (CameraSync `docs/sony/DATETIME_GPS_SYNC.md` §4, `SonyGattSpec.kt`).
    /// - Camera `8000CC00`: furble names the service; its characteristics are CameraSync's
    ///   (`BLE_STATE_MONITORING.md` §3, `DATETIME_GPS_SYNC.md` §2, `REMOTE_CAPTURE.md` §3,
    ///   `FIRMWARE_UPDATES.md`). Where its documents disagree the union is listed: §3 says CC09,
    ///   CC0E, CC0F, CC10 and CCA6 are read and notified, `DATETIME_GPS_SYNC.md` lists CC09 as
    ///   read only and the others as notified only. `BLE_STATE_MONITORING.md` writes these UUIDs
    ///   on the service's base (`0000CC10-CC00-FFFF-…`); CameraSync's code (`SonyGattSpec.kt`)
    ///   and every source for FF01 use the Bluetooth base (`0000CC10-0000-1000-8000-…`), as here.
    /// - Pairing `8000EE00`: EE01 written (`BLE_STATE_MONITORING.md` §5), EE04 read
    ///   (`FIRMWARE_UPDATES.md`).
    /// - Generic Access: Device Name read (alpharemote reads it for the model).
    ///
    /// Which of these need an encrypted link beyond FF01, DD11, DD30 and DD31 is not published.
    public static let services: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: remoteService, characteristics: [
            GATTCharacteristicLayout(uuid: command.characteristic, flags: ["write", "encrypt-write"]),
            GATTCharacteristicLayout(uuid: status.characteristic, flags: ["notify"]),
        ]),
        GATTServiceLayout(uuid: locationService, characteristics: [
            GATTCharacteristicLayout(uuid: locationStatus.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: locationFix.characteristic, flags: ["write", "encrypt-write"]),
            GATTCharacteristicLayout(uuid: locationFormat.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: locationLock.characteristic, flags: ["read", "write", "encrypt-write"]),
            GATTCharacteristicLayout(uuid: locationEnable.characteristic, flags: ["read", "write", "encrypt-write"]),
            GATTCharacteristicLayout(uuid: timeCorrection.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: areaAdjustment.characteristic, flags: ["read"]),
        ]),
        GATTServiceLayout(uuid: cameraService, characteristics: [
            GATTCharacteristicLayout(uuid: pushTransfer.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: wifiSSID.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiPassword.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiOn.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: cameraStatus.characteristic, flags: ["read", "notify"]),
            GATTCharacteristicLayout(uuid: firmwareVersion.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: modelName.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiBSSID.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: deviceInfo.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: settingResult.characteristic, flags: ["read", "notify"]),
            GATTCharacteristicLayout(uuid: media.characteristic, flags: ["read", "notify"]),
            GATTCharacteristicLayout(uuid: battery.characteristic, flags: ["read", "notify"]),
            GATTCharacteristicLayout(uuid: dateFormat.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: timeArea.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: lensInfo.characteristic, flags: ["read", "notify"]),
            GATTCharacteristicLayout(uuid: wifiBand.characteristic, flags: ["read"]),
        ]),
        GATTServiceLayout(uuid: pairingService, characteristics: [
            GATTCharacteristicLayout(uuid: pairingCommand.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: pairingInfo.characteristic, flags: ["read"]),
        ]),
        GATTServiceLayout(uuid: genericAccessService, characteristics: [
            GATTCharacteristicLayout(uuid: deviceName.characteristic, flags: ["read"]),
        ]),
    ]

    /// What to do on the camera to pair it and let it be driven.
    public static let howToPair = "on the camera choose MENU → Network → Bluetooth → Pairing and pair this computer, "
        + "then set MENU → Network → Bluetooth Rmt Ctrl → On"

    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        guard let data = advertisement.manufacturerData[companyID],
              let parsed = try? Advertisement(manufacturerData: data), parsed.isCamera else { return nil }
        let pairing: RecognizedCamera.Pairing = parsed.flags.contains(.pairingSupported)
            ? (parsed.flags.contains(.pairingEnabled) ? .open : .closed) : .unknown
        return RecognizedCamera(brand: .sony, model: advertisement.name, pairing: pairing, howToPair: howToPair)
    }

    // MARK: - Advertisement

    /// The flags after tag `22` in the manufacturer data.
    public struct AdvertisedFlags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let pairingSupported = AdvertisedFlags(rawValue: 0x80)
        /// The camera's pairing screen is open.
        public static let pairingEnabled = AdvertisedFlags(rawValue: 0x40)
        public static let locationSupported = AdvertisedFlags(rawValue: 0x20)
        public static let locationEnabled = AdvertisedFlags(rawValue: 0x10)
        /// "Bluetooth Rmt Ctrl" is On.
        public static let remoteEnabled = AdvertisedFlags(rawValue: 0x02)
    }

    /// Sony's manufacturer data (after the company identifier): product type (little-endian,
    /// `0x0003` a camera), protocol version, a reserved byte, a model code, then tagged fields of
    /// which tag `22` carries ``AdvertisedFlags``.
    public struct Advertisement: Hashable, Sendable {
        /// The product type a camera advertises.
        public static let cameraType: UInt16 = 0x0003
        static let flagsTag: UInt8 = 0x22

        public var productType: UInt16
        public var protocolVersion: UInt8
        /// Two bytes naming the model, as sent (`45 31` is read `0x4531`).
        public var modelCode: UInt16
        public var flags: AdvertisedFlags

        public init(productType: UInt16 = cameraType, protocolVersion: UInt8, modelCode: UInt16, flags: AdvertisedFlags) {
            self.productType = productType
            self.protocolVersion = protocolVersion
            self.modelCode = modelCode
            self.flags = flags
        }

        public var isCamera: Bool { productType == Self.cameraType }

        public init(manufacturerData bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count >= 6 else { throw MalformedMessage(.sony, "manufacturer data of \(bytes.count) bytes, at least 6 expected") }
            productType = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
            protocolVersion = bytes[2]
            modelCode = UInt16(bytes[4]) << 8 | UInt16(bytes[5])
            // Tagged fields follow: tag, value, one more byte.
            var index = 6
            var found: AdvertisedFlags?
            while index + 1 < bytes.count {
                if bytes[index] == Self.flagsTag {
                    found = AdvertisedFlags(rawValue: bytes[index + 1])
                    break
                }
                index += 3
            }
            guard let found else { throw MalformedMessage(.sony, "no flags (tag 22) in the manufacturer data") }
            flags = found
        }

        /// The manufacturer data as the camera sends it.
        public var bytes: [UInt8] {
            [UInt8(truncatingIfNeeded: productType), UInt8(truncatingIfNeeded: productType >> 8), protocolVersion, 0x00,
             UInt8(truncatingIfNeeded: modelCode >> 8), UInt8(truncatingIfNeeded: modelCode), Self.flagsTag, flags.rawValue, 0x00]
        }
    }

    // MARK: - Buttons (FF01)

    /// The remote's buttons, each with the codes of its release and its press.
    public enum Button: String, CaseIterable, Hashable, Sendable {
        case halfPress, fullPress, record, afOn, c1

        /// `(released, pressed)` codes, the second byte of a ``ButtonCommand``.
        static let codes: [Button: (released: UInt8, pressed: UInt8)] = [
            .halfPress: (0x06, 0x07), .fullPress: (0x08, 0x09), .record: (0x0E, 0x0F),
            .afOn: (0x14, 0x15), .c1: (0x20, 0x21),
        ]

        public func code(pressed: Bool) -> UInt8 {
            let pair = Self.codes[self]!
            return pressed ? pair.pressed : pair.released
        }
    }

    /// One button going down or up: `01 <code>` on ``command``.
    public struct ButtonCommand: Hashable, Sendable, CustomStringConvertible {
        static let kind: UInt8 = 0x01

        public var button: Button
        public var pressed: Bool

        public init(_ button: Button, pressed: Bool) {
            self.button = button
            self.pressed = pressed
        }

        public static func press(_ button: Button) -> ButtonCommand { ButtonCommand(button, pressed: true) }
        public static func release(_ button: Button) -> ButtonCommand { ButtonCommand(button, pressed: false) }

        public var bytes: [UInt8] { [Self.kind, button.code(pressed: pressed)] }

        /// Reads a command (the camera's side); throws for a code the camera does not know.
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 2, bytes[0] == Self.kind else {
                throw MalformedMessage(.sony, "a button command is 01 and a code, not \(spacedHex(bytes))")
            }
            for button in Button.allCases {
                for pressed in [false, true] where button.code(pressed: pressed) == bytes[1] {
                    self.init(button, pressed: pressed)
                    return
                }
            }
            throw MalformedMessage(.sony, "unknown button code \(spacedHex([bytes[1]]))")
        }

        public var description: String { "\(button.rawValue) \(pressed ? "down" : "up")" }
    }

    /// A picture: the buttons go down and up in the order a finger moves them; the camera
    /// refuses other orders.
    public static let pressShutter: [ButtonCommand] = [.press(.halfPress), .press(.fullPress)]
    public static let releaseShutter: [ButtonCommand] = [.release(.fullPress), .release(.halfPress)]

    // MARK: - Status (FF02)

    /// What the camera notifies on ``status``: `02 <item> <00 | 20>`.
    public enum Status: Hashable, Sendable {
        /// Focus acquired (true) or lost.
        case focus(acquired: Bool)
        /// The shutter is open or busy taking the picture (true), or ready again.
        case shutter(active: Bool)
        case recording(Bool)

        static let kind: UInt8 = 0x02
        static let on: UInt8 = 0x20
        static let items: [(item: UInt8, make: @Sendable (Bool) -> Status)] = [
            (0x3F, { .focus(acquired: $0) }), (0xA0, { .shutter(active: $0) }), (0xD5, { .recording($0) }),
        ]

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count >= 3, bytes[0] == Self.kind else {
                throw MalformedMessage(.sony, "a status is 02, an item and a value, not \(spacedHex(bytes))")
            }
            guard let entry = Self.items.first(where: { $0.item == bytes[1] }) else {
                throw MalformedMessage(.sony, "unknown status item \(spacedHex([bytes[1]]))")
            }
            guard bytes[2] == 0x00 || bytes[2] == Self.on else {
                throw MalformedMessage(.sony, "status value \(spacedHex([bytes[2]])), 00 or 20 expected")
            }
            self = entry.make(bytes[2] == Self.on)
        }

        public var bytes: [UInt8] {
            switch self {
            case .focus(let on): [Self.kind, 0x3F, on ? Self.on : 0x00]
            case .shutter(let on): [Self.kind, 0xA0, on ? Self.on : 0x00]
            case .recording(let on): [Self.kind, 0xD5, on ? Self.on : 0x00]
            }
        }
    }

    // MARK: - Location (DD11, DD21)

    /// ``locationFormat``'s value: byte 4 bit 1 says whether the fix carries a time zone.
    public struct LocationFormat: Hashable, Sendable {
        public var includesTimeZone: Bool

        public init(includesTimeZone: Bool) { self.includesTimeZone = includesTimeZone }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count >= 5 else { throw MalformedMessage(.sony, "location format of \(bytes.count) bytes, at least 5 expected") }
            includesTimeZone = bytes[4] & 0x02 != 0
        }

        /// A value a camera with this format answers with (the other bytes are not known to matter).
        public var bytes: [UInt8] { [0x00, 0x00, 0x00, 0x00, includesTimeZone ? 0x02 : 0x00] }
    }

    /// A moment in UTC as the location fix writes it.
    public struct UTCTime: Hashable, Sendable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

        public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }

        /// The UTC calendar time of `unixMilliseconds`.
        public init(unixMilliseconds: UInt64) {
            let time = CalendarTime(unixSeconds: Int64(unixMilliseconds / 1000))
            self.init(year: time.year, month: time.month, day: time.day, hour: time.hour, minute: time.minute, second: time.second)
        }
    }

    /// The local time's offsets the camera stores with the fix.
    public struct TimeZoneOffsets: Hashable, Sendable {
        /// Standard time's offset east of UTC, minutes.
        public var utcOffsetMinutes: Int16
        /// What daylight saving time adds now, minutes.
        public var daylightSavingMinutes: Int16

        public init(utcOffsetMinutes: Int16, daylightSavingMinutes: Int16) {
            self.utcOffsetMinutes = utcOffsetMinutes
            self.daylightSavingMinutes = daylightSavingMinutes
        }
    }

    /// A position for the pictures, written to ``locationFix``: 95 bytes with a time zone, 91
    /// without, big-endian. An 11-byte header (byte 1 is the length less 2; byte 5 `03` with a
    /// time zone), latitude and longitude in units of 1e-7 degree, the UTC date and time, zeros,
    /// then with a time zone its offset and daylight saving minutes at bytes 91 and 93.
    public struct LocationFix: Hashable, Sendable {
        static let fullLength = 95
        static let shortLength = 91

        public var latitudeE7: Int32
        public var longitudeE7: Int32
        public var time: UTCTime
        /// Nil when the camera takes no time zone (``LocationFormat``).
        public var timeZone: TimeZoneOffsets?

        public init(latitudeE7: Int32, longitudeE7: Int32, time: UTCTime, timeZone: TimeZoneOffsets?) {
            self.latitudeE7 = latitudeE7
            self.longitudeE7 = longitudeE7
            self.time = time
            self.timeZone = timeZone
        }

        /// The fix for `position` (whose ``GeoPosition/problem`` is nil); the camera has no altitude.
        public init(_ position: GeoPosition, timeZone: TimeZoneOffsets?) {
            self.init(latitudeE7: Int32((position.latitude * 1e7).rounded()), longitudeE7: Int32((position.longitude * 1e7).rounded()),
                      time: UTCTime(unixMilliseconds: position.fixTime), timeZone: timeZone)
        }

        public var bytes: [UInt8] {
            let length = timeZone == nil ? Self.shortLength : Self.fullLength
            var out: [UInt8] = [0x00, UInt8(length - 2), 0x08, 0x02, 0xFC, timeZone == nil ? 0x00 : 0x03, 0x00, 0x00, 0x10, 0x10, 0x10]
            out += bigEndian(UInt32(bitPattern: latitudeE7)) + bigEndian(UInt32(bitPattern: longitudeE7))
            out += [UInt8(truncatingIfNeeded: time.year >> 8), UInt8(truncatingIfNeeded: time.year)]
            out += [time.month, time.day, time.hour, time.minute, time.second].map { UInt8(truncatingIfNeeded: $0) }
            out += [UInt8](repeating: 0, count: Self.shortLength - out.count)
            if let timeZone {
                out += bigEndian(UInt16(bitPattern: timeZone.utcOffsetMinutes)) + bigEndian(UInt16(bitPattern: timeZone.daylightSavingMinutes))
            }
            return out
        }

        /// Reads a fix (the camera's side).
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == Self.fullLength || bytes.count == Self.shortLength else {
                throw MalformedMessage(.sony, "a location fix is 91 or 95 bytes, not \(bytes.count)")
            }
            guard bytes[0] == 0x00, Int(bytes[1]) == bytes.count - 2, bytes[2...4] == [0x08, 0x02, 0xFC], bytes[8...10] == [0x10, 0x10, 0x10] else {
                throw MalformedMessage(.sony, "location fix header \(spacedHex(Array(bytes[0..<11])))")
            }
            let withZone = bytes[5] == 0x03
            guard withZone == (bytes.count == Self.fullLength) else {
                throw MalformedMessage(.sony, "location fix length \(bytes.count) disagrees with its time zone byte \(spacedHex([bytes[5]]))")
            }
            latitudeE7 = Int32(bitPattern: readBigEndian(bytes, at: 11, count: 4))
            longitudeE7 = Int32(bitPattern: readBigEndian(bytes, at: 15, count: 4))
            time = UTCTime(year: Int(readBigEndian(bytes, at: 19, count: 2)), month: Int(bytes[21]), day: Int(bytes[22]),
                           hour: Int(bytes[23]), minute: Int(bytes[24]), second: Int(bytes[25]))
            timeZone = withZone
                ? TimeZoneOffsets(utcOffsetMinutes: Int16(bitPattern: UInt16(readBigEndian(bytes, at: 91, count: 2))),
                                  daylightSavingMinutes: Int16(bitPattern: UInt16(readBigEndian(bytes, at: 93, count: 2))))
                : nil
        }
    }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

private func bigEndian(_ value: UInt16) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

/// `count` bytes from `offset` as a big-endian number; the caller checked the length.
private func readBigEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt32 {
    bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | UInt32($1) }
}

/// `01 0A FF`, for messages about bytes.
func spacedHex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: " ")
}
