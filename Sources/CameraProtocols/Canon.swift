public import CameraKit
public import GATT

/// Canon EOS cameras over Bluetooth LE, in the camera's two modes:
///
/// - **Remote** (the camera believes it talks to a BR-E1 remote; MENU → Wireless settings →
///   Bluetooth function → Remote): one control byte of buttons and a drive mode. The camera
///   sends nothing back, so a picture is never confirmed, and it takes no position.
/// - **Smart device** (the Camera Connect app's mode): a handshake the person confirms on the
///   camera, shooting buttons with state reports, and a location service for geotags.
///
/// The camera's drive mode must be a Remote/Timed one for remote presses to take pictures;
/// otherwise the camera accepts the bytes and does nothing, which no remote can notice.
public enum Canon: CameraRemoteProtocol {
    public static let brand = CameraBrand.canon

    /// Canon's 128-bit UUIDs differ in their first 32 bits only.
    static func uuid(_ prefix: String) -> String { prefix + "-0000-1000-0000-d8492fffa821" }

    // MARK: Remote (BR-E1) mode

    public static let remoteService = uuid("00050000")
    /// Identifies the remote by name: ``RemoteIdentify``.
    public static let remotePairing = GATTCharacteristicID(service: remoteService, characteristic: uuid("00050002"))
    /// Buttons and drive mode: ``RemoteControl``.
    public static let remoteControl = GATTCharacteristicID(service: remoteService, characteristic: uuid("00050003"))

    // MARK: Smart-device mode

    public static let handshakeService = uuid("00010000")
    /// Read `01` on an EOS M6; its meaning is not known.
    public static let handshakeUnknown = GATTCharacteristicID(service: handshakeService, characteristic: uuid("00010005"))
    /// Takes `01`+name to start the handshake; indicates the person's answer, ``PairingAnswer``.
    public static let handshakeName = GATTCharacteristicID(service: handshakeService, characteristic: uuid("00010006"))
    /// The session control point: ``SmartIdentify``.
    public static let handshakeControl = GATTCharacteristicID(service: handshakeService, characteristic: uuid("0001000a"))
    /// Feature bits (read `07000000` on an EOS M6; bit `0x40` says auto power-off can be held off).
    public static let handshakeFeatures = GATTCharacteristicID(service: handshakeService, characteristic: uuid("0001000b"))
    /// The Wi-Fi hand-over.
    public static let wifiService = uuid("00020000")
    /// Read `0f000000` on an EOS M6; its meaning is not known.
    public static let wifiUnknown1 = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020001"))
    /// Written `0a` to fill the access point's name and password, `01` to start the access
    /// point (which ends the Bluetooth link); notifies 19 bytes holding the BSSID.
    public static let wifiControl = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020002"))
    /// Notifies `01 03` once the access point started.
    public static let wifiResult = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020003"))
    /// The access point's SSID, zero-padded (zeros until ``wifiControl`` took `0a`).
    public static let wifiSSID = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020004"))
    /// Read `09000000` on an EOS M6; its meaning is not known.
    public static let wifiUnknown2 = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020005"))
    /// The access point's 8-digit password (zeros until ``wifiControl`` took `0a`).
    public static let wifiPassword = GATTCharacteristicID(service: wifiService, characteristic: uuid("00020006"))
    public static let operationService = uuid("00030000")
    /// Read `010101` on an EOS M6; its meaning is not known.
    public static let operationUnknown = GATTCharacteristicID(service: operationService, characteristic: uuid("00030001"))
    /// Notified `0313` on an EOS M6; its meaning is not known.
    public static let operationError = GATTCharacteristicID(service: operationService, characteristic: uuid("00030002"))
    /// Session command: ``SessionCommand``.
    public static let sessionCommand = GATTCharacteristicID(service: operationService, characteristic: uuid("00030010"))
    /// The mode the camera switched to: `04` shooting, `03` playback, `01` going to sleep.
    public static let modeState = GATTCharacteristicID(service: operationService, characteristic: uuid("00030011"))
    /// Playback buttons, 4 bytes (press `…80`, release `…40`).
    public static let playbackButtons = GATTCharacteristicID(service: operationService, characteristic: uuid("00030020"))
    /// Playback menu states.
    public static let playbackState = GATTCharacteristicID(service: operationService, characteristic: uuid("00030021"))
    /// Shooting buttons: ``SmartShutter``.
    public static let shootingButtons = GATTCharacteristicID(service: operationService, characteristic: uuid("00030030"))
    /// Shooting state reports: ``ShootingState``.
    public static let shootingState = GATTCharacteristicID(service: operationService, characteristic: uuid("00030031"))
    public static let locationService = uuid("00040000")
    /// Location writes: ``locationAcknowledge`` and ``GeoFix``.
    public static let locationData = GATTCharacteristicID(service: locationService, characteristic: uuid("00040002"))
    /// Location state indications: ``LocationState``.
    public static let locationStatus = GATTCharacteristicID(service: locationService, characteristic: uuid("00040003"))
    /// Written to ``locationData`` after the camera indicates ``LocationState/setup``.
    public static let locationAcknowledge: [UInt8] = [0x01]
    /// Device Information, readable without a bond or handshake.
    public static let deviceInformationService = BluetoothUUID.normalized("180a")
    public static let manufacturerName = GATTCharacteristicID(service: deviceInformationService, characteristic: "2a29")
    public static let modelNumber = GATTCharacteristicID(service: deviceInformationService, characteristic: "2a24")
    public static let firmwareRevision = GATTCharacteristicID(service: deviceInformationService, characteristic: "2a26")
    public static let softwareRevision = GATTCharacteristicID(service: deviceInformationService, characteristic: "2a28")

    /// The remote mode's layout: what ``recognize(_:)`` and the remote driver need, and all that
    /// the sources for this mode list (gkoh/furble `lib/furble/CanonEOSRemote.h`,
    /// RReverser/eos-remote-web `index.js`, ArthurFDLR/BR-M5 `lib/CanonBLERemote/src/CanonBLERemote.cpp`).
    /// furble writes the control byte with a response (`CanonEOSRemote.cpp`) and BR-M5 writes
    /// both characteristics without one (`writeValue(…, false)`), so both properties are listed;
    /// the property bits themselves are not published. furble secures the link first.
    public static let services: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: remoteService, characteristics: [
            GATTCharacteristicLayout(uuid: remotePairing.characteristic, flags: ["write", "write-without-response", "encrypt-write"]),
            GATTCharacteristicLayout(uuid: remoteControl.characteristic, flags: ["write", "write-without-response", "encrypt-write"]),
        ]),
    ]

    /// The smart-device mode's layout: the table 3bl3gamer/canon-bluetooth-control `README.md`
    /// ("Services", read from an EOS M6) lists, with furble's `CanonEOSSmart.h` (the handshake,
    /// mode, shutter and location characteristics). The README says what each characteristic was seen to do (read, written,
    /// "notifies"); the properties here follow that, except where furble subscribes for
    /// indications (00010006, 00040003), which are listed as indicate. Which characteristics
    /// need the bond is not published beyond "Device Information does not require pairing".
    public static let smartServices: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: handshakeService, characteristics: [
            GATTCharacteristicLayout(uuid: handshakeUnknown.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: handshakeName.characteristic, flags: ["write", "indicate"]),
            GATTCharacteristicLayout(uuid: handshakeControl.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: handshakeFeatures.characteristic, flags: ["read"]),
        ]),
        GATTServiceLayout(uuid: wifiService, characteristics: [
            GATTCharacteristicLayout(uuid: wifiUnknown1.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiControl.characteristic, flags: ["write", "notify"]),
            GATTCharacteristicLayout(uuid: wifiResult.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: wifiSSID.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiUnknown2.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: wifiPassword.characteristic, flags: ["read"]),
        ]),
        GATTServiceLayout(uuid: operationService, characteristics: [
            GATTCharacteristicLayout(uuid: operationUnknown.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: operationError.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: sessionCommand.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: modeState.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: playbackButtons.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: playbackState.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: shootingButtons.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: shootingState.characteristic, flags: ["notify"]),
        ]),
        GATTServiceLayout(uuid: locationService, characteristics: [
            GATTCharacteristicLayout(uuid: locationData.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: locationStatus.characteristic, flags: ["indicate"]),
        ]),
        GATTServiceLayout(uuid: deviceInformationService, characteristics: [
            GATTCharacteristicLayout(uuid: manufacturerName.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: modelNumber.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: firmwareRevision.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: softwareRevision.characteristic, flags: ["read"]),
        ]),
    ]

    /// What to do on the camera to pair it as a remote.
    public static let howToPair = "on the camera choose MENU → Wireless settings → Bluetooth function → Remote, "
        + "then pair this computer from the camera's pairing screen; set the drive mode to Remote/Timed"

    /// A camera advertising the remote service is on its remote pairing screen; one advertising
    /// the smart-device service is waiting for a phone, and needs switching to Remote.
    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        if advertisement.serviceUUIDs.contains(remoteService) {
            return RecognizedCamera(brand: .canon, model: advertisement.name, pairing: .open, howToPair: howToPair)
        }
        if advertisement.serviceUUIDs.contains(handshakeService) {
            return RecognizedCamera(brand: .canon, model: advertisement.name, pairing: .closed,
                                    howToPair: "the camera waits for a smartphone; " + howToPair)
        }
        return nil
    }

    // MARK: - Remote mode messages

    /// The remote's name, as written to ``remotePairing``: `03` and the name in ASCII. The
    /// camera lists the remote by it.
    public struct RemoteIdentify: Hashable, Sendable {
        static let opcode: UInt8 = 0x03
        /// The longest name that fits one write at the default ATT MTU, after the opcode.
        public static let maximumNameLength = 19

        /// The name, printable ASCII, at most ``maximumNameLength`` characters.
        public let name: String

        /// Keeps the printable ASCII of `name`, shortened to fit.
        public init(name: String) {
            let ascii = name.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(Self.maximumNameLength)
            self.name = String(String.UnicodeScalarView(ascii))
        }

        public var bytes: [UInt8] { [Self.opcode] + Array(name.utf8) }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.first == Self.opcode else { throw MalformedMessage(.canon, "a remote's name starts 03, not \(spacedHex(Array(bytes.prefix(1))))") }
            let text = bytes.dropFirst()
            guard !text.isEmpty, text.count <= Self.maximumNameLength, text.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw MalformedMessage(.canon, "a remote's name is 1 to \(Self.maximumNameLength) printable ASCII characters")
            }
            name = String(decoding: text, as: UTF8.self)
        }
    }

    /// How the camera treats a press of ``RemoteButtons/release``: the low nibble of the
    /// control byte.
    public enum DriveMode: UInt8, CaseIterable, Hashable, Sendable {
        /// A picture at once.
        case immediate = 0x0C
        /// A picture after two seconds.
        case twoSecond = 0x04
        /// Starts or stops a movie.
        case movie = 0x08
    }

    /// The buttons held: the high nibble of the control byte.
    public struct RemoteButtons: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The shutter release.
        public static let release = RemoteButtons(rawValue: 0x80)
        /// Autofocus (the half-press).
        public static let focus = RemoteButtons(rawValue: 0x40)
        public static let tele = RemoteButtons(rawValue: 0x20)
        public static let wide = RemoteButtons(rawValue: 0x10)
    }

    /// One state of the remote, written to ``remoteControl``: the buttons held, OR the drive mode.
    public struct RemoteControl: Hashable, Sendable {
        public var buttons: RemoteButtons
        public var mode: DriveMode

        public init(buttons: RemoteButtons, mode: DriveMode) {
            self.buttons = buttons
            self.mode = mode
        }

        /// Shutter down (`8C`), and up again (`0C`).
        public static let shutterPress = RemoteControl(buttons: .release, mode: .immediate)
        public static let allReleased = RemoteControl(buttons: [], mode: .immediate)
        /// Autofocus held (`4C`).
        public static let focusPress = RemoteControl(buttons: .focus, mode: .immediate)
        /// The movie button: a press starts or stops recording (`88`, then `08`).
        public static let moviePress = RemoteControl(buttons: .release, mode: .movie)
        public static let movieReleased = RemoteControl(buttons: [], mode: .movie)

        public var bytes: [UInt8] { [buttons.rawValue | mode.rawValue] }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 1 else { throw MalformedMessage(.canon, "a control value is one byte, not \(bytes.count)") }
            guard let mode = DriveMode(rawValue: bytes[0] & 0x0F) else {
                throw MalformedMessage(.canon, "unknown drive mode bits \(spacedHex([bytes[0] & 0x0F]))")
            }
            self.init(buttons: RemoteButtons(rawValue: bytes[0] & 0xF0), mode: mode)
        }
    }

    // MARK: - Smart-device mode messages

    /// The handshake's writes: the name to ``handshakeName``, the rest to ``handshakeControl``.
    public enum SmartIdentify: Hashable, Sendable {
        /// `01`+name on ``handshakeName``: shown in the camera's confirmation dialog.
        case announce(name: String)
        /// `03`+16 bytes: the stable id the camera knows this client by.
        case identity([UInt8])
        /// `04`+name.
        case nickname(String)
        /// `05`+type: ``androidDevice`` for a phone app.
        case deviceType(UInt8)
        /// `01`: the handshake is over.
        case finish

        /// The device type Camera Connect for Android sends.
        public static let androidDevice: UInt8 = 0x02

        /// The characteristic the message is written to.
        public var characteristic: GATTCharacteristicID {
            if case .announce = self { handshakeName } else { handshakeControl }
        }

        public var bytes: [UInt8] {
            switch self {
            case .announce(let name): [0x01] + Array(name.utf8)
            case .identity(let id): [0x03] + id
            case .nickname(let name): [0x04] + Array(name.utf8)
            case .deviceType(let type): [0x05, type]
            case .finish: [0x01]
            }
        }

        /// Reads a handshake write (the camera's side) from `characteristic`.
        public init(decoding bytes: [UInt8], on characteristic: GATTCharacteristicID) throws(MalformedMessage) {
            guard let opcode = bytes.first else { throw MalformedMessage(.canon, "an empty handshake write") }
            let rest = Array(bytes.dropFirst())
            switch (characteristic, opcode) {
            case (handshakeName, 0x01) where !rest.isEmpty: self = .announce(name: String(decoding: rest, as: UTF8.self))
            case (handshakeControl, 0x01) where rest.isEmpty: self = .finish
            case (handshakeControl, 0x03) where rest.count == 16: self = .identity(rest)
            case (handshakeControl, 0x04) where !rest.isEmpty: self = .nickname(String(decoding: rest, as: UTF8.self))
            case (handshakeControl, 0x05) where rest.count == 1: self = .deviceType(rest[0])
            default: throw MalformedMessage(.canon, "unknown handshake write \(spacedHex(Array(bytes.prefix(20))))")
            }
        }
    }

    /// The person's answer to the pairing dialog, indicated on ``handshakeName``.
    public enum PairingAnswer: UInt8, Hashable, Sendable {
        case accepted = 0x02
        case rejected = 0x03

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 1, let answer = PairingAnswer(rawValue: bytes[0]) else {
                throw MalformedMessage(.canon, "a pairing answer is 02 or 03, not \(spacedHex(Array(bytes.prefix(8))))")
            }
            self = answer
        }

        public var bytes: [UInt8] { [rawValue] }
    }

    /// What ``sessionCommand`` takes.
    public enum SessionCommand: UInt8, CaseIterable, Hashable, Sendable {
        case playback = 0x01
        /// Shooting mode: the camera reports shooting state only after it.
        case shooting = 0x02
        case wake = 0x03
        case end = 0x04
        case powerOff = 0x05

        public var bytes: [UInt8] { [rawValue] }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 1, let command = SessionCommand(rawValue: bytes[0]) else {
                throw MalformedMessage(.canon, "unknown session command \(spacedHex(Array(bytes.prefix(8))))")
            }
            self = command
        }
    }

    /// The smart mode's shooting buttons, on ``shootingButtons``.
    public enum SmartShutter: UInt8, CaseIterable, Hashable, Sendable {
        case press = 0x01
        case release = 0x02
        case startVideo = 0x10
        case stopVideo = 0x11

        public var bytes: [UInt8] { [0x00, rawValue] }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 2, bytes[0] == 0x00, let button = SmartShutter(rawValue: bytes[1]) else {
                throw MalformedMessage(.canon, "unknown shooting button \(spacedHex(Array(bytes.prefix(8))))")
            }
            self = button
        }
    }

    /// A shooting state report on ``shootingState`` (three bytes).
    public enum ShootingState: Hashable, Sendable {
        /// `01 02 01`: focus found (or autofocus off) after a shutter press.
        case focusAcquired
        /// `01 01 01`: a picture was taken, or focus failed, or recording stopped.
        case idle
        /// `01 01 02`: recording started.
        case recording
        /// `10 10 10`: a button was pressed on the camera itself.
        case cameraButton

        static let table: [(bytes: [UInt8], state: ShootingState)] = [
            ([0x01, 0x02, 0x01], .focusAcquired), ([0x01, 0x01, 0x01], .idle),
            ([0x01, 0x01, 0x02], .recording), ([0x10, 0x10, 0x10], .cameraButton),
        ]

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard let entry = Self.table.first(where: { $0.bytes == bytes }) else {
                throw MalformedMessage(.canon, "unknown shooting state \(spacedHex(Array(bytes.prefix(8))))")
            }
            self = entry.state
        }

        public var bytes: [UInt8] { Self.table.first { $0.state == self }!.bytes }
    }

    /// The location service's state, indicated on ``locationStatus``.
    public enum LocationState: UInt8, Hashable, Sendable {
        case unwanted = 0x01
        /// After ``locationAcknowledge``: positions are taken.
        case wanted = 0x02
        /// The camera asks for positions; answer ``locationAcknowledge``.
        case setup = 0x03

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard let first = bytes.first, let state = LocationState(rawValue: first) else {
                throw MalformedMessage(.canon, "unknown location state \(spacedHex(Array(bytes.prefix(8))))")
            }
            self = state
        }

        public var bytes: [UInt8] { [rawValue] }
    }

    /// A position and its time, written to ``locationData``: `04`, `N`/`S`, latitude, `E`/`W`,
    /// longitude, `+`/`-`, elevation (metres), each a little-endian float32, then the Unix time
    /// (uint32 LE): 20 bytes. The numbers carry their signs as well as the letters, as furble
    /// (the implementation known to geotag an EOS M6) sends them.
    public struct GeoFix: Hashable, Sendable {
        static let opcode: UInt8 = 0x04
        static let length = 20

        public var latitude: Float
        public var longitude: Float
        public var elevation: Float
        public var unixSeconds: UInt32

        public init(latitude: Float, longitude: Float, elevation: Float, unixSeconds: UInt32) {
            self.latitude = latitude
            self.longitude = longitude
            self.elevation = elevation
            self.unixSeconds = unixSeconds
        }

        /// The fix for `position` (whose ``GeoPosition/problem`` is nil); no altitude is 0 m.
        public init(_ position: GeoPosition) {
            self.init(latitude: Float(position.latitude), longitude: Float(position.longitude),
                      elevation: Float(position.altitude ?? 0), unixSeconds: UInt32(clamping: position.fixTime / 1000))
        }

        public var bytes: [UInt8] {
            var out: [UInt8] = [Self.opcode, latitude < 0 ? UInt8(ascii: "S") : UInt8(ascii: "N")]
            out += littleEndian(latitude.bitPattern)
            out.append(longitude < 0 ? UInt8(ascii: "W") : UInt8(ascii: "E"))
            out += littleEndian(longitude.bitPattern)
            out.append(elevation < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            out += littleEndian(elevation.bitPattern)
            out += littleEndian(unixSeconds)
            return out
        }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == Self.length, bytes[0] == Self.opcode else {
                throw MalformedMessage(.canon, "a location fix is 20 bytes starting 04, not \(bytes.count) bytes")
            }
            let letters = [bytes[1], bytes[6], bytes[11]]
            guard [UInt8(ascii: "N"), UInt8(ascii: "S")].contains(letters[0]), [UInt8(ascii: "E"), UInt8(ascii: "W")].contains(letters[1]),
                  [UInt8(ascii: "+"), UInt8(ascii: "-")].contains(letters[2]) else {
                throw MalformedMessage(.canon, "location fix hemispheres \(spacedHex(letters))")
            }
            latitude = Float(bitPattern: readLittleEndian(bytes, at: 2))
            longitude = Float(bitPattern: readLittleEndian(bytes, at: 7))
            elevation = Float(bitPattern: readLittleEndian(bytes, at: 12))
            unixSeconds = readLittleEndian(bytes, at: 16)
        }
    }
}

private func littleEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
}

/// Four bytes from `offset` as a little-endian number; the caller checked the length.
private func readLittleEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
}
