public import CameraKit
import Foundation
import UnleashedProtocol

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
    /// The light the camera's meter saw at its last reading, as EV at ISO 100.
    public var sceneEV = ExposureStops(twentyFourths: 12 * 24)
    /// The camera clock's lead over UTC in milliseconds, as `setTime` left it.
    public var clockOffset: Int64 = 0
    /// Minutes east of UTC, as `setTime` left it.
    public var utcOffset: Int16 = 0
    /// The position the camera writes into the pictures that follow, from the last `geotag`.
    public var geotag: Geotag?

    /// A position fix as `geotag` gives it (PROTOCOL.md §6.4 units).
    public struct Geotag: Sendable, Hashable {
        /// 1e-7 degrees north.
        public var latitude: Int32
        /// 1e-7 degrees east.
        public var longitude: Int32
        /// Centimetres above mean sea level, when known.
        public var altitude: Int32?
        /// When the fix was taken, Unix milliseconds.
        public var utcTime: UInt64

        public init(latitude: Int32, longitude: Int32, altitude: Int32? = nil, utcTime: UInt64) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.utcTime = utcTime
        }
    }

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

    /// The camera's clock when the host's clock reads `utc` (Unix milliseconds).
    public func cameraTime(atUTC utc: UInt64) -> UInt64 {
        UInt64(clamping: max(0, Int64(clamping: utc) &+ clockOffset))
    }

    public var storageState: StorageState { shotsRemaining == 0 ? .full : .ok }

    public var exposureMode: ExposureMode {
        if case .shutterSpeed(let speed)? = settings[.shutterSpeed], speed.isBulb { return .bulb }
        return .manual
    }

    /// How a picture taken now comes out, in stops from a mid-grey rendering: the scene's light
    /// against the exposure set (the shutter speed, or `bulb` for a bulb exposure, the ISO and
    /// the aperture). Nil with auto ISO, or bulb without a time.
    public func pictureBrightness(bulb: Duration? = nil) -> Double? {
        ExposureValue.ev100(of: settings, bulbSeconds: bulb?.inSeconds).map { sceneEV.stops - $0 }
    }

    /// How long the shutter stays open at the current shutter speed (nil for bulb).
    public var exposureTime: Duration? {
        guard case .shutterSpeed(let speed)? = settings[.shutterSpeed], !speed.isBulb else { return nil }
        return .nanoseconds(Int64(speed.numerator) * 1_000_000_000 / Int64(speed.denominator))
    }
}
