public import CameraProtocols
public import GATT

/// A simulated Fujifilm camera of either pairing generation.
///
/// It advertises its token (basic) or serial (secure) as ``Fujifilm`` describes, accepts a
/// remote that shows the right token or acknowledges its status, registers the remote's name
/// while its Pairing Registration is open (a name registered before is accepted any time),
/// notifies `02 00` once registered and `01 00` to ask for a position, and takes a picture on
/// each full press. Shutter writes before registration, or an action without its `01 00`
/// header, are refused with ATT "write not permitted"; the camera's remote switch off refuses
/// them the same way.
public actor FujifilmBody: BasicsBackedBody {
    public nonisolated let brand = CameraBrand.fujifilm
    public nonisolated let model: String
    public nonisolated let address: String
    /// Its pairing generation, with the token or serial it advertises.
    public nonisolated let generation: Fujifilm.Generation
    public nonisolated var services: [GATTServiceLayout] {
        switch generation {
        case .basic: Fujifilm.basicServices
        case .secure: Fujifilm.secureServices
        }
    }
    public nonisolated var requiresBond: Bool {
        if case .secure = generation { return true }
        return false
    }

    public var basics: BodyBasics
    /// The secure generation's status, read and acknowledged at every connection.
    private let status: [UInt8]
    /// Names of the remotes this camera registered.
    public private(set) var registeredRemotes: Set<String> = []
    /// Whether this connection's remote showed the token or acknowledged the status.
    private var authenticated = false
    private var registered = false
    private var headerWritten = false
    /// The buttons held now.
    public private(set) var buttons = Fujifilm.ShutterAction.release
    /// The last position written.
    public private(set) var lastFix: Fujifilm.GeotagFix?
    /// The sync interval the secure handshake set.
    public private(set) var syncInterval: Fujifilm.SyncInterval?

    public init(address: String = "C0:CA:4E:00:00:04", model: String = "X-T30",
                generation: Fujifilm.Generation = .basic(token: [0x1A, 0x2B, 0x3C, 0x4D]),
                status: [UInt8] = [0xB4, 0x12, 0x00, 0x00], pairingOpen: Bool = true) {
        self.address = address
        self.model = model
        self.generation = generation
        self.status = status
        basics = BodyBasics(pairingOpen: pairingOpen)
    }


    public func advertisement() -> AdvertisementData {
        switch generation {
        case .basic:
            guard basics.pairingOpen else { return AdvertisementData(name: model, serviceUUIDs: Fujifilm.basicAdvertisedServices) }
            return AdvertisementData(name: model, serviceUUIDs: Fujifilm.basicAdvertisedServices,
                                     manufacturerData: [Fujifilm.companyID: Fujifilm.manufacturerData(for: generation)])
        case .secure:
            let service = basics.pairingOpen ? Fujifilm.secureAdvertisedService : Fujifilm.securePairService
            return AdvertisementData(name: model, serviceUUIDs: [service],
                                     manufacturerData: [Fujifilm.companyID: Fujifilm.manufacturerData(for: generation)])
        }
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        basics.record(value, to: characteristic)
        switch (characteristic, generation) {
        case (Fujifilm.pairingToken, .basic(let token)):
            guard value == token else { throw .writeNotPermitted }
            authenticated = true
        case (Fujifilm.secureStatus, .secure):
            guard (try? Fujifilm.SecureStatus(decoding: status))?.isAcknowledged(by: value) == true else { throw .writeNotPermitted }
            authenticated = true
        case (Fujifilm.remoteName, .basic), (Fujifilm.secureRemoteName, .secure):
            try register(String(decoding: value, as: UTF8.self))
        case (Fujifilm.geotagSyncInterval, .secure):
            guard registered else { throw .writeNotPermitted }
            do { syncInterval = try Fujifilm.SyncInterval(decoding: value) } catch { throw .invalidAttributeValueLength }
        case (Fujifilm.shutter, _):
            try press(value)
        case (Fujifilm.geotag, _):
            guard registered else { throw .writeNotPermitted }
            do { lastFix = try Fujifilm.GeotagFix(decoding: value) } catch { throw .invalidAttributeValueLength }
        default:
            throw .writeNotPermitted
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        guard characteristic == Fujifilm.secureStatus, case .secure = generation else { throw .readNotPermitted }
        return status
    }

    private func register(_ name: String) throws(ATTError) {
        guard authenticated, basics.pairingOpen || registeredRemotes.contains(name) else { throw .writeNotPermitted }
        registeredRemotes.insert(name)
        registered = true
        for notification in [Fujifilm.Notification.configured, .positionRequested] {
            let message = notification.message
            basics.send(message.bytes, on: message.characteristic)
        }
    }

    private func press(_ value: [UInt8]) throws(ATTError) {
        guard registered, basics.remoteEnabled else { throw .writeNotPermitted }
        if value == Fujifilm.ShutterAction.header {
            headerWritten = true
            return
        }
        guard headerWritten, let action = try? Fujifilm.ShutterAction(decoding: value) else { throw .writeNotPermitted }
        headerWritten = false
        if action == .press && buttons != .press { basics.picturesTaken += 1 }
        buttons = action
    }

    public func linkStarted() {
        (authenticated, registered, headerWritten) = (false, false, false)
    }

    public func linkEnded() {
        buttons = .release
    }
}
