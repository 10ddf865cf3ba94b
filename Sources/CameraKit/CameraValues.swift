/// A value from a list a device reports, named by what it means. A device may report a value this
/// version has no name for: it is kept as the device's code and shown, not refused, so a newer
/// camera or module still works with an older daemon. How a value travels (a byte of the module
/// protocol, a PTP property, a brand's own code) is the backend's business, not the value's.
public protocol OpenEnumeration: Hashable, Sendable, CustomStringConvertible {
    /// Every value this version has a name for.
    static var known: [Self] { get }
    /// A value this version has no name for, kept as the code the device sent.
    static func unknown(_ code: UInt8) -> Self
    /// The value's name (`noCard`); nil for a value this version has no name for.
    var name: String? { get }
    /// The device's code of a value this version has no name for; nil for a named value.
    var unknownCode: UInt8? { get }
}

extension OpenEnumeration {
    /// The named value.
    public init?(name: String) {
        guard let match = Self.known.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// The value's name, or `unknown(66)` for a value this version has no name for.
    public var description: String { name ?? "unknown(\(unknownCode ?? 0))" }
}

/// Which camera setting a value belongs to.
public enum SettingID: OpenEnumeration {
    case iso, shutterSpeed, aperture, exposureCompensation, whiteBalance, driveMode, focusMode, imageFormat
    /// A setting this version has no name for.
    case unknown(UInt8)

    public static let known: [SettingID] = [
        .iso, .shutterSpeed, .aperture, .exposureCompensation, .whiteBalance, .driveMode, .focusMode, .imageFormat,
    ]

    public var name: String? {
        switch self {
        case .iso: "iso"
        case .shutterSpeed: "shutterSpeed"
        case .aperture: "aperture"
        case .exposureCompensation: "exposureCompensation"
        case .whiteBalance: "whiteBalance"
        case .driveMode: "driveMode"
        case .focusMode: "focusMode"
        case .imageFormat: "imageFormat"
        case .unknown: nil
        }
    }

    public var unknownCode: UInt8? { if case .unknown(let code) = self { code } else { nil } }
}

/// The state of the camera's memory card.
public enum StorageState: OpenEnumeration {
    case ok, noCard, full, error, readOnly
    /// A state this version has no name for.
    case unknown(UInt8)

    public static let known: [StorageState] = [.ok, .noCard, .full, .error, .readOnly]

    public var name: String? {
        switch self {
        case .ok: "ok"
        case .noCard: "noCard"
        case .full: "full"
        case .error: "error"
        case .readOnly: "readOnly"
        case .unknown: nil
        }
    }

    public var unknownCode: UInt8? { if case .unknown(let code) = self { code } else { nil } }
}

/// Whether the camera is on.
public enum CameraPower: OpenEnumeration {
    case off, on, sleeping
    /// A state this version has no name for.
    case unknown(UInt8)

    public static let known: [CameraPower] = [.off, .on, .sleeping]

    public var name: String? {
        switch self {
        case .off: "off"
        case .on: "on"
        case .sleeping: "sleeping"
        case .unknown: nil
        }
    }

    public var unknownCode: UInt8? { if case .unknown(let code) = self { code } else { nil } }
}

/// The camera's exposure mode dial.
public enum ExposureMode: OpenEnumeration {
    case manual, aperturePriority, shutterPriority, program, auto, bulb, video
    /// A mode this version has no name for.
    case unknown(UInt8)

    public static let known: [ExposureMode] = [.manual, .aperturePriority, .shutterPriority, .program, .auto, .bulb, .video]

    public var name: String? {
        switch self {
        case .manual: "manual"
        case .aperturePriority: "aperturePriority"
        case .shutterPriority: "shutterPriority"
        case .program: "program"
        case .auto: "auto"
        case .bulb: "bulb"
        case .video: "video"
        case .unknown: nil
        }
    }

    public var unknownCode: UInt8? { if case .unknown(let code) = self { code } else { nil } }
}

/// How a half-press ended.
public enum FocusResult: OpenEnumeration {
    case acquired, failed, manualFocus
    /// A result this version has no name for.
    case unknown(UInt8)

    public static let known: [FocusResult] = [.acquired, .failed, .manualFocus]

    public var name: String? {
        switch self {
        case .acquired: "acquired"
        case .failed: "failed"
        case .manualFocus: "manualFocus"
        case .unknown: nil
        }
    }

    public var unknownCode: UInt8? { if case .unknown(let code) = self { code } else { nil } }
}

/// What a camera can do, through its module or its own remote. The named capabilities sit in
/// the low 32 bits in this type's own order, which is no protocol's; the high 32 bits keep the
/// capabilities a device announced that this version has no name for, by the device's own
/// number (0–31), so that they are shown rather than dropped. How a device announces them (the
/// module's `hello` bits, a brand's fixed list) is the backend's business.
public struct Capabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let shoot = Capabilities(rawValue: 1 << 0)
    public static let focus = Capabilities(rawValue: 1 << 1)
    public static let bulb = Capabilities(rawValue: 1 << 2)
    public static let video = Capabilities(rawValue: 1 << 3)
    public static let readSettings = Capabilities(rawValue: 1 << 4)
    public static let writeSettings = Capabilities(rawValue: 1 << 5)
    public static let meteredEV = Capabilities(rawValue: 1 << 6)
    public static let geotag = Capabilities(rawValue: 1 << 7)
    public static let setTime = Capabilities(rawValue: 1 << 8)
    /// `shoot` takes a `fireAt` time and `keepAlive` reports `uptimeMicros`: the module presses
    /// on its own clock, so several modules fire together however the radio delays each command.
    public static let scheduledFire = Capabilities(rawValue: 1 << 9)

    /// A capability this version has no name for, by the device's number for it (0–31).
    public static func unknown(_ code: Int) -> Capabilities {
        precondition((0..<32).contains(code), "a device numbers its capabilities 0 to 31")
        return Capabilities(rawValue: 1 << (32 + UInt64(code)))
    }

    /// The device's numbers of the capabilities in this set that this version has no name for.
    public var unknownCodes: [Int] { (0..<32).filter { rawValue & (1 << (32 + UInt64($0))) != 0 } }

    /// Every capability this version names, with its name.
    public static let known: [(Capabilities, String)] = [
        (.shoot, "shoot"), (.focus, "focus"), (.bulb, "bulb"), (.video, "video"),
        (.readSettings, "readSettings"), (.writeSettings, "writeSettings"), (.meteredEV, "meteredEV"),
        (.geotag, "geotag"), (.setTime, "setTime"), (.scheduledFire, "scheduledFire"),
    ]

    /// The names of the known capabilities in this set.
    public var names: [String] { Self.known.filter { contains($0.0) }.map(\.1) }
}
