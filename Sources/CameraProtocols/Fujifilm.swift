/// Fujifilm X and GFX cameras' Bluetooth remote, as the maker's phone app drives it.
///
/// Two generations share the shutter and geotag characteristics and differ in pairing:
/// - **basic** (firmware before July 2025): the camera advertises a 4-byte pairing token while
///   its pairing registration is open; the remote writes that token and its own name, and the
///   camera notifies `02 00` once it has registered the remote;
/// - **secure** (firmware from July 2025): the link must be bonded; the camera advertises a
///   5-byte serial; the remote reads a 4-byte status, writes it back acknowledged, names itself
///   and sets the interval at which the camera asks for a position.
///
/// Facts from `gkoh/furble` `lib/furble/Fujifilm.{h,cpp}`, `FujifilmBasic.{h,cpp}`,
/// `FujifilmSecure.{h,cpp}` and its issues 208 and 216; vectors in `Protocol/cameras/fujifilm.json`.
public import GATT

public enum Fujifilm: CameraRemoteProtocol {
    public static let brand = CameraBrand.fujifilm
    /// The company identifier of the manufacturer data in every Fujifilm advertisement.
    public static let companyID: UInt16 = 0x04D8

    // MARK: - GATT

    /// Pairing service of basic firmware: the token and the remote's name.
    public static let pairService = "91f1de68-dff6-466e-8b65-ff13b0f16fb8"
    /// Pairing service of secure firmware: the status handshake and the remote's name; secure
    /// cameras also advertise it, with their serial, when waiting for a known remote.
    public static let securePairService = "123d8f06-62a1-4935-9322-833c531ee225"
    /// Where the camera tells the remote it is registered and asks for positions.
    public static let configurationService = "4c0020fe-f3b6-40de-acc9-77d129067b14"
    /// Secure firmware's second notification service (it holds the geotag sync interval).
    public static let notificationService = "4e941240-d01d-46b9-a5ea-67636806830b"
    /// Secure firmware's service of one notification, furble's "notification 3".
    public static let thirdNotificationService = "804daa8e-ffeb-4ab3-8e75-6edd7303208d"
    public static let shutterService = "6514eb81-4e8f-458d-aa2a-e691336cdfac"
    public static let geotagService = "3b46ec2b-48ba-41fd-b1b8-ed860b60d22b"

    /// Basic: the advertised pairing token is written here.
    public static let pairingToken = GATTCharacteristicID(service: pairService, characteristic: "aba356eb-9633-4e60-b73f-f52516dbd671")
    /// Basic: the remote's name, shown in the camera's list of paired devices.
    public static let remoteName = GATTCharacteristicID(service: pairService, characteristic: "85b9163e-62d1-49ff-a6f5-054b4630d4a1")
    /// Secure: the same name characteristic, in the secure pairing service.
    public static let secureRemoteName = GATTCharacteristicID(service: securePairService, characteristic: "85b9163e-62d1-49ff-a6f5-054b4630d4a1")
    /// Secure: the 4-byte status read and written back acknowledged.
    public static let secureStatus = GATTCharacteristicID(service: securePairService, characteristic: "f557d96b-8284-4667-8793-b971c1deca2a")
    /// Indications the phone app subscribes to (furble's IND1–IND3); their content is not known.
    public static let indication1 = GATTCharacteristicID(service: configurationService, characteristic: "a68e3f66-0fcc-4395-8d4c-aa980b5877fa")
    public static let indication2 = GATTCharacteristicID(service: configurationService, characteristic: "bd17ba04-b76b-4892-a545-b73ba1f74dae")
    public static let indication3 = GATTCharacteristicID(service: configurationService, characteristic: "049ec406-ef75-4205-a390-08fe209c51f0")
    /// Notifies `02 00` when the camera has registered the remote (``Notification/configured``).
    public static let configured = GATTCharacteristicID(service: configurationService, characteristic: "f9150137-5d40-4801-a8dc-f7fc5b01da50")
    /// Notifies `01 00` when the camera wants a position (``Notification/positionRequested``).
    public static let geotagRequest = GATTCharacteristicID(service: configurationService, characteristic: "ad06c7b7-f41a-46f4-a29a-712055319122")
    /// Secure: how often, in seconds (u16 little-endian), the camera asks for a position.
    public static let geotagSyncInterval = GATTCharacteristicID(service: notificationService, characteristic: "c95d91ae-b247-4d6d-8661-7dd5d6a0f85b")
    /// Secure: notifications the phone app subscribes to that the remote must have; their
    /// meaning is not known.
    public static let secureRequiredNotifications: [GATTCharacteristicID] = [
        GATTCharacteristicID(service: notificationService, characteristic: "bf6dc9cf-3606-4ec9-a4c8-d77576e93ea4"),
        GATTCharacteristicID(service: notificationService, characteristic: "75823784-fbb7-4b71-abae-cd9a34072e3c"),
    ]
    /// Secure: furble's "notification 3", which it subscribes to among the required ones (its
    /// meaning is not known). The remote driver subscribes to it as furble does.
    public static let secureThirdNotification = GATTCharacteristicID(service: thirdNotificationService, characteristic: "7170fd5a-56d9-4c19-b043-7a7047d8e1a0")
    /// Secure: notifications subscribed to when the camera has them (furble carries on without);
    /// their meaning is not known.
    public static let secureOptionalNotifications: [GATTCharacteristicID] = [
        GATTCharacteristicID(service: configurationService, characteristic: "e6692c5c-b7cd-44f4-95fc-eda07ce32560"),
        GATTCharacteristicID(service: notificationService, characteristic: "aab609c4-94dd-4d89-bc60-665d5090b828"),
        GATTCharacteristicID(service: notificationService, characteristic: "2a125640-706d-4dd1-b420-c0f4ab93c361"),
        GATTCharacteristicID(service: notificationService, characteristic: "82a9f452-c5ce-4ef5-8203-3fc9a47f8171"),
        GATTCharacteristicID(service: notificationService, characteristic: "deef7187-3f43-4364-9e22-11a8c8a15951"),
    ]
    /// Each button action is two writes here: ``ShutterAction/header`` then the action.
    public static let shutter = GATTCharacteristicID(service: shutterService, characteristic: "7fcf49c6-4ff0-4777-a03d-1a79166af7a8")
    /// The position and time, ``GeotagFix``.
    public static let geotag = GATTCharacteristicID(service: geotagService, characteristic: "0f36ec14-29e5-411a-a1b6-64ee8383f090")

    /// Services advertised by a basic camera open for pairing (furble `FujifilmBasic.cpp`).
    public static let basicAdvertisedServices = ["af854c2e-b214-458e-97e2-912c4ecf2cb8", "117c4142-edd4-4c77-8696-dd18eebb770a"]
    /// The service a secure camera advertises while open for pairing (furble `FujifilmSecure.cpp`).
    public static let secureAdvertisedService = "a9d2b304-e8d6-4902-8336-352b772d7597"

    /// The characteristics both generations share.
    static let common: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: configurationService, characteristics: [
            GATTCharacteristicLayout(uuid: indication1.characteristic, flags: ["indicate"]),
            GATTCharacteristicLayout(uuid: indication2.characteristic, flags: ["indicate"]),
            GATTCharacteristicLayout(uuid: configured.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: geotagRequest.characteristic, flags: ["notify"]),
            GATTCharacteristicLayout(uuid: indication3.characteristic, flags: ["indicate"]),
        ]),
        GATTServiceLayout(uuid: shutterService, characteristics: [GATTCharacteristicLayout(uuid: shutter.characteristic, flags: ["write"])]),
        GATTServiceLayout(uuid: geotagService, characteristics: [GATTCharacteristicLayout(uuid: geotag.characteristic, flags: ["write"])]),
    ]

    /// The GATT database a basic camera offers: the pairing, configuration, shutter and geotag
    /// services of gkoh/furble `lib/furble/Fujifilm.h` and `FujifilmBasic.h`, with the properties
    /// furble uses (it writes the token, the name, the shutter and the fix with a response, and
    /// subscribes for indications on IND1–IND3 and notifications on the others, `Fujifilm.cpp`
    /// `subscribe`). furble is the only published source for Fujifilm's table; it names no
    /// characteristic it does not use beyond these.
    public static let basicServices: [GATTServiceLayout] = [
        GATTServiceLayout(uuid: pairService, characteristics: [
            GATTCharacteristicLayout(uuid: pairingToken.characteristic, flags: ["write"]),
            GATTCharacteristicLayout(uuid: remoteName.characteristic, flags: ["write"]),
        ]),
    ] + common

    /// The GATT database a secure camera offers (every characteristic needs a bonded link): the
    /// services and characteristics furble's `FujifilmSecure.{h,cpp}` uses, with the
    /// subscriptions of `FujifilmSecure::_connect` (notification 1 to 11; notification 3 in a
    /// service of its own) and the status read and written back. furble also names a primary
    /// service `731893f9-744e-4899-b7e3-174106ff2b82` and a characteristic
    /// `98934b2c-756c-4632-aa2f-dcba1bfec824` without using them or saying where the
    /// characteristic sits, so neither is listed. The status, the name and the sync interval
    /// are read and written (with a response) as furble does, over the bonded link.
    public static let secureServices: [GATTServiceLayout] = {
        var services = [
            GATTServiceLayout(uuid: securePairService, characteristics: [
                GATTCharacteristicLayout(uuid: secureStatus.characteristic, flags: ["read", "write", "encrypt-read", "encrypt-write"]),
                GATTCharacteristicLayout(uuid: secureRemoteName.characteristic, flags: ["write", "encrypt-write"]),
            ]),
            GATTServiceLayout(uuid: notificationService, characteristics: [
                GATTCharacteristicLayout(uuid: geotagSyncInterval.characteristic, flags: ["write", "encrypt-write", "notify"]),
            ]),
            GATTServiceLayout(uuid: thirdNotificationService, characteristics: [
                GATTCharacteristicLayout(uuid: secureThirdNotification.characteristic, flags: ["notify"]),
            ]),
        ] + common
        for extra in secureRequiredNotifications + secureOptionalNotifications {
            let index = services.firstIndex { $0.uuid == extra.service }!
            services[index].characteristics.append(GATTCharacteristicLayout(uuid: extra.characteristic, flags: ["notify"]))
        }
        return services
    }()

    /// What a client needs of any Fujifilm camera: the shutter and the camera's notifications.
    public static let services: [GATTServiceLayout] = common

    // MARK: - Advertisement

    /// The manufacturer data's first byte (after the company) on a basic camera: a pairing token follows.
    public static let tokenAdvertisementType: UInt8 = 0x02
    /// Bytes of a basic camera's pairing token.
    public static let tokenLength = 4
    /// Bytes of a secure camera's advertised serial.
    public static let serialLength = 5

    /// Which pairing a camera speaks, with what its advertisement gave: the driver's init takes it,
    /// and the app stores it with the camera.
    public enum Generation: Hashable, Sendable {
        /// Firmware before July 2025: the 4-byte pairing token.
        case basic(token: [UInt8])
        /// Firmware from July 2025: the camera's 5-byte serial (what it advertises when it waits
        /// for a remote it knows).
        case secure(serial: [UInt8])
    }

    /// The generation whose advertisement gave `token` (a ``RecognizedCamera/token``): 4 bytes
    /// are a basic pairing token, 5 a secure serial; nil for anything else.
    public static func generation(fromToken token: [UInt8]) -> Generation? {
        switch token.count {
        case tokenLength: .basic(token: token)
        case serialLength: .secure(serial: token)
        default: nil
        }
    }

    /// Where on the camera a remote is registered.
    public static let howToPair = "on the camera, open Network/USB Setting (Connection Setting on older bodies) > "
        + "Bluetooth Settings > Pairing Registration, then connect within the time it shows"

    /// A Fujifilm camera from its advertisement: company `0x04D8`, then either type `02` and a
    /// 4-byte pairing token (basic, registration open), or a type byte and the 5-byte serial
    /// (secure: open when it advertises ``secureAdvertisedService``, waiting for a remote it knows
    /// when it advertises ``securePairService``). A basic camera's service without a token is a
    /// camera whose registration is closed.
    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        let advertised = Set(advertisement.serviceUUIDs)
        func advertises(_ uuid: String) -> Bool { advertised.contains(BluetoothUUID.normalized(uuid)) }
        let pairing: RecognizedCamera.Pairing
        var token: [UInt8] = []
        switch generation(in: advertisement) {
        case .basic(let advertisedToken)?:
            pairing = .open
            token = advertisedToken
        case .secure(let serial)?:
            token = serial
            pairing = advertises(secureAdvertisedService) ? .open : advertises(securePairService) ? .closed : .unknown
        case nil:
            guard basicAdvertisedServices.contains(where: advertises) else { return nil }
            pairing = .closed
        }
        return RecognizedCamera(brand: brand, model: advertisement.name, pairing: pairing, howToPair: howToPair, token: token)
    }

    /// The pairing generation the advertisement shows, with its token or serial; nil when the
    /// manufacturer data is neither form.
    public static func generation(in advertisement: AdvertisementData) -> Generation? {
        guard let data = advertisement.manufacturerData[companyID], let type = data.first else { return nil }
        let rest = Array(data.dropFirst())
        if type == tokenAdvertisementType && rest.count == tokenLength { return .basic(token: rest) }
        if rest.count == serialLength { return .secure(serial: rest) }
        return nil
    }

    /// The manufacturer data (without the company) a camera of `generation` advertises.
    public static func manufacturerData(for generation: Generation, type: UInt8 = tokenAdvertisementType) -> [UInt8] {
        switch generation {
        case .basic(let token): [tokenAdvertisementType] + token
        case .secure(let serial): [type] + serial
        }
    }

    // MARK: - Messages to the camera

    /// A button action on ``shutter``: the remote writes ``header``, then the action's bytes.
    public enum ShutterAction: UInt8, CaseIterable, Hashable, Sendable {
        /// Both buttons up.
        case release = 0x00
        /// Full press: takes a picture, or opens the shutter in bulb until ``release``.
        case press = 0x02
        /// Half press: focus.
        case focus = 0x03

        /// The first of the two writes of every action.
        public static let header: [UInt8] = [0x01, 0x00]

        /// The second write.
        public var bytes: [UInt8] { [rawValue, 0x00] }

        /// Both writes, in order.
        public var writes: [[UInt8]] { [Self.header, bytes] }

        /// The action a second write names; throws for anything else.
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 2 else { throw .length(.fujifilm, of: "shutter action", expected: 2, got: bytes.count) }
            guard bytes[1] == 0, let action = ShutterAction(rawValue: bytes[0]) else { throw .unknown(.fujifilm, of: "shutter action", bytes) }
            self = action
        }
    }

    /// Secure pairing's status: the camera's 4 bytes, written back with the last set to ``acknowledgedByte``.
    public struct SecureStatus: Hashable, Sendable {
        public static let acknowledgedByte: UInt8 = 0x20
        /// The status as read.
        public let bytes: [UInt8]

        /// The status read; throws unless it has 4 bytes.
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 4 else { throw .length(.fujifilm, of: "pairing status", expected: 4, got: bytes.count) }
            self.bytes = bytes
        }

        /// What the remote writes back.
        public var acknowledgement: [UInt8] { Array(bytes.prefix(3)) + [Self.acknowledgedByte] }

        /// Whether `bytes` acknowledge this status.
        public func isAcknowledged(by bytes: [UInt8]) -> Bool { bytes == acknowledgement }
    }

    /// The secure camera's position request interval, u16 little-endian seconds.
    public struct SyncInterval: Hashable, Sendable {
        public var seconds: UInt16
        /// What the phone app and furble set.
        public static let standard = SyncInterval(seconds: 10)

        public init(seconds: UInt16) { self.seconds = seconds }

        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == 2 else { throw .length(.fujifilm, of: "geotag sync interval", expected: 2, got: bytes.count) }
            seconds = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        }

        public var bytes: [UInt8] { [UInt8(truncatingIfNeeded: seconds), UInt8(truncatingIfNeeded: seconds >> 8)] }
    }

    /// A position and its UTC time as the camera takes it on ``geotag``: 23 bytes, little-endian
    /// int32 latitude ×10⁷, int32 longitude ×10⁷, int32 altitude in metres, 4 zero bytes, u16 year,
    /// then one byte each for day, month, hour, minute, second (furble's `geotag_t` puts the day
    /// before the month).
    public struct GeotagFix: Hashable, Sendable {
        public static let length = 23
        /// Degrees north ×10⁷.
        public var latitudeE7: Int32
        /// Degrees east ×10⁷.
        public var longitudeE7: Int32
        /// Metres above sea level (0 when unknown).
        public var altitudeMetres: Int32
        /// When the fix was taken, UTC.
        public var time: UTCTime

        public init(latitudeE7: Int32, longitudeE7: Int32, altitudeMetres: Int32, time: UTCTime) {
            self.latitudeE7 = latitudeE7
            self.longitudeE7 = longitudeE7
            self.altitudeMetres = altitudeMetres
            self.time = time
        }

        /// From degrees and metres (rounded to the nearest unit the camera keeps) and a fix time in
        /// milliseconds since the Unix epoch.
        public init(latitude: Double, longitude: Double, altitude: Double?, fixTimeMilliseconds: UInt64) {
            self.init(latitudeE7: Int32(clamping: Int64((latitude * 1e7).rounded())),
                      longitudeE7: Int32(clamping: Int64((longitude * 1e7).rounded())),
                      altitudeMetres: Int32(clamping: Int64((altitude ?? 0).rounded())),
                      time: UTCTime(unixSeconds: Int64(fixTimeMilliseconds / 1000)))
        }

        public var bytes: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(Self.length)
            for value in [latitudeE7, longitudeE7, altitudeMetres] { out += littleEndian(UInt32(bitPattern: value)) }
            out += [0, 0, 0, 0]
            out += [UInt8(truncatingIfNeeded: time.year), UInt8(truncatingIfNeeded: time.year >> 8)]
            out += [time.day, time.month, time.hour, time.minute, time.second]
            return out
        }

        /// The fix a camera received; throws for another length or an impossible date.
        public init(decoding bytes: [UInt8]) throws(MalformedMessage) {
            guard bytes.count == Self.length else { throw .length(.fujifilm, of: "geotag fix", expected: Self.length, got: bytes.count) }
            func int32(at index: Int) -> Int32 {
                Int32(bitPattern: UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
            }
            let time = UTCTime(year: UInt16(bytes[16]) | UInt16(bytes[17]) << 8, month: bytes[19], day: bytes[18],
                               hour: bytes[20], minute: bytes[21], second: bytes[22])
            guard time.isValid else { throw .unknown(.fujifilm, of: "geotag time", Array(bytes[16...])) }
            self.init(latitudeE7: int32(at: 0), longitudeE7: int32(at: 4), altitudeMetres: int32(at: 8), time: time)
        }

        private func littleEndian(_ value: UInt32) -> [UInt8] {
            (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }

    /// A UTC calendar time to the second.
    public struct UTCTime: Hashable, Sendable {
        public var year: UInt16
        public var month: UInt8
        public var day: UInt8
        public var hour: UInt8
        public var minute: UInt8
        public var second: UInt8

        public init(year: UInt16, month: UInt8, day: UInt8, hour: UInt8, minute: UInt8, second: UInt8) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }

        /// The UTC date and time of `unixSeconds`.
        public init(unixSeconds: Int64) {
            let time = CalendarTime(unixSeconds: unixSeconds)
            self.init(year: UInt16(clamping: time.year), month: UInt8(time.month), day: UInt8(time.day), hour: UInt8(time.hour),
                      minute: UInt8(time.minute), second: UInt8(time.second))
        }

        var isValid: Bool { (1...12).contains(month) && (1...31).contains(day) && hour < 24 && minute < 60 && second < 61 }
    }

    // MARK: - Messages from the camera

    /// What the camera notifies.
    public enum Notification: Hashable, Sendable {
        /// On ``configured``: the camera registered this remote (`02 00`).
        case configured
        /// On ``geotagRequest``: the camera wants a position (`01 00`).
        case positionRequested

        /// The message on `characteristic`; nil for a characteristic whose messages carry no
        /// known meaning (the secure generation's others), a throw for a malformed one.
        public static func parse(_ bytes: [UInt8], on characteristic: GATTCharacteristicID) throws(MalformedMessage) -> Notification? {
            switch characteristic {
            case Fujifilm.configured: return try expect(bytes, [0x02, 0x00], named: "registration notification", giving: .configured)
            case Fujifilm.geotagRequest: return try expect(bytes, [0x01, 0x00], named: "position request", giving: .positionRequested)
            default: return nil
            }
        }

        /// The bytes the camera sends for this notification, and where.
        public var message: (characteristic: GATTCharacteristicID, bytes: [UInt8]) {
            switch self {
            case .configured: (Fujifilm.configured, [0x02, 0x00])
            case .positionRequested: (Fujifilm.geotagRequest, [0x01, 0x00])
            }
        }

        private static func expect(_ bytes: [UInt8], _ wanted: [UInt8], named name: String, giving notification: Notification) throws(MalformedMessage) -> Notification {
            guard bytes.count >= 2 else { throw .length(.fujifilm, of: name, expected: 2, got: bytes.count) }
            guard Array(bytes.prefix(2)) == wanted else { throw .unknown(.fujifilm, of: name, bytes) }
            return notification
        }
    }
}
