public import UnleashedProtocol

/// The state of a simulated camera: its settings, card, battery and shot count. A plain value;
/// ``VirtualModule`` drives it over time.
public struct VirtualCamera: Sendable, Hashable {
    public let profile: CameraProfile
    public private(set) var settings: [SettingID: SettingValue]
    /// Shots taken through the module.
    public var shotCounter: UInt32 = 0
    public var shotsRemaining: UInt32
    /// Percent.
    public var battery: UInt8 = 86
    public var power: CameraPower = .on
    /// The light the camera's meter sees, as EV at ISO 100.
    public var sceneEV = ExposureStops(twentyFourths: 12 * 24)

    public init(profile: CameraProfile) {
        self.profile = profile
        settings = profile.defaults
        shotsRemaining = profile.cardCapacity
    }

    /// Why a setting could not be changed.
    public enum SettingRefusal: Error, Hashable, Sendable {
        case noSuchSetting
        case notOffered(offered: [SettingValue])
    }

    /// Changes a setting if the camera offers the value.
    public mutating func apply(_ value: SettingValue) throws(SettingRefusal) {
        guard let choices = profile.choices(for: value.setting) else { throw .noSuchSetting }
        guard choices.contains(value) else { throw .notOffered(offered: choices) }
        settings[value.setting] = value
    }

    /// The settings as `listSettings` reports them, in the camera's order.
    public var descriptors: [SettingDescriptor] {
        guard power == .on else { return [] }
        return profile.ladders.compactMap { setting, choices in
            settings[setting].map { SettingDescriptor(setting: setting, value: $0, choices: choices) }
        }
    }

    public var storageState: StorageState { shotsRemaining == 0 ? .full : .ok }

    public var exposureMode: ExposureMode {
        if case .shutterSpeed(let speed)? = settings[.shutterSpeed], speed.isBulb { return .bulb }
        return .manual
    }

    /// How long the shutter stays open at the current shutter speed (nil for bulb).
    public var exposureTime: Duration? {
        guard case .shutterSpeed(let speed)? = settings[.shutterSpeed], !speed.isBulb else { return nil }
        return .nanoseconds(Int64(speed.numerator) * 1_000_000_000 / Int64(speed.denominator))
    }
}
