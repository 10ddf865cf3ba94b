import Foundation
import UnleashedKit
import UnleashedProtocol

/// Formatting shared by the commands.
enum Output {
    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A stable code for scripts and the exit status for an error.
    static func classify(_ error: CameraError) -> (String, ExitStatus) {
        switch error {
        case .unknownSetting: ("unknownSetting", .usage)
        case .unreadableValue: ("unreadableValue", .usage)
        case .settingNotOffered: ("settingNotOffered", .refused)
        case .readOnly: ("readOnly", .refused)
        case .valueNotOffered: ("valueNotOffered", .refused)
        case .shotNotReported: ("shotNotReported", .unavailable)
        case .session(let sessionError):
            switch sessionError {
            case .refused(_, .busy, _): ("busy", .temporary)
            case .refused(_, let status, _): (status.name ?? "refused", .refused)
            case .timedOut: ("timedOut", .unavailable)
            case .versionMismatch: ("versionMismatch", .unavailable)
            case .disconnected: ("disconnected", .unavailable)
            case .transport: ("transport", .unavailable)
            case .invalidRequest: ("invalidRequest", .software)
            }
        }
    }

    /// Unix milliseconds as an ISO 8601 UTC timestamp.
    static func timestamp(_ milliseconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// `+12`, `+11 2/3`: metered EV reads like exposure compensation.
    static func ev(_ stops: ExposureStops) -> String { stops.text }

    static func percent(_ value: Int?) -> String { value.map { "\($0)%" } ?? "unknown" }
}
