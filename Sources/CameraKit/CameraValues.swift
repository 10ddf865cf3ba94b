/// A one-byte code whose unknown values are kept, not rejected: a camera or module may report
/// a state that this version does not know, and it is shown, not refused (PROTOCOL.md §5.1).
public protocol WireEnumeration: RawRepresentable<UInt8>, Hashable, Sendable, CustomStringConvertible {
    init(rawValue: UInt8)
    /// Every value this version knows, with its name.
    static var known: [(Self, String)] { get }
}

extension WireEnumeration {
    /// The value's name, or nil for a value this version does not know.
    public var name: String? { Self.known.first { $0.0 == self }?.1 }

    /// The named value.
    public init?(name: String) {
        guard let match = Self.known.first(where: { $0.1 == name }) else { return nil }
        self = match.0
    }

    public var description: String { name ?? "unknown(\(rawValue))" }
}

/// Which camera setting a `setting` field names (PROTOCOL.md §6.2).
public struct SettingID: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let iso = SettingID(rawValue: 0x01)
    public static let shutterSpeed = SettingID(rawValue: 0x02)
    public static let aperture = SettingID(rawValue: 0x03)
    public static let exposureCompensation = SettingID(rawValue: 0x04)
    public static let whiteBalance = SettingID(rawValue: 0x05)
    public static let driveMode = SettingID(rawValue: 0x06)
    public static let focusMode = SettingID(rawValue: 0x07)
    public static let imageFormat = SettingID(rawValue: 0x08)

    public static let known: [(SettingID, String)] = [
        (.iso, "iso"), (.shutterSpeed, "shutterSpeed"), (.aperture, "aperture"),
        (.exposureCompensation, "exposureCompensation"), (.whiteBalance, "whiteBalance"),
        (.driveMode, "driveMode"), (.focusMode, "focusMode"), (.imageFormat, "imageFormat"),
    ]
}

/// The state of the camera's memory card (PROTOCOL.md §6.5).
public struct StorageState: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ok = StorageState(rawValue: 0)
    public static let noCard = StorageState(rawValue: 1)
    public static let full = StorageState(rawValue: 2)
    public static let error = StorageState(rawValue: 3)
    public static let readOnly = StorageState(rawValue: 4)

    public static let known: [(StorageState, String)] = [
        (.ok, "ok"), (.noCard, "noCard"), (.full, "full"), (.error, "error"), (.readOnly, "readOnly"),
    ]
}

/// Whether the camera is on (PROTOCOL.md §6.5).
public struct CameraPower: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let off = CameraPower(rawValue: 0)
    public static let on = CameraPower(rawValue: 1)
    public static let sleeping = CameraPower(rawValue: 2)

    public static let known: [(CameraPower, String)] = [(.off, "off"), (.on, "on"), (.sleeping, "sleeping")]
}

/// The camera's exposure mode dial (PROTOCOL.md §6.5).
public struct ExposureMode: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let manual = ExposureMode(rawValue: 0)
    public static let aperturePriority = ExposureMode(rawValue: 1)
    public static let shutterPriority = ExposureMode(rawValue: 2)
    public static let program = ExposureMode(rawValue: 3)
    public static let auto = ExposureMode(rawValue: 4)
    public static let bulb = ExposureMode(rawValue: 5)
    public static let video = ExposureMode(rawValue: 6)

    public static let known: [(ExposureMode, String)] = [
        (.manual, "manual"), (.aperturePriority, "aperturePriority"), (.shutterPriority, "shutterPriority"),
        (.program, "program"), (.auto, "auto"), (.bulb, "bulb"), (.video, "video"),
    ]
}

/// How a half-press ended (PROTOCOL.md §6.5).
public struct FocusResult: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let acquired = FocusResult(rawValue: 0)
    public static let failed = FocusResult(rawValue: 1)
    public static let manualFocus = FocusResult(rawValue: 2)

    public static let known: [(FocusResult, String)] = [
        (.acquired, "acquired"), (.failed, "failed"), (.manualFocus, "manualFocus"),
    ]
}

/// What a module can do, announced in its `hello` response (PROTOCOL.md §6.6).
public struct Capabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

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

    /// Every capability version 1 defines, with its name.
    public static let known: [(Capabilities, String)] = [
        (.shoot, "shoot"), (.focus, "focus"), (.bulb, "bulb"), (.video, "video"),
        (.readSettings, "readSettings"), (.writeSettings, "writeSettings"), (.meteredEV, "meteredEV"),
        (.geotag, "geotag"), (.setTime, "setTime"), (.scheduledFire, "scheduledFire"),
    ]

    /// The names of the known capabilities in this set.
    public var names: [String] { Self.known.filter { contains($0.0) }.map(\.1) }
}
