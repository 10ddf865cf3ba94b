public import CameraKit

/// A value carried as one byte whose unknown values are kept, not rejected: a module may report a
/// state that this version does not know, and it is shown, not refused (PROTOCOL.md §5.1).
public protocol WireEnumeration: Hashable, Sendable, CustomStringConvertible {
    /// The value a byte stands for; a byte this version has no name for is kept as it is.
    init(wireCode: UInt8)
    /// The value's byte.
    var wireCode: UInt8 { get }
    /// The value's name in PROTOCOL.md, or nil for a byte this version does not know.
    var name: String? { get }
    /// The named value.
    init?(name: String)
}

/// A code of the protocol's own envelope (an opcode, an event code, a status), whose raw value
/// is its byte.
public protocol RawWireEnumeration: WireEnumeration, RawRepresentable<UInt8> {
    init(rawValue: UInt8)
    /// Every value this version knows, with its name.
    static var known: [(Self, String)] { get }
}

extension RawWireEnumeration {
    public init(wireCode: UInt8) { self.init(rawValue: wireCode) }

    public var wireCode: UInt8 { rawValue }

    public var name: String? { Self.known.first { $0.0 == self }?.1 }

    public init?(name: String) {
        guard let match = Self.known.first(where: { $0.1 == name }) else { return nil }
        self = match.0
    }

    public var description: String { name ?? "unknown(\(rawValue))" }
}

/// A camera value whose conformance gives each named value its byte: a byte with no name
/// becomes the value's `unknown` case, which goes back out as the same byte.
extension WireEnumeration where Self: OpenEnumeration {
    public init(wireCode: UInt8) {
        self = Self.known.first { $0.wireCode == wireCode } ?? .unknown(wireCode)
    }
}

/// What a message is: a request, its response, or an unprompted event (PROTOCOL.md §4).
public enum MessageKind: UInt8, Hashable, Sendable {
    case request = 0x01
    case response = 0x02
    case event = 0x03
}

/// The operation a request asks for; its response carries the same code (PROTOCOL.md §4.1).
public struct Opcode: RawWireEnumeration {
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
public struct EventCode: RawWireEnumeration {
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
public struct StatusCode: RawWireEnumeration {
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

// MARK: - Camera values

extension SettingID: WireEnumeration {
    /// The `setting` field's byte (PROTOCOL.md §6.2).
    public var wireCode: UInt8 {
        switch self {
        case .iso: 0x01
        case .shutterSpeed: 0x02
        case .aperture: 0x03
        case .exposureCompensation: 0x04
        case .whiteBalance: 0x05
        case .driveMode: 0x06
        case .focusMode: 0x07
        case .imageFormat: 0x08
        case .unknown(let code): code
        }
    }
}

extension StorageState: WireEnumeration {
    /// The `storageState` field's byte (PROTOCOL.md §6.5).
    public var wireCode: UInt8 {
        switch self {
        case .ok: 0
        case .noCard: 1
        case .full: 2
        case .error: 3
        case .readOnly: 4
        case .unknown(let code): code
        }
    }
}

extension CameraPower: WireEnumeration {
    /// The `cameraPower` field's byte (PROTOCOL.md §6.5).
    public var wireCode: UInt8 {
        switch self {
        case .off: 0
        case .on: 1
        case .sleeping: 2
        case .unknown(let code): code
        }
    }
}

extension ExposureMode: WireEnumeration {
    /// The `exposureMode` field's byte (PROTOCOL.md §6.5).
    public var wireCode: UInt8 {
        switch self {
        case .manual: 0
        case .aperturePriority: 1
        case .shutterPriority: 2
        case .program: 3
        case .auto: 4
        case .bulb: 5
        case .video: 6
        case .unknown(let code): code
        }
    }
}

extension FocusResult: WireEnumeration {
    /// The `focusResult` field's byte (PROTOCOL.md §6.5).
    public var wireCode: UInt8 {
        switch self {
        case .acquired: 0
        case .failed: 1
        case .manualFocus: 2
        case .unknown(let code): code
        }
    }
}

extension Capabilities {
    /// The bit of the `hello` response's `capabilities` field that announces each named
    /// capability (PROTOCOL.md §6.6).
    static let wireBits: [(Capabilities, Int)] = [
        (.shoot, 0), (.focus, 1), (.bulb, 2), (.video, 3), (.readSettings, 4), (.writeSettings, 5),
        (.meteredEV, 6), (.geotag, 7), (.setTime, 8), (.scheduledFire, 9),
    ]

    /// The capabilities a module announced in its `capabilities` field; a bit this version has no
    /// name for is kept as ``Capabilities/unknown(_:)`` and goes back out as the same bit.
    public init(wireBits bits: UInt32) {
        self = []
        for bit in 0..<32 where bits & (1 << UInt32(bit)) != 0 {
            insert(Self.wireBits.first { $0.1 == bit }?.0 ?? .unknown(bit))
        }
    }

    /// The `capabilities` field that announces these capabilities.
    public var wireBits: UInt32 {
        var bits = UInt32(0)
        for (capability, bit) in Self.wireBits where contains(capability) { bits |= 1 << UInt32(bit) }
        for code in unknownCodes { bits |= 1 << UInt32(code) }
        return bits
    }
}
