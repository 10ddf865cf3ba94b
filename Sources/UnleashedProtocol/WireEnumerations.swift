/// A one-byte code whose unknown values are kept, not rejected, so that a later protocol version
/// can add values without breaking version-1 readers (PROTOCOL.md §5.1).
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

/// What a message is: a request, its response, or an unprompted event (PROTOCOL.md §4).
public enum MessageKind: UInt8, Hashable, Sendable {
    case request = 0x01
    case response = 0x02
    case event = 0x03
}

/// The operation a request asks for; its response carries the same code (PROTOCOL.md §4.1).
public struct Opcode: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let hello = Opcode(rawValue: 0x01)
    public static let keepAlive = Opcode(rawValue: 0x02)
    public static let getStatus = Opcode(rawValue: 0x03)
    public static let listSettings = Opcode(rawValue: 0x04)
    public static let getSetting = Opcode(rawValue: 0x05)
    public static let setSetting = Opcode(rawValue: 0x06)
    public static let halfPress = Opcode(rawValue: 0x10)
    public static let shoot = Opcode(rawValue: 0x11)
    public static let release = Opcode(rawValue: 0x12)
    public static let bulbStart = Opcode(rawValue: 0x13)
    public static let bulbEnd = Opcode(rawValue: 0x14)
    public static let videoStart = Opcode(rawValue: 0x15)
    public static let videoStop = Opcode(rawValue: 0x16)
    public static let setTime = Opcode(rawValue: 0x20)
    public static let geotag = Opcode(rawValue: 0x21)

    public static let known: [(Opcode, String)] = [
        (.hello, "hello"), (.keepAlive, "keepAlive"), (.getStatus, "getStatus"), (.listSettings, "listSettings"),
        (.getSetting, "getSetting"), (.setSetting, "setSetting"), (.halfPress, "halfPress"), (.shoot, "shoot"),
        (.release, "release"), (.bulbStart, "bulbStart"), (.bulbEnd, "bulbEnd"), (.videoStart, "videoStart"),
        (.videoStop, "videoStop"), (.setTime, "setTime"), (.geotag, "geotag"),
    ]
}

/// What an event reports (PROTOCOL.md §8).
public struct EventCode: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let shotCompleted = EventCode(rawValue: 0x81)
    public static let settingChanged = EventCode(rawValue: 0x82)
    public static let battery = EventCode(rawValue: 0x83)
    public static let storage = EventCode(rawValue: 0x84)
    public static let cameraPower = EventCode(rawValue: 0x85)
    public static let busy = EventCode(rawValue: 0x86)
    public static let meteredEV = EventCode(rawValue: 0x87)
    public static let bulbDeadlineFired = EventCode(rawValue: 0x88)
    public static let error = EventCode(rawValue: 0x89)

    public static let known: [(EventCode, String)] = [
        (.shotCompleted, "shotCompleted"), (.settingChanged, "settingChanged"), (.battery, "battery"),
        (.storage, "storage"), (.cameraPower, "cameraPower"), (.busy, "busy"), (.meteredEV, "meteredEV"),
        (.bulbDeadlineFired, "bulbDeadlineFired"), (.error, "error"),
    ]
}

/// How a request went (PROTOCOL.md §4.2). Unknown codes are failures.
public struct StatusCode: WireEnumeration {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ok = StatusCode(rawValue: 0x00)
    public static let busy = StatusCode(rawValue: 0x01)
    public static let invalidArgument = StatusCode(rawValue: 0x02)
    public static let notSupported = StatusCode(rawValue: 0x03)
    public static let cameraOff = StatusCode(rawValue: 0x04)
    public static let cardFull = StatusCode(rawValue: 0x05)
    public static let cameraNotAttached = StatusCode(rawValue: 0x06)
    public static let internalError = StatusCode(rawValue: 0x07)

    public static let known: [(StatusCode, String)] = [
        (.ok, "ok"), (.busy, "busy"), (.invalidArgument, "invalidArgument"), (.notSupported, "notSupported"),
        (.cameraOff, "cameraOff"), (.cardFull, "cardFull"), (.cameraNotAttached, "cameraNotAttached"),
        (.internalError, "internalError"),
    ]
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
