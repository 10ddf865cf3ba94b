public import CameraProtocols
public import GATT

/// A Sony camera's side of its Bluetooth remote (``Sony``): it focuses a moment after a
/// half-press and reports it, reports the shutter active at the full press (one picture; held,
/// a bulb exposure), toggles recording on the record button, takes location fixes once the
/// location feature is taken, refuses every button with ATT error `0x90` while its "Bluetooth
/// Rmt Ctrl" setting is off, and drops the link on a command it does not know, as Sony bodies do.
///
/// It serves Sony's whole published GATT table (``Sony/services``). Of the characteristics it
/// does not act on, it answers reads of its firmware version and model name (CC0A, CC0B, US-ASCII
/// as CameraSync reads them) and of Device Name; other reads are refused with ATT "read not
/// permitted" and other writes with "write not permitted", since no source gives their values.
public actor SonyBody: BasicsBackedBody {
    public nonisolated let brand = CameraBrand.sony
    public nonisolated let model: String
    public nonisolated let address: String
    public nonisolated let services = Sony.services
    public nonisolated let requiresBond = true
    /// The model code it advertises.
    public nonisolated let modelCode: UInt16
    /// What CC0A answers.
    public nonisolated let firmwareVersion: String

    public var basics: BodyBasics
    private let focusTime: Duration
    private let clock: any Clock<Duration>
    private let takesTimeZone: Bool
    private var focusFinds = true
    private var shutterReleases = true
    private var halfPressed = false
    private var fullPressed = false
    private var focused = false
    /// Counts half-presses, so that a focus report for an earlier press is dropped.
    private var pressGeneration = 0
    private var locationLocked = false
    private var locationEnabled = false

    /// The button commands it accepted, in order.
    public private(set) var commands: [Sony.ButtonCommand] = []
    public private(set) var recording = false
    /// The last location fix written.
    public private(set) var lastFix: Sony.LocationFix?

    /// - Parameters:
    ///   - focusTime: from the half-press to the focus report.
    ///   - takesTimeZone: whether its location format asks for the time zone (newer bodies).
    ///   - firmwareVersion: what its firmware version characteristic answers.
    public init(address: String = "C0:CA:4E:00:00:01", model: String = "ILCE-7M3", modelCode: UInt16 = 0x4531,
                focusTime: Duration = .milliseconds(10), takesTimeZone: Bool = true, pairingOpen: Bool = false,
                firmwareVersion: String = "3.01", clock: any Clock<Duration> = ContinuousClock()) {
        self.address = address
        self.model = model
        self.modelCode = modelCode
        self.firmwareVersion = firmwareVersion
        self.focusTime = focusTime
        self.takesTimeZone = takesTimeZone
        self.clock = clock
        basics = BodyBasics(pairingOpen: pairingOpen)
    }

    public func advertisement() -> AdvertisementData {
        // Bits 3, 2 and 0 are set in every advertisement the sources show (EF, AF); their meaning is not known.
        var flags: Sony.AdvertisedFlags = [.pairingSupported, .locationSupported, Sony.AdvertisedFlags(rawValue: 0x0D)]
        if basics.pairingOpen { flags.insert(.pairingEnabled) }
        if basics.remoteEnabled { flags.insert(.remoteEnabled) }
        if locationEnabled { flags.insert(.locationEnabled) }
        let data = Sony.Advertisement(protocolVersion: 0x64, modelCode: modelCode, flags: flags)
        return AdvertisementData(name: model, manufacturerData: [Sony.companyID: data.bytes])
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError) {
        basics.record(value, to: characteristic)
        switch characteristic {
        case Sony.command:
            guard basics.remoteEnabled else { throw ATTError(0x90) }
            let command: Sony.ButtonCommand
            do {
                command = try Sony.ButtonCommand(decoding: value)
            } catch {
                dropLink("the camera dropped the link after an invalid command")
                throw .unlikely
            }
            commands.append(command)
            press(command)
        case Sony.locationLock:
            locationLocked = value == Sony.locationOn
        case Sony.locationEnable:
            locationEnabled = value == Sony.locationOn
        case Sony.locationFix:
            guard locationLocked, locationEnabled else { throw .writeNotPermitted }
            guard let fix = try? Sony.LocationFix(decoding: value), (fix.timeZone != nil) == takesTimeZone else {
                throw .invalidAttributeValueLength
            }
            lastFix = fix
        default:
            throw .writeNotPermitted
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case Sony.deviceName, Sony.modelName: Array(model.utf8)
        case Sony.firmwareVersion: Array(firmwareVersion.utf8)
        case Sony.locationFormat: Sony.LocationFormat(includesTimeZone: takesTimeZone).bytes
        case Sony.locationLock: [locationLocked ? 1 : 0]
        case Sony.locationEnable: [locationEnabled ? 1 : 0]
        default: throw .readNotPermitted
        }
    }

    /// Whether a half-press finds focus (false: a dark, featureless scene).
    public func setFocusFinds(_ finds: Bool) { focusFinds = finds }

    /// Whether the full press releases the shutter (false: no card, or a full one).
    public func setShutterReleases(_ releases: Bool) { shutterReleases = releases }

    // MARK: -

    private func press(_ command: Sony.ButtonCommand) {
        switch (command.button, command.pressed) {
        case (.halfPress, true):
            guard !halfPressed else { return }
            halfPressed = true
            pressGeneration += 1
            if focusFinds { reportFocus(after: focusTime, press: pressGeneration) }
        case (.halfPress, false):
            halfPressed = false
            if focused {
                focused = false
                notify(.focus(acquired: false))
            }
        case (.fullPress, true):
            guard !fullPressed else { return }
            fullPressed = true
            guard shutterReleases else { return }
            basics.picturesTaken += 1
            notify(.shutter(active: true))
        case (.fullPress, false):
            guard fullPressed else { return }
            fullPressed = false
            if shutterReleases { notify(.shutter(active: false)) }
        case (.record, true):
            recording.toggle()
            notify(.recording(recording))
        case (.record, false), (.afOn, _), (.c1, _):
            break
        }
    }

    private func reportFocus(after delay: Duration, press: Int) {
        guard delay > .zero else { return focusFound(press: press) }
        let clock = clock
        Task {
            try? await clock.sleep(for: delay)
            self.focusFound(press: press)
        }
    }

    private func focusFound(press: Int) {
        guard halfPressed, press == pressGeneration, !focused else { return }
        focused = true
        notify(.focus(acquired: true))
    }

    private func notify(_ status: Sony.Status) {
        basics.send(status.bytes, on: Sony.status)
    }

    public func linkEnded() {
        halfPressed = false
        fullPressed = false
        focused = false
    }
}
