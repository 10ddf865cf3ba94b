/// Why a camera said no to a request, or what it reported going wrong outside any request: the
/// reasons a module gives (PROTOCOL.md §4.2), without their wire numbers.
public enum FailureReason: Hashable, Sendable {
    case busy
    case invalidArgument
    case notSupported
    case cameraOff
    case cardFull
    case cameraNotAttached
    case internalError
    /// A reason this version has no name for, as the backend wrote it (`unknown(119)`).
    case other(String)

    private static let named: [(FailureReason, String)] = [
        (.busy, "busy"), (.invalidArgument, "invalidArgument"), (.notSupported, "notSupported"),
        (.cameraOff, "cameraOff"), (.cardFull, "cardFull"), (.cameraNotAttached, "cameraNotAttached"),
        (.internalError, "internalError"),
    ]

    /// The reason's name, the stable code scripts go by; nil for ``other(_:)``.
    public var name: String? { Self.named.first { $0.0 == self }?.1 }

    /// The named reason, or ``other(_:)`` holding `name`.
    public init(name: String) {
        self = Self.named.first { $0.1 == name }?.0 ?? .other(name)
    }
}

extension FailureReason: CustomStringConvertible {
    public var description: String {
        if case .other(let text) = self { return text }
        return name ?? ""
    }
}

extension CameraError {
    /// What kind of failure an error is, whichever backend raised it: what exit statuses and
    /// HTTP statuses go by (see ``exitStatuses`` and ``httpStatuses``).
    public enum Kind: String, CaseIterable, Hashable, Sendable {
        /// The request itself is wrong: a setting, value or argument that cannot be used.
        case usage
        /// The camera understood and said no, or cannot do it.
        case refused
        /// The camera is busy; the same request may work in a moment.
        case busy
        /// The camera or its link is not there, or did not answer in time.
        case unavailable
        /// The system does not let this process use the camera.
        case permission
        /// The caller stopped the operation.
        case cancelled
        /// A bug on this side: a request that could not even be sent.
        case `internal`
    }

    /// The error's kind.
    public var kind: Kind {
        switch self {
        case .unknownSetting, .unreadableValue, .invalidArgument: .usage
        case .settingNotOffered, .readOnly, .valueNotOffered, .notInBulbMode, .focusFailed, .unsupported: .refused
        case .refused(_, .busy, _): .busy
        case .refused: .refused
        case .shotNotReported, .timedOut, .notConnected: .unavailable
        case .cancelled: .cancelled
        case .device(let failure): failure.kind.errorKind
        }
    }

    /// The stable code scripts go by (`valueNotOffered`, `busy`, `notConnected`), the same in the
    /// CLI's `--json` output and the daemon's error answers.
    public var code: String {
        switch self {
        case .unknownSetting: "unknownSetting"
        case .unreadableValue: "unreadableValue"
        case .invalidArgument: "invalidArgument"
        case .settingNotOffered: "settingNotOffered"
        case .readOnly: "readOnly"
        case .valueNotOffered: "valueNotOffered"
        case .notInBulbMode: "notInBulbMode"
        case .focusFailed: "focusFailed"
        case .unsupported: "unsupported"
        case .refused(_, let reason, _): reason.name ?? "refused"
        case .shotNotReported: "shotNotReported"
        case .timedOut: "timedOut"
        case .notConnected: "notConnected"
        case .cancelled: "cancelled"
        case .device(let failure): failure.kind.code
        }
    }

    /// The CLI's exit status for each kind, sysexits-style (docs/user-guide.md, "Errors and
    /// exit statuses"). A cancelled command exits as the signal that stopped it did.
    public static let exitStatuses: [Kind: Int32] = [
        .usage: 64, // EX_USAGE
        .refused: 65, // EX_DATAERR: the camera would not take it
        .busy: 75, // EX_TEMPFAIL
        .unavailable: 69, // EX_UNAVAILABLE
        .permission: 77, // EX_NOPERM
        .cancelled: 130, // 128 + SIGINT
        .internal: 70, // EX_SOFTWARE
    ]

    /// The daemon's HTTP status for each kind (docs/daemon.md): the caller's mistake 400, the
    /// camera said no 409, the camera or its link unavailable 503, the client went away 499.
    public static let httpStatuses: [Kind: Int] = [
        .usage: 400,
        .refused: 409,
        .busy: 409,
        .unavailable: 503,
        // The daemon, not the client, lacks access to the device: the camera is unavailable to it.
        .permission: 503,
        .cancelled: 499,
        .internal: 500,
    ]

    /// The exit status for this error's kind.
    public var exitStatus: Int32 { Self.exitStatuses[kind] ?? 70 }

    /// The errors whose HTTP status is not their kind's, by code. `unreadableValue` is text that
    /// the setting the path names cannot read (`{"value": "1/125"}` for iso): the body fits the
    /// API's schema, which cannot tie a value to the path, so the answer is 422, not 400.
    public static let httpStatusesByCode: [String: Int] = ["unreadableValue": 422]

    /// The HTTP status code for this error: its code's, else its kind's.
    public var httpStatusCode: Int { Self.httpStatusesByCode[code] ?? Self.httpStatuses[kind] ?? 500 }
}
