public import CameraProtocols
public import GATT

/// A Canon EOS camera in its Remote Bluetooth mode (``Canon``), as a BR-E1 remote finds it: it
/// advertises the remote service while its remote pairing screen is open, learns a remote's
/// name then and accepts it by that name afterwards, takes a picture when the release goes down
/// in a still drive mode (at once, or two seconds later), starts or stops a movie when it goes
/// down in movie mode, and says nothing back. With its drive mode not Remote/Timed (the
/// ``setRemoteEnabled(_:)`` switch) it accepts every press and takes no picture. Its GATT table
/// is the remote mode's whole published one (``Canon/services``), which has nothing to read.
public actor CanonBody: BasicsBackedBody {
    public nonisolated let brand = CameraBrand.canon
    public nonisolated let model: String
    public nonisolated let address: String
    public nonisolated let services = Canon.services
    public nonisolated let requiresBond = true

    public var basics: BodyBasics
    private let twoSecondDelay: Duration
    private let clock: any Clock<Duration>
    private var pairedRemotes: Set<String>
    /// The remote identified itself on this connection.
    private var identified = false
    private var control = Canon.RemoteControl.allReleased

    /// The control values it accepted, in order.
    public private(set) var controls: [Canon.RemoteControl] = []
    public private(set) var recording = false
    /// Whether autofocus is held.
    public private(set) var focusing = false

    /// - Parameters:
    ///   - pairedRemotes: the names of remotes it already knows.
    ///   - twoSecondDelay: how long the 2-second drive mode waits.
    public init(address: String = "C0:CA:4E:00:00:02", model: String = "EOS R6", pairedRemotes: Set<String> = ["unleashed"],
                pairingOpen: Bool = false, twoSecondDelay: Duration = .seconds(2), clock: any Clock<Duration> = ContinuousClock()) {
        self.address = address
        self.model = model
        self.pairedRemotes = pairedRemotes
        self.twoSecondDelay = twoSecondDelay
        self.clock = clock
        basics = BodyBasics(pairingOpen: pairingOpen)
    }

    /// The remotes it knows by name.
    public var knownRemotes: Set<String> { pairedRemotes }

    public func advertisement() -> AdvertisementData {
        AdvertisementData(name: model, serviceUUIDs: basics.pairingOpen ? [Canon.remoteService] : [])
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        basics.record(value, to: characteristic)
        switch characteristic {
        case Canon.remotePairing:
            guard let identify = try? Canon.RemoteIdentify(decoding: value) else { throw .invalidAttributeValueLength }
            if basics.pairingOpen {
                pairedRemotes.insert(identify.name)
                basics.pairingOpen = false
            }
            guard pairedRemotes.contains(identify.name) else { throw .insufficientAuthentication }
            identified = true
        case Canon.remoteControl:
            guard identified else { throw .insufficientAuthentication }
            guard let next = try? Canon.RemoteControl(decoding: value) else { throw .invalidAttributeValueLength }
            controls.append(next)
            apply(next)
        default:
            throw .writeNotPermitted
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        throw .readNotPermitted
    }

    // MARK: -

    private func apply(_ next: Canon.RemoteControl) {
        let releaseWentDown = next.buttons.contains(.release) && !control.buttons.contains(.release)
        focusing = next.buttons.contains(.focus)
        control = next
        guard releaseWentDown else { return }
        switch next.mode {
        case .movie:
            recording.toggle()
        case .immediate where basics.remoteEnabled:
            basics.picturesTaken += 1
        case .twoSecond where basics.remoteEnabled:
            let (clock, delay) = (clock, twoSecondDelay)
            Task {
                try? await clock.sleep(for: delay)
                self.pictureTaken()
            }
        case .immediate, .twoSecond:
            break
        }
    }

    private func pictureTaken() {
        basics.picturesTaken += 1
    }

    public func linkEnded() {
        control = .allReleased
        focusing = false
        identified = false
    }
}

/// A Canon EOS camera in its smart-device mode (``Canon``), as the Camera Connect app finds it:
/// after the handshake it shows its pairing dialog, which the person accepts a moment later
/// while pairing is open (``setPairingMode(_:)``) and declines otherwise, and it accepts a
/// client whose id it already knows at once. In shooting mode a shutter press reports focus,
/// takes a picture and reports it; video start and stop are reported; a location
/// acknowledgement is answered "wanted" and fixes are kept.
///
/// It serves the smart-device mode's whole published table (``Canon/smartServices``) and
/// answers reads with what 3bl3gamer/canon-bluetooth-control read from an EOS M6: Device
/// Information (`"Canon Inc."`, model number, firmware and software `"1.0.0"`, each
/// NUL-terminated), `01` on 00010005, `07000000` on 0001000b, `0f000000` and `09000000` on
/// 00020001 and 00020005, `010101` on 00030001, and the access point's SSID (20 bytes,
/// zero-padded) and 8-digit password, zeros until `0a` is written to 00020002. It has no Wi-Fi:
/// any other write there (`01` starts the access point) and playback buttons are refused with
/// ATT "write not permitted".
public actor CanonSmartBody: BasicsBackedBody {
    public nonisolated let brand = CameraBrand.canon
    public nonisolated let model: String
    public nonisolated let address: String
    public nonisolated let services = Canon.smartServices
    public nonisolated let requiresBond = true
    /// What Device Information's model number answers; an EOS M6 answers `32c5`, the only one
    /// published.
    public nonisolated let modelNumber: String

    public var basics: BodyBasics
    private let confirmTime: Duration
    /// Whether `0a` on ``Canon/wifiControl`` filled the access point's SSID and password.
    private var wifiInfoFilled = false
    private let clock: any Clock<Duration>
    private var knownClients: Set<[UInt8]>
    private var offered: [UInt8]?
    private var accepted = false
    private var shooting = false
    private var locationOn = false
    private var focusFinds = true

    public private(set) var recording = false
    public private(set) var lastFix: Canon.GeoFix?
    /// The ids of the clients it accepted.
    public var pairedClients: Set<[UInt8]> { knownClients }

    /// - Parameters:
    ///   - confirmTime: how long the person takes to press OK in the pairing dialog.
    ///   - modelNumber: what Device Information's model number answers.
    public init(address: String = "C0:CA:4E:00:00:03", model: String = "EOS RP", modelNumber: String = "32c5", knownClients: Set<[UInt8]> = [],
                pairingOpen: Bool = true, confirmTime: Duration = .milliseconds(20), clock: any Clock<Duration> = ContinuousClock()) {
        self.address = address
        self.model = model
        self.modelNumber = modelNumber
        self.knownClients = knownClients
        self.confirmTime = confirmTime
        self.clock = clock
        basics = BodyBasics(pairingOpen: pairingOpen)
    }

    public func advertisement() -> AdvertisementData {
        AdvertisementData(name: model, serviceUUIDs: [Canon.handshakeService])
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        basics.record(value, to: characteristic)
        switch characteristic {
        case Canon.handshakeName, Canon.handshakeControl:
            guard let message = try? Canon.SmartIdentify(decoding: value, on: characteristic) else { throw .invalidAttributeValueLength }
            handshake(message)
        case Canon.sessionCommand:
            guard let command = try? Canon.SessionCommand(decoding: value) else { throw .invalidAttributeValueLength }
            guard accepted else { throw .insufficientAuthentication }
            shooting = command == .shooting
        case Canon.shootingButtons:
            guard let button = try? Canon.SmartShutter(decoding: value) else { throw .invalidAttributeValueLength }
            guard accepted else { throw .insufficientAuthentication }
            if shooting { press(button) }
        case Canon.locationData where value == Canon.locationAcknowledge:
            guard accepted else { throw .insufficientAuthentication }
            locationOn = true
            basics.send(Canon.LocationState.wanted.bytes, on: Canon.locationStatus)
        case Canon.locationData:
            guard locationOn, let fix = try? Canon.GeoFix(decoding: value) else { throw .writeNotPermitted }
            lastFix = fix
        case Canon.wifiControl where value == Self.fillWiFiInfo:
            wifiInfoFilled = true
        default:
            throw .writeNotPermitted
        }
    }

    /// Written to ``Canon/wifiControl``: fills the access point's SSID and password.
    static let fillWiFiInfo: [UInt8] = [0x0A]

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case Canon.manufacturerName: Self.terminated("Canon Inc.")
        case Canon.modelNumber: Self.terminated(modelNumber)
        case Canon.firmwareRevision, Canon.softwareRevision: Self.terminated("1.0.0")
        case Canon.handshakeUnknown: [0x01]
        case Canon.handshakeFeatures: [0x07, 0x00, 0x00, 0x00]
        case Canon.wifiUnknown1: [0x0F, 0x00, 0x00, 0x00]
        case Canon.wifiUnknown2: [0x09, 0x00, 0x00, 0x00]
        case Canon.operationUnknown: [0x01, 0x01, 0x01]
        case Canon.wifiSSID:
            // An EOS M6 answers "EOSM6-858_Canon0A" and three zeros.
            wifiInfoFilled ? Array((Array(accessPointSSID.utf8) + [UInt8](repeating: 0, count: 20)).prefix(20)) : [UInt8](repeating: 0, count: 20)
        case Canon.wifiPassword: wifiInfoFilled ? Array(accessPointPassword.utf8) : [UInt8](repeating: 0, count: 8)
        default: throw .readNotPermitted
        }
    }

    private static func terminated(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    /// The model without spaces, three hex digits of the address, `_Canon0A`, as an EOS M6 names its access point.
    private var accessPointSSID: String {
        String(model.filter { $0 != " " }.prefix(8)) + "-" + String(address.filter(\.isHexDigit).suffix(3)) + "_Canon0A"
    }

    /// Eight digits from the address.
    private var accessPointPassword: String {
        String(address.filter(\.isHexDigit).suffix(8).map { Character(String(($0.hexDigitValue ?? 0) % 10)) })
    }

    public func linkEnded() {
        (offered, accepted, shooting, locationOn) = (nil, false, false, false)
    }

    /// Whether a shutter press finds focus.
    public func setFocusFinds(_ finds: Bool) { focusFinds = finds }

    /// Asks the client for positions, as the camera does when its GPS setting wants the phone's.
    public func requestLocation() {
        basics.send(Canon.LocationState.setup.bytes, on: Canon.locationStatus)
    }

    // MARK: -

    private func handshake(_ message: Canon.SmartIdentify) {
        switch message {
        case .identity(let id): offered = id
        case .announce, .nickname, .deviceType, .finish: break
        }
        guard case .deviceType = message, let offered else { return }
        if knownClients.contains(offered) {
            answer(.accepted, for: offered)
        } else {
            let (clock, delay, open) = (clock, confirmTime, basics.pairingOpen)
            Task {
                try? await clock.sleep(for: delay)
                self.answer(open ? .accepted : .rejected, for: offered)
            }
        }
    }

    private func answer(_ answer: Canon.PairingAnswer, for id: [UInt8]) {
        guard offered == id, basics.isLinked else { return }
        if answer == .accepted {
            knownClients.insert(id)
            accepted = true
        }
        basics.send(answer.bytes, on: Canon.handshakeName)
    }

    private func press(_ button: Canon.SmartShutter) {
        switch button {
        case .press:
            if focusFinds {
                basics.send(Canon.ShootingState.focusAcquired.bytes, on: Canon.shootingState)
                basics.picturesTaken += 1
            }
            basics.send(Canon.ShootingState.idle.bytes, on: Canon.shootingState)
        case .release:
            break
        case .startVideo:
            recording = true
            basics.send(Canon.ShootingState.recording.bytes, on: Canon.shootingState)
        case .stopVideo:
            recording = false
            basics.send(Canon.ShootingState.idle.bytes, on: Canon.shootingState)
        }
    }
}
