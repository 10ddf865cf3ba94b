public import CameraProtocols

/// A Canon EOS camera in its Remote Bluetooth mode (``Canon``), as a BR-E1 remote finds it: it
/// advertises the remote service while its remote pairing screen is open, learns a remote's
/// name then and accepts it by that name afterwards, takes a picture when the release goes down
/// in a still drive mode (at once, or two seconds later), starts or stops a movie when it goes
/// down in movie mode, and says nothing back. With its drive mode not Remote/Timed (the
/// ``setRemoteEnabled(_:)`` switch) it accepts every press and takes no picture.
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

    /// Every write it accepted or refused, in order.
    public private(set) var writeCount = 0
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
        writeCount += 1
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
