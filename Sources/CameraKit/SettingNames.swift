import Foundation

extension SettingID {
    /// The name people type and read: `iso`, `shutter-speed`, `exposure-compensation`.
    public var userName: String {
        switch self {
        case .iso: "iso"
        case .shutterSpeed: "shutter-speed"
        case .aperture: "aperture"
        case .exposureCompensation: "exposure-compensation"
        case .whiteBalance: "white-balance"
        case .driveMode: "drive-mode"
        case .focusMode: "focus-mode"
        case .imageFormat: "image-format"
        case .unknown(let code): "setting-\(code)"
        }
    }

    /// How the setting reads in a sentence: "ISO", "shutter speed".
    public var displayName: String {
        self == .iso ? "ISO" : userName.replacing("-", with: " ")
    }

    /// An example of how a value is written, for error messages.
    public var valueExample: String {
        switch self {
        case .iso: "800 or auto"
        case .shutterSpeed: "1/250, 0.5s, 30s or bulb"
        case .aperture: "f/5.6 or 8"
        case .exposureCompensation: "+1/3, -2/3, +1 1/3 or +0.7"
        case .whiteBalance: WhiteBalance.allCases.map(\.text).joined(separator: ", ")
        case .driveMode: DriveMode.allCases.map(\.text).joined(separator: ", ")
        case .focusMode: FocusMode.allCases.map(\.text).joined(separator: ", ")
        case .imageFormat: ImageFormat.allCases.map(\.text).joined(separator: ", ")
        case .unknown: "a number"
        }
    }

    private static let aliases: [String: SettingID] = [
        "shutter": .shutterSpeed, "tv": .shutterSpeed, "f": .aperture, "f-number": .aperture, "av": .aperture,
        "ev": .exposureCompensation, "exposure": .exposureCompensation, "wb": .whiteBalance, "drive": .driveMode,
        "focus": .focusMode, "format": .imageFormat, "quality": .imageFormat,
    ]

    /// The setting a user means by `name`: its ``userName``, its protocol name, or a common alias.
    public init?(userName name: String) {
        let wanted = name.lowercased().replacing("_", with: "-")
        if let alias = Self.aliases[wanted] { self = alias; return }
        guard let match = Self.known.first(where: { $0.userName == wanted || $0.name?.lowercased() == wanted }) else {
            return nil
        }
        self = match
    }

    /// The names ``init(userName:)`` accepts, for help and error messages.
    public static var userNames: [String] { known.map(\.userName) }
}

extension SettingValue {
    /// Where the value sits on an exposure scale in stops, for finding the nearest offered value;
    /// nil for values that are not on such a scale (auto ISO, bulb, white balance...).
    var stopsPosition: Double? {
        switch self {
        case .iso(let iso): iso.isAuto ? nil : log2(Double(iso.rawValue) / 100)
        case .shutterSpeed(let speed): speed.isBulb ? nil : log2(speed.seconds)
        case .aperture(let aperture): 2 * log2(aperture.fNumber)
        case .exposureCompensation(let stops): stops.stops
        default: nil
        }
    }

    /// The offered values closest to this one: the nearest below and the nearest above, closest
    /// first. Empty when the setting has no scale, so callers list all choices instead.
    public func nearest(among choices: [SettingValue]) -> [SettingValue] {
        guard let target = stopsPosition else { return [] }
        let placed = choices.compactMap { choice in choice.stopsPosition.map { (choice, $0 - target) } }
        let below = placed.filter { $0.1 < 0 }.max { $0.1 < $1.1 }
        let above = placed.filter { $0.1 > 0 }.min { $0.1 < $1.1 }
        return [below, above].compactMap { $0 }.sorted { abs($0.1) < abs($1.1) }.map(\.0)
    }
}
