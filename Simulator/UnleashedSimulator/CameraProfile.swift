public import CameraKit
import UnleashedProtocol

/// What a simulated camera body offers and how fast it is.
///
/// The ladders are the nominal values real bodies of the kind show, in their order; the
/// timings are typical published or measured figures for such bodies.
public struct CameraProfile: Sendable, Hashable {
    /// A short stable name, used in demo state files and `--camera`.
    public var id: String
    /// What the module reports as the camera model.
    public var model: String
    /// The settings in the order the camera lists them, each with its offered values.
    public var ladders: [(SettingID, [SettingValue])]
    /// The value of each setting when the camera is new.
    public var defaults: [SettingID: SettingValue]
    /// From the trigger to the shutter opening.
    public var shutterLag: Duration
    /// How long autofocus takes to lock.
    public var focusTime: Duration
    /// How long the camera is busy writing one picture after the shutter closes.
    public var writeTime: Duration
    /// Pictures the camera's buffer holds while they wait to be written; with the buffer full
    /// the camera is busy until a picture has been written.
    public var bufferDepth: Int
    /// Pictures an empty card holds at the default image format.
    public var cardCapacity: UInt32
    /// How fast the camera's battery runs down.
    public var batteryDrain: BatteryDrain
    /// Idle time after which the camera goes to standby (its auto-power-off or standby timer).
    public var autoPowerOff: Duration
    /// From a half-press on a sleeping camera until it answers.
    public var wakeTime: Duration

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// Battery use in percent of a full charge. Shots are counted as a remote takes them, with the
    /// screen off: two to three times the rated (CIPA) shots per charge.
    public struct BatteryDrain: Sendable, Hashable {
        public var perShot: Double
        public var perVideoMinute: Double
        /// While the camera is on and idle (standby uses next to nothing).
        public var perIdleHour: Double

        public init(perShot: Double, perVideoMinute: Double, perIdleHour: Double) {
            self.perShot = perShot
            self.perVideoMinute = perVideoMinute
            self.perIdleHour = perIdleHour
        }
    }

    /// The offered values of one setting.
    public func choices(for setting: SettingID) -> [SettingValue]? {
        ladders.first { $0.0 == setting }?.1
    }
}

extension CameraProfile {
    /// Every built-in profile.
    public static let all: [CameraProfile] = [.nikonLike, .canonLike, .sonyLike]

    /// The ids of ``all``, in its order, written out: building the profiles parses their ladders,
    /// which a command's help text (read at every start) must not pay for.
    public static let allIDs = ["nikon-z", "canon-r", "sony-a"]

    /// The profile with this id.
    public static func named(_ id: String) -> CameraProfile? { all.first { $0.id == id } }

    /// A full-frame mirrorless body in the manner of Nikon's Z range.
    public static let nikonLike = CameraProfile(
        id: "nikon-z",
        model: "Simulated Nikon Z-style body",
        ladders: [
            ladder(.iso, "auto 100 125 160 200 250 320 400 500 640 800 1000 1250 1600 2000 2500 3200 4000 5000 6400 8000 10000 12800 16000 20000 25600 32000 40000 51200"),
            ladder(.shutterSpeed, "1/8000 1/6400 1/5000 1/4000 1/3200 1/2500 1/2000 1/1600 1/1250 1/1000 1/800 1/640 1/500 1/400 1/320 1/250 1/200 1/160 1/125 1/100 1/80 1/60 1/50 1/40 1/30 1/25 1/20 1/15 1/13 1/10 1/8 1/6 1/5 1/4 1/3 0.4s 1/2 0.6s 0.8s 1s 1.3s 1.6s 2s 2.5s 3s 4s 5s 6s 8s 10s 13s 15s 20s 25s 30s bulb"),
            ladder(.aperture, "f/1.8 f/2 f/2.2 f/2.5 f/2.8 f/3.2 f/3.5 f/4 f/4.5 f/5 f/5.6 f/6.3 f/7.1 f/8 f/9 f/10 f/11 f/13 f/14 f/16"),
            ladder(.exposureCompensation, (-15...15).map { ExposureStops(thirds: Int32($0)).text }.joined(separator: ",")),
            ladder(.whiteBalance, "auto daylight cloudy shade tungsten fluorescent flash kelvin"),
            ladder(.driveMode, "single continuous-low continuous-high self-timer-2s self-timer-10s quiet"),
            ladder(.focusMode, "manual single-af continuous-af auto-af"),
            ladder(.imageFormat, "jpeg-fine jpeg-normal raw raw+jpeg"),
        ],
        defaults: defaults([
            .iso: "100", .shutterSpeed: "1/125", .aperture: "f/8", .exposureCompensation: "0", .whiteBalance: "auto",
            .driveMode: "single", .focusMode: "single-af", .imageFormat: "raw",
        ]),
        shutterLag: .milliseconds(52),
        focusTime: .milliseconds(180),
        writeTime: .milliseconds(80),
        bufferDepth: 43,
        cardCapacity: 2_140,
        batteryDrain: BatteryDrain(perShot: 0.08, perVideoMinute: 1.2, perIdleHour: 8),
        autoPowerOff: .seconds(30),
        wakeTime: .milliseconds(250)
    )

    /// A full-frame mirrorless body in the manner of Canon's EOS R range: shutter speeds from
    /// 0.3 s shown as decimals, ±3 EV compensation, a lens to f/22.
    public static let canonLike = CameraProfile(
        id: "canon-r",
        model: "Simulated Canon EOS R-style body",
        ladders: [
            ladder(.iso, "auto 100 125 160 200 250 320 400 500 640 800 1000 1250 1600 2000 2500 3200 4000 5000 6400 8000 10000 12800 16000 20000 25600 32000 40000"),
            ladder(.shutterSpeed, "1/8000 1/6400 1/5000 1/4000 1/3200 1/2500 1/2000 1/1600 1/1250 1/1000 1/800 1/640 1/500 1/400 1/320 1/250 1/200 1/160 1/125 1/100 1/80 1/60 1/50 1/40 1/30 1/25 1/20 1/15 1/13 1/10 1/8 1/6 1/5 1/4 0.3s 0.4s 0.5s 0.6s 0.8s 1s 1.3s 1.6s 2s 2.5s 3.2s 4s 5s 6s 8s 10s 13s 15s 20s 25s 30s bulb"),
            ladder(.aperture, "f/4 f/4.5 f/5 f/5.6 f/6.3 f/7.1 f/8 f/9 f/10 f/11 f/13 f/14 f/16 f/18 f/20 f/22"),
            ladder(.exposureCompensation, (-9...9).map { ExposureStops(thirds: Int32($0)).text }.joined(separator: ",")),
            ladder(.whiteBalance, "auto daylight shade cloudy tungsten fluorescent flash custom kelvin"),
            ladder(.driveMode, "single continuous-high continuous-low self-timer-10s self-timer-2s"),
            ladder(.focusMode, "single-af continuous-af manual"),
            ladder(.imageFormat, "raw raw+jpeg jpeg-fine jpeg-normal"),
        ],
        defaults: defaults([
            .iso: "auto", .shutterSpeed: "1/60", .aperture: "f/5.6", .exposureCompensation: "0", .whiteBalance: "auto",
            .driveMode: "single", .focusMode: "single-af", .imageFormat: "raw",
        ]),
        shutterLag: .milliseconds(50),
        focusTime: .milliseconds(150),
        writeTime: .milliseconds(190),
        bufferDepth: 47,
        cardCapacity: 1_650,
        batteryDrain: BatteryDrain(perShot: 0.1, perVideoMinute: 1.0, perIdleHour: 6),
        autoPowerOff: .seconds(60),
        wakeTime: .milliseconds(350)
    )

    /// A full-frame mirrorless body in the manner of Sony's Alpha 7 range: extended low ISO,
    /// a fast prime lens, a long battery life.
    public static let sonyLike = CameraProfile(
        id: "sony-a",
        model: "Simulated Sony Alpha 7-style body",
        ladders: [
            ladder(.iso, "auto 50 64 80 100 125 160 200 250 320 400 500 640 800 1000 1250 1600 2000 2500 3200 4000 5000 6400 8000 10000 12800 16000 20000 25600 32000 40000 51200"),
            ladder(.shutterSpeed, "1/8000 1/6400 1/5000 1/4000 1/3200 1/2500 1/2000 1/1600 1/1250 1/1000 1/800 1/640 1/500 1/400 1/320 1/250 1/200 1/160 1/125 1/100 1/80 1/60 1/50 1/40 1/30 1/25 1/20 1/15 1/13 1/10 1/8 1/6 1/5 1/4 1/3 0.4s 0.5s 0.6s 0.8s 1s 1.3s 1.6s 2s 2.5s 3.2s 4s 5s 6s 8s 10s 13s 15s 20s 25s 30s bulb"),
            ladder(.aperture, "f/1.4 f/1.6 f/1.8 f/2 f/2.2 f/2.5 f/2.8 f/3.2 f/3.5 f/4 f/4.5 f/5 f/5.6 f/6.3 f/7.1 f/8 f/9 f/10 f/11 f/13 f/14 f/16"),
            ladder(.exposureCompensation, (-15...15).map { ExposureStops(thirds: Int32($0)).text }.joined(separator: ",")),
            ladder(.whiteBalance, "auto daylight shade cloudy tungsten fluorescent flash kelvin custom"),
            ladder(.driveMode, "single continuous-high continuous-low self-timer-10s self-timer-2s"),
            ladder(.focusMode, "single-af auto-af continuous-af manual"),
            ladder(.imageFormat, "raw raw+jpeg jpeg-fine jpeg-normal"),
        ],
        defaults: defaults([
            .iso: "100", .shutterSpeed: "1/250", .aperture: "f/4", .exposureCompensation: "0", .whiteBalance: "auto",
            .driveMode: "single", .focusMode: "single-af", .imageFormat: "raw",
        ]),
        shutterLag: .milliseconds(65),
        focusTime: .milliseconds(200),
        writeTime: .milliseconds(120),
        bufferDepth: 89,
        cardCapacity: 2_950,
        batteryDrain: BatteryDrain(perShot: 0.06, perVideoMinute: 0.9, perIdleHour: 7),
        autoPowerOff: .seconds(60),
        wakeTime: .milliseconds(400)
    )

    /// A ladder from its text form; values are separated by spaces, or by commas when a value
    /// itself has a space (`+1 1/3`).
    static func ladder(_ setting: SettingID, _ text: String) -> (SettingID, [SettingValue]) {
        let separator: Character = text.contains(",") ? "," : " "
        let values = text.split(separator: separator).map { word in
            guard let value = SettingValue(setting: setting, text: String(word)) else {
                preconditionFailure("built-in ladder for \(setting) has an unreadable value '\(word)'")
            }
            return value
        }
        return (setting, values)
    }

    static func defaults(_ texts: [SettingID: String]) -> [SettingID: SettingValue] {
        texts.reduce(into: [:]) { result, entry in result[entry.key] = ladder(entry.key, entry.value).1.first }
    }
}
