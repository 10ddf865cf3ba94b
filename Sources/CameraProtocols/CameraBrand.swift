/// The cameras whose own Bluetooth LE remote protocol the project speaks.
///
/// These protocols are the makers' (GoPro publishes Open GoPro) or documented by independent
/// open implementations that agree on the bytes (Sony, Canon, Fujifilm, Nikon); the sources are
/// cited beside each golden vector in `Protocol/cameras/`.
public import GATT

public enum CameraBrand: String, CaseIterable, Hashable, Sendable, Codable {
    case gopro, sony, canon, fujifilm, nikon

    /// The maker's name as people write it.
    public var displayName: String {
        switch self {
        case .gopro: "GoPro"
        case .sony: "Sony"
        case .canon: "Canon"
        case .fujifilm: "Fujifilm"
        case .nikon: "Nikon"
        }
    }
}

/// What a device put in its advertisement and scan response, as BlueZ reports it on `Device1`.
public struct AdvertisementData: Hashable, Sendable {
    /// The local name (`Name`/`Alias`).
    public var name: String?
    /// Advertised service UUIDs, normalized.
    public var serviceUUIDs: [String]
    /// Manufacturer-specific data by company identifier, without the identifier's two bytes.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by normalized service UUID.
    public var serviceData: [String: [UInt8]]

    public init(name: String? = nil, serviceUUIDs: [String] = [], manufacturerData: [UInt16: [UInt8]] = [:],
                serviceData: [String: [UInt8]] = [:]) {
        self.name = name
        self.serviceUUIDs = serviceUUIDs.map(BluetoothUUID.normalized)
        self.manufacturerData = manufacturerData
        self.serviceData = Dictionary(serviceData.map { (BluetoothUUID.normalized($0.key), $0.value) }) { first, _ in first }
    }
}

/// A camera recognised from its advertisement.
public struct RecognizedCamera: Hashable, Sendable {
    /// Whether the camera accepts a new pairing now.
    public enum Pairing: String, Hashable, Sendable {
        /// It says it is open for pairing.
        case open
        /// It says it is not; ``RecognizedCamera/howToPair`` says which menu item opens it.
        case closed
        /// Its advertisement does not say.
        case unknown
    }

    public var brand: CameraBrand
    /// The model, when the advertisement names it.
    public var model: String?
    public var pairing: Pairing
    /// What to do on the camera to pair it (a menu path), in words for the person holding it.
    public var howToPair: String
    /// Bytes from the advertisement the pairing or reconnect flow needs (Fujifilm's pairing
    /// token, a Nikon camera's remote ID); empty when none.
    public var token: [UInt8]

    public init(brand: CameraBrand, model: String? = nil, pairing: Pairing, howToPair: String, token: [UInt8] = []) {
        self.brand = brand
        self.model = model
        self.pairing = pairing
        self.howToPair = howToPair
        self.token = token
    }
}

/// One brand's remote protocol as a scan and a connection see it: how its cameras advertise and
/// which GATT services they offer. Each brand's namespace (``GoPro``, ``Sony``, …) conforms.
public protocol CameraRemoteProtocol: Sendable {
    static var brand: CameraBrand { get }
    /// The services a client needs from the camera; a device without them is not this brand's
    /// camera in remote mode.
    static var services: [GATTServiceLayout] { get }
    /// The camera this advertisement belongs to, or nil when it is not this brand's.
    static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera?
    /// Whether the camera must be bonded (paired through BlueZ) before its remote answers.
    static var requiresBond: Bool { get }
}

extension CameraRemoteProtocol {
    /// Most remotes need an encrypted, bonded link.
    public static var requiresBond: Bool { true }
}

/// Recognises cameras from advertisements.
public enum CameraAdvertisement {
    /// Every brand's protocol, in the order they are tried.
    public static let protocols: [any CameraRemoteProtocol.Type] = [GoPro.self, Sony.self, Canon.self, Fujifilm.self, Nikon.self]

    /// The camera advertising `advertisement`, if it is one this project can drive.
    public static func recognize(_ advertisement: AdvertisementData) -> RecognizedCamera? {
        for known in protocols {
            if let camera = known.recognize(advertisement) { return camera }
        }
        return nil
    }

    /// The protocol of `brand`.
    public static func remoteProtocol(of brand: CameraBrand) -> (any CameraRemoteProtocol.Type)? {
        protocols.first { $0.brand == brand }
    }
}
