import Foundation
import JSON
import UnleashedAPI
import UnleashedKit

/// A shoot command's payload: empty, `{}` or Home Assistant's button press for a picture now;
/// `{"at": "2026-11-27T21:00:00.000Z"}` for one at that UTC instant on this host's clock.
struct ShootRequest: Sendable, Equatable {
    /// When to fire; nil for now.
    var at: Date?

    /// Why a command is refused, for its answer.
    struct Refusal: Error, Equatable {
        let reason: String
        /// The command's id, when it had one to answer under.
        var id: String?
    }

    init(payload: [UInt8], now: Date) throws(Refusal) {
        let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Home Assistant's MQTT button sends its payload_press ("PRESS" unless set).
        if text.isEmpty || text == "PRESS" { return }
        let members = try Self.object(text)
        at = try members["at"].map { value throws(Refusal) in try Self.fireTime(value, now: now, id: nil) }
    }

    /// A JSON object, or the refusal that says what it is not.
    static func object(_ text: String) throws(Refusal) -> [String: JSONValue] {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), let members = value.objectValue else {
            throw Refusal(reason: "the command is not a JSON object: \(text.prefix(60).debugDescription)")
        }
        return members
    }

    /// `value` as a fire time that can still be met: an ISO 8601 UTC time at least
    /// ``MQTTBridge/fireWindow``'s lower bound ahead of `now`, and at most its upper bound.
    static func fireTime(_ value: JSONValue, now: Date, id: String?) throws(Refusal) -> Date {
        guard let written = value.stringValue, let at = FleetTime.parse(written) else {
            throw Refusal(reason: "'at' must be a UTC time like 2026-11-27T21:00:00.000Z", id: id)
        }
        // A time from outside is checked before it becomes nanoseconds: year 2999 (or 0001) is
        // past what an Int64 of nanoseconds holds, and the conversion would trap.
        guard let ahead = Duration.checked(from: now, to: at) else {
            let side = at < now ? "long past" : "more than an hour ahead"
            throw Refusal(reason: "cannot fire at \(written): \(side); '\(written)' is not a time near this host's clock", id: id)
        }
        guard ahead >= MQTTBridge.fireWindow.lowerBound else {
            let late = ahead < .zero ? "\(text(.zero - ahead)) ago" : "only \(text(ahead)) ahead"
            throw Refusal(reason: "cannot fire at \(written): that was \(late) when the command arrived; "
                          + "at least \(Self.text(MQTTBridge.fireWindow.lowerBound)) ahead is needed", id: id)
        }
        guard ahead <= MQTTBridge.fireWindow.upperBound else {
            throw Refusal(reason: "cannot fire at \(written): more than an hour ahead; start a time-lapse for that", id: id)
        }
        return at
    }

    private static func text(_ duration: Duration) -> String {
        duration < .seconds(1) ? "\(Int((duration / .milliseconds(1)).rounded())) ms" : String(format: "%.3f s", (duration / .milliseconds(1)) / 1000)
    }
}

/// What every fleet command carries: the `id` its answers go under, and an optional `group`
/// (a host without that group answers that it has none). The rest is the command's own.
struct FleetCommandHeader: Sendable, Equatable {
    var id: String
    var group: String?
    /// The payload's members, for the command's own fields.
    var members: [String: JSONValue]

    init(payload: [UInt8]) throws(ShootRequest.Refusal) {
        members = try ShootRequest.object(String(decoding: payload, as: UTF8.self))
        guard let id = members["id"]?.stringValue, !id.isEmpty, id.count <= 64 else {
            throw ShootRequest.Refusal(reason: "a fleet command needs an 'id' (1 to 64 characters) to answer under")
        }
        self.id = id
        if let group = members["group"] {
            guard let name = group.stringValue, !name.isEmpty else { throw ShootRequest.Refusal(reason: "'group' must be a group's name", id: id) }
            self.group = name
        }
    }
}

/// A command to every host of a fleet: its id, which the answers carry, and the group it is for
/// (every camera of a host without one).
protocol FleetRequest: Sendable {
    var id: String { get }
    var group: String? { get }
}

/// `unleashed fleet shoot`'s command to every host: `{"id": "...", "at": UTC time, "group": NAME}`.
struct FleetShootRequest: FleetRequest, Equatable {
    var id: String
    var at: Date
    var group: String?

    init(payload: [UInt8], now: Date) throws(ShootRequest.Refusal) {
        let header = try FleetCommandHeader(payload: payload)
        (id, group) = (header.id, header.group)
        guard let at = header.members["at"] else { throw ShootRequest.Refusal(reason: "a fleet shot needs its 'at' time", id: id) }
        self.at = try ShootRequest.fireTime(at, now: now, id: id)
    }
}

/// `unleashed fleet stop`'s command to every host: `{"id", "group"}`. Each host stops its
/// time-lapses now (a group's: those on one of its cameras), and answers with what it stopped.
struct FleetStopRequest: FleetRequest, Equatable {
    var id: String
    var group: String?

    init(payload: [UInt8]) throws(ShootRequest.Refusal) {
        let header = try FleetCommandHeader(payload: payload)
        (id, group) = (header.id, header.group)
    }
}

/// `unleashed fleet timelapse`'s command to every host: `{"id", "start": UTC time, "intervalMs",
/// "frames", "group"}` (frames optional: until stopped). Each host runs its cameras (a group's,
/// with a group) on its own engine from `start`, on its own clock, and journals locally.
struct FleetTimelapseRequest: FleetRequest, Equatable {
    var id: String
    var start: Date
    var intervalMs: Int64
    var frames: Int?
    var group: String?

    /// The furthest ahead a fleet time-lapse may be set to start.
    static let longestLead = Duration.seconds(24 * 3600)

    init(payload: [UInt8], now: Date) throws(ShootRequest.Refusal) {
        let header = try FleetCommandHeader(payload: payload)
        (id, group) = (header.id, header.group)
        let members = header.members
        guard let written = members["start"]?.stringValue, let start = FleetTime.parse(written) else {
            throw ShootRequest.Refusal(reason: "'start' must be a UTC time like 2026-11-27T21:00:00.000Z", id: id)
        }
        let ahead = start.timeIntervalSince(now)
        guard ahead >= 0.05 else {
            throw ShootRequest.Refusal(reason: "cannot start at \(written): it had passed (or was under 50 ms away) when the command arrived", id: id)
        }
        guard ahead <= Double(Self.longestLead.components.seconds) else {
            throw ShootRequest.Refusal(reason: "cannot start at \(written): more than a day ahead", id: id)
        }
        self.start = start
        guard let interval = members["intervalMs"]?.integerValue, interval >= 100, interval <= 86_400_000 else {
            throw ShootRequest.Refusal(reason: "'intervalMs' must be 100 to 86400000", id: id)
        }
        intervalMs = interval
        if let count = members["frames"] {
            guard let frames = count.integerValue, frames >= 1, frames <= 10_000_000 else {
                throw ShootRequest.Refusal(reason: "'frames' must be a count of 1 or more", id: id)
            }
            self.frames = Int(frames)
        }
    }
}
