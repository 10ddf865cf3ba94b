public import CameraKit

// How a setting value travels as the u32 `value` field (PROTOCOL.md §6.2, §6.3). The camera model
// names values by meaning; these numbers belong to the module protocol alone.

extension SettingValue {
    /// Decodes the `value` field of `setting`; nil when the number is not a valid value of it.
    /// A value of a setting this version does not know is kept as the number sent.
    public init?(setting: SettingID, wireValue: UInt32) {
        switch setting {
        case .iso:
            guard let value = ISOSpeed(wireValue: wireValue) else { return nil }
            self = .iso(value)
        case .shutterSpeed:
            guard let value = ShutterSpeed(wireValue: wireValue) else { return nil }
            self = .shutterSpeed(value)
        case .aperture:
            guard let value = Aperture(tenths: wireValue) else { return nil }
            self = .aperture(value)
        case .exposureCompensation:
            self.init(exposureCompensation: ExposureStops(twentyFourths: Int32(bitPattern: wireValue)))
        case .whiteBalance:
            guard let value = WhiteBalance(wireValue: wireValue) else { return nil }
            self = .whiteBalance(value)
        case .driveMode:
            guard let value = DriveMode(wireValue: wireValue) else { return nil }
            self = .driveMode(value)
        case .focusMode:
            guard let value = FocusMode(wireValue: wireValue) else { return nil }
            self = .focusMode(value)
        case .imageFormat:
            guard let value = ImageFormat(wireValue: wireValue) else { return nil }
            self = .imageFormat(value)
        case .unknown:
            self = .other(setting: setting, code: wireValue)
        }
    }

    /// The `value` field's number.
    public var wireValue: UInt32 {
        switch self {
        case .iso(let value): value.wireValue
        case .shutterSpeed(let value): value.wireValue
        case .aperture(let value): UInt32(value.tenths)
        case .exposureCompensation(let value): UInt32(bitPattern: value.twentyFourths)
        case .whiteBalance(let value): value.wireValue
        case .driveMode(let value): value.wireValue
        case .focusMode(let value): value.wireValue
        case .imageFormat(let value): value.wireValue
        case .other(_, let code): code
        }
    }
}

extension ISOSpeed {
    /// `0` for auto, otherwise the ISO number; nil outside 1...3 276 800.
    init?(wireValue: UInt32) {
        if wireValue == 0 { self = .auto; return }
        self.init(wireValue)
    }

    var wireValue: UInt32 { isAuto ? 0 : rawValue }
}

extension ShutterSpeed {
    /// `0` for bulb, otherwise `numerator << 16 | denominator`; nil for a fraction that is not
    /// in lowest terms or has one part 0.
    init?(wireValue: UInt32) {
        let top = Int(wireValue >> 16), bottom = Int(wireValue & 0xFFFF)
        if top == 0 && bottom == 0 { self = .bulb; return }
        // The nominal fraction is the identity, so 10/20 is not another spelling of 1/2.
        guard let speed = ShutterSpeed(seconds: top, per: bottom), Int(speed.numerator) == top else { return nil }
        self = speed
    }

    var wireValue: UInt32 { UInt32(numerator) << 16 | UInt32(denominator) }
}

/// A setting value from a fixed list, numbered by PROTOCOL.md §6.3. Numbers outside the table
/// are invalid: a later version adds values together with a capability bit.
protocol WireSettingChoice: SettingChoice {
    var wireValue: UInt32 { get }
}

extension WireSettingChoice {
    init?(wireValue: UInt32) {
        guard let match = Self.allCases.first(where: { $0.wireValue == wireValue }) else { return nil }
        self = match
    }
}

extension WhiteBalance: WireSettingChoice {
    var wireValue: UInt32 {
        switch self {
        case .auto: 0
        case .daylight: 1
        case .cloudy: 2
        case .shade: 3
        case .tungsten: 4
        case .fluorescent: 5
        case .flash: 6
        case .custom: 7
        case .kelvin: 8
        }
    }
}

extension DriveMode: WireSettingChoice {
    var wireValue: UInt32 {
        switch self {
        case .single: 0
        case .continuousLow: 1
        case .continuousHigh: 2
        case .selfTimer2s: 3
        case .selfTimer10s: 4
        case .quiet: 5
        }
    }
}

extension FocusMode: WireSettingChoice {
    var wireValue: UInt32 {
        switch self {
        case .manual: 0
        case .singleAF: 1
        case .continuousAF: 2
        case .autoAF: 3
        }
    }
}

extension ImageFormat: WireSettingChoice {
    var wireValue: UInt32 {
        switch self {
        case .jpegFine: 0
        case .jpegNormal: 1
        case .raw: 2
        case .rawPlusJPEG: 3
        }
    }
}
