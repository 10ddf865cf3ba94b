/// A setting value drawn from a fixed list. Unlike an ``OpenEnumeration`` the list is closed: a
/// value outside it is invalid, because a device only sends new values to clients that announced
/// support for them.
public protocol SettingChoice: CaseIterable, Hashable, Sendable {
    /// The value's name in text form.
    var text: String { get }
}

extension SettingChoice {
    /// The value with this name.
    public init?(text: String) {
        let wanted = text.trimmingWhitespace().lowercased()
        guard let match = Self.allCases.first(where: { $0.text == wanted }) else { return nil }
        self = match
    }
}

public enum WhiteBalance: SettingChoice {
    case auto, daylight, cloudy, shade, tungsten, fluorescent, flash, custom
    /// A colour temperature set on the camera.
    case kelvin

    public var text: String { String(describing: self) }
}

public enum DriveMode: SettingChoice {
    case single, continuousLow, continuousHigh, selfTimer2s, selfTimer10s, quiet

    public var text: String {
        switch self {
        case .single: "single"
        case .continuousLow: "continuous-low"
        case .continuousHigh: "continuous-high"
        case .selfTimer2s: "self-timer-2s"
        case .selfTimer10s: "self-timer-10s"
        case .quiet: "quiet"
        }
    }
}

public enum FocusMode: SettingChoice {
    case manual, singleAF, continuousAF, autoAF

    public var text: String {
        switch self {
        case .manual: "manual"
        case .singleAF: "single-af"
        case .continuousAF: "continuous-af"
        case .autoAF: "auto-af"
        }
    }
}

public enum ImageFormat: SettingChoice {
    case jpegFine, jpegNormal, raw, rawPlusJPEG

    public var text: String {
        switch self {
        case .jpegFine: "jpeg-fine"
        case .jpegNormal: "jpeg-normal"
        case .raw: "raw"
        case .rawPlusJPEG: "raw+jpeg"
        }
    }
}

/// The value of one camera setting, typed by the setting it belongs to.
public enum SettingValue: Hashable, Sendable {
    case iso(ISOSpeed)
    case shutterSpeed(ShutterSpeed)
    case aperture(Aperture)
    case exposureCompensation(ExposureStops)
    case whiteBalance(WhiteBalance)
    case driveMode(DriveMode)
    case focusMode(FocusMode)
    case imageFormat(ImageFormat)
    /// A value of a setting this version does not know, kept as the number the device sent.
    case other(setting: SettingID, code: UInt32)

    /// The exposure compensation a camera may be set to, in 1/24 stop: ±15 EV.
    public static let exposureCompensationRange: ClosedRange<Int32> = -360...360

    /// An exposure compensation; nil beyond ±15 EV.
    public init?(exposureCompensation stops: ExposureStops) {
        guard Self.exposureCompensationRange.contains(stops.twentyFourths) else { return nil }
        self = .exposureCompensation(stops)
    }

    /// Reads a value of `setting` from text, accepting the canonical form of PROTOCOL.md §11.1
    /// and the spellings people type (`800`, `1/125`, `30"`, `f/5.6`, `+0.7`).
    public init?(setting: SettingID, text: String) {
        switch setting {
        case .iso: guard let value = ISOSpeed(text: text) else { return nil }; self = .iso(value)
        case .shutterSpeed: guard let value = ShutterSpeed(text: text) else { return nil }; self = .shutterSpeed(value)
        case .aperture: guard let value = Aperture(text: text) else { return nil }; self = .aperture(value)
        case .exposureCompensation:
            guard let value = ExposureStops(text: text) else { return nil }
            self.init(exposureCompensation: value)
        case .whiteBalance: guard let value = WhiteBalance(text: text) else { return nil }; self = .whiteBalance(value)
        case .driveMode: guard let value = DriveMode(text: text) else { return nil }; self = .driveMode(value)
        case .focusMode: guard let value = FocusMode(text: text) else { return nil }; self = .focusMode(value)
        case .imageFormat: guard let value = ImageFormat(text: text) else { return nil }; self = .imageFormat(value)
        case .unknown:
            guard let code = UInt32(text.trimmingWhitespace()) else { return nil }
            self = .other(setting: setting, code: code)
        }
    }

    /// The setting this value belongs to.
    public var setting: SettingID {
        switch self {
        case .iso: .iso
        case .shutterSpeed: .shutterSpeed
        case .aperture: .aperture
        case .exposureCompensation: .exposureCompensation
        case .whiteBalance: .whiteBalance
        case .driveMode: .driveMode
        case .focusMode: .focusMode
        case .imageFormat: .imageFormat
        case .other(let setting, _): setting
        }
    }

    /// The canonical text form (PROTOCOL.md §11.1).
    public var text: String {
        switch self {
        case .iso(let value): value.text
        case .shutterSpeed(let value): value.text
        case .aperture(let value): value.text
        case .exposureCompensation(let value): value.text
        case .whiteBalance(let value): value.text
        case .driveMode(let value): value.text
        case .focusMode(let value): value.text
        case .imageFormat(let value): value.text
        case .other(_, let code): String(code)
        }
    }
}

extension SettingValue: CustomStringConvertible {
    public var description: String { text }
}

/// One camera setting as `listSettings` reports it: its value and the values offered now.
public struct SettingDescriptor: Hashable, Sendable {
    public var setting: SettingID
    public var value: SettingValue
    public var choices: [SettingValue]
    /// The camera reports the setting but will not change it (e.g. aperture with a manual lens).
    public var readOnly: Bool

    public init(setting: SettingID, value: SettingValue, choices: [SettingValue], readOnly: Bool = false) {
        self.setting = setting
        self.value = value
        self.choices = choices
        self.readOnly = readOnly
    }
}
