public import CameraKit

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
