/// Nikon cameras' Bluetooth remote, as the ML-L7 remote drives it (the camera's "Connect to
/// remote" mode): a four-stage handshake that names the remote by a 4-byte device ID, then a
/// shutter button and nothing else (no focus, no bulb, no position).
///
/// The camera remembers the device ID of the remote it paired with; when it waits for that
/// remote it advertises the ID after company `0x0399`, and it does not answer another remote's
/// handshake. Facts from `gkoh/furble` `lib/furble/Nikon.{h,cpp}`, `NikonBase.{h,cpp}`,
/// `NikonRemote.{h,cpp}` and its issues 209 and 235; vectors in `Protocol/cameras/nikon.json`.
public import GATT

public enum Nikon: CameraRemoteProtocol {
    public static let brand = CameraBrand.nikon
    /// The company identifier of the manufacturer data a camera waiting for its remote advertises.
    public static let companyID: UInt16 = 0x0399

    // MARK: - GATT

    /// The remote service, advertised in remote mode.
    public static let service = "0000de00-3dd4-4255-8d62-6dc7b9bd5561"
    /// The button: ``RemoteButton``.
    public static let shutter = GATTCharacteristicID(service: service, characteristic: "00002083-3dd4-4255-8d62-6dc7b9bd5561")
    /// Indications the remote subscribes to first; their content is not known.
    public static let remoteIndication = GATTCharacteristicID(service: service, characteristic: "00002084-3dd4-4255-8d62-6dc7b9bd5561")
    /// The handshake, written and indicated: ``PairingMessage``.
    public static let pairing = GATTCharacteristicID(service: service, characteristic: "00002087-3dd4-4255-8d62-6dc7b9bd5561")
    /// furble's `REMOTE_R1_CHR_UUID`: unused, its content not known.
    public static let remoteR1 = GATTCharacteristicID(service: service, characteristic: "00002080-3dd4-4255-8d62-6dc7b9bd5561")
    /// furble's `REMOTE_W1_CHR_UUID`: unused, its content not known.
    public static let remoteW1 = GATTCharacteristicID(service: service, characteristic: "00002082-3dd4-4255-8d62-6dc7b9bd5561")
    /// furble's `REMOTE_R2_CHR_UUID`: unused, its content not known.
    public static let remoteR2 = GATTCharacteristicID(service: service, characteristic: "00002086-3dd4-4255-8d62-6dc7b9bd5561")

    /// Remote mode pairs by its handshake alone; the ML-L7 and furble do not bond.
    public static let requiresBond = false

    /// The remote-mode GATT database, as gkoh/furble `lib/furble/NikonRemote.h` and
    /// `NikonBase.cpp` list it, the only published source: 2083 written with a response
    /// (`NikonRemote.cpp`), 2084 and 2087 subscribed for indications (`subscribe(false, …)`),
    /// 2087 written with a response (`NikonBase.cpp`). furble also lists 2080, 2082 and 2086
    /// ("carried forward (currently unused)") as R1, W1 and R2; their properties are not
    /// published, and are taken from those names: read, write, read.
    ///
    /// SnapBridge (smart) mode has another table in the same service (`NikonSmart.h`: pairing
    /// on 2000, and 2001, 2002, 2006–200A); the simulated body speaks remote mode only and does
    /// not serve it.
    public static let services: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: service, characteristics: [
            GATTCharacteristicLayout(uuid: remoteR1.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: remoteW1.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: shutter.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: remoteIndication.characteristic, flags: ["indicate"]),
            GATTCharacteristicLayout(uuid: remoteR2.characteristic, flags: ["read"]),
            GATTCharacteristicLayout(uuid: pairing.characteristic, flags: ["write", "indicate"]),
        ]),
    ]

    // MARK: - Advertisement

    /// Where on the camera a remote is paired.
    public static let howToPair = "on the camera, open the Network menu > Connect to remote (Wireless remote (ML-L7) options "
        + "on some bodies) > Pair, then connect while it waits"

    /// A Nikon camera in remote mode: it advertises ``service``; while pairing it has no
    /// manufacturer data, and while it waits for the remote it knows it advertises company
    /// `0x0399` and that remote's ``DeviceID`` (the camera's `token`).
    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        guard advertisement.serviceUUIDs.contains(BluetoothUUID.normalized(service)) else { return nil }
        guard let data = advertisement.manufacturerData[companyID] else {
            return RecognizedCamera(brand: brand, model: advertisement.name, pairing: .open, howToPair: howToPair)
        }
        let remote = try? DeviceID(bytes: Array(data.prefix(DeviceID.length)))
        return RecognizedCamera(brand: brand, model: advertisement.name, pairing: remote == nil ? .unknown : .closed,
                                howToPair: howToPair, token: remote?.bytes ?? [])
    }

    /// The manufacturer data (without the company) of a camera waiting for `remote`: its ID and
    /// a zero byte (furble's `nikon_adv_t`).
    public static func manufacturerData(waitingFor remote: DeviceID) -> [UInt8] { remote.bytes + [0x00] }

    // MARK: - Identity

    /// The remote's 4-byte device ID, in the order it is sent and advertised; the ML-L7 and
    /// furble start it with `01`. The app stores it: a camera answers only the remote it paired with.
    public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
        public static let length = 4
        /// A fixed ID for a remote that was given none.
        public static let standard = DeviceID(checked: [0x01, 0x75, 0x6E, 0x6C])

        /// The ID as sent.
        public let bytes: [UInt8]

        /// An ID stored or advertised; throws unless it has 4 bytes.
        public init(bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == Self.length else { throw .length(.nikon, of: "remote device ID", expected: Self.length, got: bytes.count) }
            self.bytes = bytes
        }

        private init(checked bytes: [UInt8]) { self.bytes = bytes }

        /// A new ID starting with `01`, as a remote makes one at its first pairing.
        public static func random<G: RandomNumberGenerator>(using generator: inout G) -> DeviceID {
            DeviceID(checked: [0x01] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }

        public var description: String { bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
    }

    // MARK: - Handshake

    /// One 17-byte handshake message on ``pairing``: a stage byte, a u64 timestamp (big-endian;
    /// a remote's is always 1), then 8 bytes: the remote's device ID and nonce, or the
    /// camera's serial.
    public enum PairingMessage: Hashable, Sendable {
        /// Stage 1, remote to camera: who the remote is.
        case identify(DeviceID, nonce: UInt32)
        /// Stage 2, camera to remote: all zeros in remote mode.
        case acknowledge
        /// Stage 3, remote to camera: all zeros.
        case confirm
        /// Stage 4, camera to remote: 8 bytes furble logs as the serial (ASCII on newer bodies,
        /// zeros on a COOLPIX).
        case serial([UInt8])

        public static let length = 17
        /// The timestamp a remote sends.
        public static let remoteTimestamp: UInt64 = 1

        public var stage: UInt8 {
            switch self {
            case .identify: 1
            case .acknowledge: 2
            case .confirm: 3
            case .serial: 4
            }
        }

        /// The 17 bytes written or indicated.
        public var bytes: [UInt8] {
            let timestamp: UInt64 = if case .identify = self { Self.remoteTimestamp } else { 0 }
            let payload: [UInt8] = switch self {
            case .identify(let device, let nonce): device.bytes + bigEndian(nonce)
            case .acknowledge, .confirm: Array(repeating: 0, count: 8)
            case .serial(let serial): serial
            }
            return [stage] + (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * $0)) } + payload
        }

        /// The message; throws for another length, an unknown stage, or a stage whose fixed
        /// fields are not what remote mode sends (a smartphone pairing's hashes, for one).
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == Self.length else { throw .length(.nikon, of: "pairing message", expected: Self.length, got: bytes.count) }
            let timestamp = bytes[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let payload = Array(bytes[9...])
            switch bytes[0] {
            case 1 where timestamp == Self.remoteTimestamp:
                let nonce = payload[4...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                self = .identify(try DeviceID(bytes: Array(payload.prefix(4))), nonce: nonce)
            case 2 where timestamp == 0 && payload.allSatisfy({ $0 == 0 }): self = .acknowledge
            case 3 where timestamp == 0 && payload.allSatisfy({ $0 == 0 }): self = .confirm
            case 4 where timestamp == 0: self = .serial(payload)
            default: throw .unknown(.nikon, of: "pairing message", bytes)
            }
        }

        /// The stage-4 serial as text, up to its first zero byte.
        public var serialText: String? {
            guard case .serial(let bytes) = self else { return nil }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }

        private func bigEndian(_ value: UInt32) -> [UInt8] {
            (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        }
    }

    /// What a remote-mode camera indicates.
    public enum Indication: Hashable, Sendable {
        /// A handshake stage on ``pairing``.
        case pairing(PairingMessage)
        /// A value on ``remoteIndication``; its meaning is not known.
        case remote([UInt8])

        /// The indication on `characteristic`; nil for a characteristic this protocol does not
        /// subscribe to, a throw for a malformed value.
        public static func parse(_ bytes: [UInt8], on characteristic: GATTCharacteristicID) throws(MalformedMessage) -> Indication? {
            switch characteristic {
            case Nikon.pairing: return .pairing(try PairingMessage(decoding: bytes))
            case Nikon.remoteIndication: return .remote(bytes)
            default: return nil
            }
        }
    }

    // MARK: - Buttons

    /// A write on ``shutter``: the remote's mode, then whether its button is down.
    public struct RemoteButton: Hashable, Sendable {
        /// The remote's modes (furble's `MODE_*`); remote mode uses ``shutter`` only.
        public enum Mode: UInt8, CaseIterable, Hashable, Sendable {
            case shutter = 0x02
            case video = 0x03
            case menu = 0x04
            case playback = 0x05
        }

        public static let pressedByte: UInt8 = 0x02
        public static let releasedByte: UInt8 = 0x00

        public static let press = RemoteButton(mode: .shutter, pressed: true)
        public static let release = RemoteButton(mode: .shutter, pressed: false)

        /// The remote's mode.
        public var mode: Mode
        /// Whether the button is down.
        public var pressed: Bool

        public init(mode: Mode, pressed: Bool) {
            self.mode = mode
            self.pressed = pressed
        }

        public var bytes: [UInt8] { [mode.rawValue, pressed ? Self.pressedByte : Self.releasedByte] }

        /// A button write a camera received; throws for another length, mode or button byte.
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 2 else { throw .length(.nikon, of: "button write", expected: 2, got: bytes.count) }
            guard let mode = Mode(rawValue: bytes[0]), [Self.pressedByte, Self.releasedByte].contains(bytes[1]) else {
                throw .unknown(.nikon, of: "button write", bytes)
            }
            self.init(mode: mode, pressed: bytes[1] == Self.pressedByte)
        }
    }
}
