public import Foundation
public import JSON
public import UnleashedKit

// The messages of `unleashed fleet` on the broker (docs/mqtt.md): the commands it publishes to
// every host, and each host's answer. The daemon's bridge writes the answers with these types
// and the fleet client reads them with the same ones.

/// `<prefix>/fleet/shoot`: fire every camera (a group's) at one UTC instant.
public struct FleetShootCommand: Codable, Equatable, Sendable {
    /// The id every answer carries.
    public var id: String
    /// The instant, as ``FleetTime/text(_:)`` writes it.
    public var at: String
    public var group: String?

    public init(id: String, at: Date, group: String?) {
        self.id = id
        self.at = FleetTime.text(at)
        self.group = group
    }
}

/// `<prefix>/fleet/timelapse`: a time-lapse on every host from one start, each on its own clock.
public struct FleetTimelapseCommand: Codable, Equatable, Sendable {
    public var id: String
    public var start: String
    public var intervalMs: Int64
    /// nil: until stopped.
    public var frames: Int?
    public var group: String?

    public init(id: String, start: Date, interval: Duration, frames: Int?, group: String?) {
        self.id = id
        self.start = FleetTime.text(start)
        intervalMs = Int64(interval / .milliseconds(1))
        self.frames = frames
        self.group = group
    }
}

/// `<prefix>/fleet/stop`: stop every time-lapse (those on a group's cameras) now.
public struct FleetStopCommand: Codable, Equatable, Sendable {
    public var id: String
    public var group: String?

    public init(id: String, group: String?) {
        self.id = id
        self.group = group
    }
}

/// A host's answer to a fleet command, on `<prefix>/<node>/fleet`: its name and clock, whether
/// it took the command (with why not), and what it did, as each command's members say.
public struct FleetAnswer: Codable, Equatable, Sendable {
    public var node: String
    /// The command's id; nil only when the command had none to answer under.
    public var id: String?
    public var clock: HostClock
    public var accepted: Bool
    /// Why the host refused.
    public var reason: String?
    /// A shot: the instant it fired at, and each camera's picture.
    public var at: String?
    public var shots: [Shot]?
    /// A time-lapse: the job it runs, on which cameras, from when.
    public var job: Int64?
    public var cameras: [String]?
    public var start: String?
    /// A stop: the jobs stopped, and those that would not stop.
    public var stopped: [StoppedJob]?
    public var failed: [FailedJob]?

    /// A refusal, or the start of an answer that `accepted` and the command's members complete.
    public init(node: String, id: String?, clock: HostClock, accepted: Bool = false, reason: String? = nil) {
        self.node = node
        self.id = id
        self.clock = clock
        self.accepted = accepted
        self.reason = reason
    }

    /// One camera's picture at the fleet's instant, or why it failed.
    public struct Shot: Codable, Equatable, Sendable {
        public var camera: String
        public var ok: Bool
        /// The instant it was fired at.
        public var at: String?
        /// How long after the instant the camera confirmed the picture.
        public var answeredAfterAtMs: Double?
        /// The shot as `POST /v1/cameras/{camera}/shoot` answers it.
        public var shot: JSONValue?
        public var error: String?

        public init(camera: String, ok: Bool, at: String? = nil, answeredAfterAtMs: Double? = nil, shot: JSONValue? = nil, error: String? = nil) {
            self.camera = camera
            self.ok = ok
            self.at = at
            self.answeredAfterAtMs = answeredAfterAtMs
            self.shot = shot
            self.error = error
        }
    }

    /// A job a stop ended: its cameras, the pictures it took, the last slot it reached.
    public struct StoppedJob: Codable, Equatable, Sendable {
        public var job: Int64
        public var cameras: [String]
        public var frames: Int
        public var lastSlot: Int

        public init(job: Int64, cameras: [String], frames: Int, lastSlot: Int) {
            self.job = job
            self.cameras = cameras
            self.frames = frames
            self.lastSlot = lastSlot
        }
    }

    /// A job that would not stop, and why.
    public struct FailedJob: Codable, Equatable, Sendable {
        public var job: Int64
        public var error: String

        public init(job: Int64, error: String) {
            self.job = job
            self.error = error
        }
    }
}

/// A host's clock as it reports it (`<prefix>/<node>/clock`, retained, and in each fleet answer):
/// whether a time service keeps it synchronised, and its estimated and maximum error.
public struct HostClock: Codable, Equatable, Sendable {
    public var synchronised: Bool
    public var estimatedErrorMs: Double
    public var maximumErrorMs: Double

    public init(synchronised: Bool, estimatedErrorMs: Double, maximumErrorMs: Double) {
        self.synchronised = synchronised
        self.estimatedErrorMs = estimatedErrorMs
        self.maximumErrorMs = maximumErrorMs
    }

    /// The clock as the kernel's discipline reports it.
    public init(_ discipline: ClockDiscipline) {
        self.init(synchronised: discipline.synchronised, estimatedErrorMs: discipline.estimatedError / .microseconds(1) / 1000,
                  maximumErrorMs: discipline.maximumError / .microseconds(1) / 1000)
    }
}

/// Times as the fleet's messages write them: UTC with milliseconds (`2026-11-27T21:00:00.000Z`);
/// on the command line also `+2s` from now.
public enum FleetTime {
    /// `+DURATION` from `now` (any duration ``parseDuration(_:)`` takes), or a time with its zone.
    public static func read(_ text: String, now: Date) -> Date? {
        if text.hasPrefix("+") {
            guard let ahead = parseDuration(String(text.dropFirst())) else { return nil }
            return now.addingTimeInterval(Double(ahead / .milliseconds(1)) / 1000)
        }
        return parse(text)
    }

    /// An ISO 8601 time with its zone (`Z` or an offset), with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)))
            ?? (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    /// A UTC time to the nearest millisecond (the format cuts the rest off, so half a
    /// millisecond is added first: a time read back from its text, a few ulps under, writes the
    /// same text again).
    public static func text(_ date: Date) -> String {
        date.addingTimeInterval(0.0005).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

extension Duration {
    /// The time from `start` to `end`, or nil when they are more than a century apart. Every
    /// time taken from outside (a command, a request) goes through this before arithmetic:
    /// nanoseconds in an Int64 reach only 292 years, and a conversion past that traps.
    public static func checked(from start: Date, to end: Date) -> Duration? {
        let seconds = end.timeIntervalSince(start)
        guard seconds.isFinite, abs(seconds) < 100 * 365.25 * 86_400 else { return nil }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
