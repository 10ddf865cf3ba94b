import CameraKit
public import Foundation
public import JSON
import UnleashedKit

/// A ramp program: keyframes that say, from a time or a frame of the run on, whether the ramp
/// follows the light (`auto`, with a brightness offset interpolated between keyframes) or holds
/// a fixed exposure (for a known event, or a start before the light changes), and the interval,
/// interpolated between the keyframes that give one. The file format is JSON
/// (docs/holy-grail.md):
///
/// ```json
/// {"keyframes": [
///   {"at": "0s", "mode": "fixed", "shutter": "1/500", "iso": 100, "aperture": "f/8"},
///   {"at": "20m", "mode": "auto", "evOffset": 0, "interval": "10s"},
///   {"frame": 900, "mode": "auto", "evOffset": -0.7, "interval": "30s"}
/// ]}
/// ```
public struct RampProgram: Codable, Hashable, Sendable {
    /// One keyframe, in force from its time until the next one.
    public struct Keyframe: Codable, Hashable, Sendable {
        /// When it starts, in milliseconds from the run's first slot.
        public var atMs: Int64
        public var mode: Mode
        /// Stops brighter (negative: darker) than the ramp would make the picture; in `auto`
        /// it moves in a straight line to the next `auto` keyframe's.
        public var evOffset: Double
        /// The exposure of a `fixed` keyframe.
        public var fixed: FixedExposure?
        /// The interval from here on, in milliseconds; it moves in a straight line to the next
        /// keyframe that gives one. Nil leaves it to the keyframes around, or to the run.
        public var intervalMs: Int64?
    }

    public enum Mode: String, Codable, Hashable, Sendable {
        case auto
        case fixed
    }

    /// Settings a `fixed` keyframe holds.
    public struct FixedExposure: Codable, Hashable, Sendable {
        /// A shutter speed as the camera names it; nil with ``bulbMs``.
        public var shutter: String?
        /// A bulb time instead of a shutter speed.
        public var bulbMs: Int64?
        public var iso: UInt32
        public var aperture: String
    }

    /// In time order, the first at 0.
    public private(set) var keyframes: [Keyframe]

    /// What the program asks for `elapsed` into the run: the keyframe in force, the offset, and
    /// the interval (nil before the first keyframe that gives one).
    public func at(_ elapsed: Duration) -> (keyframe: Keyframe, evOffset: Double, interval: Duration?) {
        let milliseconds = elapsed.wholeMilliseconds
        let index = keyframes.lastIndex { $0.atMs <= milliseconds } ?? 0
        let current = keyframes[index]
        let interval = interval(atMs: milliseconds)
        guard current.mode == .auto, let next = keyframes[(index + 1)...].first, next.mode == .auto, next.atMs > current.atMs else {
            return (current, current.evOffset, interval)
        }
        let fraction = Double(milliseconds - current.atMs) / Double(next.atMs - current.atMs)
        return (current, current.evOffset + (next.evOffset - current.evOffset) * fraction, interval)
    }

    /// The interval `milliseconds` into the run: the last one given, moving in a straight line
    /// to the next one given.
    private func interval(atMs milliseconds: Int64) -> Duration? {
        let timed = keyframes.compactMap { keyframe in keyframe.intervalMs.map { (at: keyframe.atMs, interval: $0) } }
        guard let index = timed.lastIndex(where: { $0.at <= milliseconds }) else { return nil }
        let current = timed[index]
        guard index + 1 < timed.count else { return .milliseconds(current.interval) }
        let next = timed[index + 1]
        let fraction = Double(milliseconds - current.at) / Double(next.at - current.at)
        return .milliseconds(Int64((Double(current.interval) + Double(next.interval - current.interval) * fraction).rounded()))
    }

    /// The longest and shortest interval the program gives, if it gives any.
    public var intervalRange: ClosedRange<Duration>? {
        let intervals = keyframes.compactMap(\.intervalMs)
        guard let shortest = intervals.min(), let longest = intervals.max() else { return nil }
        return .milliseconds(shortest) ... .milliseconds(longest)
    }

    /// A program file as written, read strictly: a member it does not name is refused.
    private struct File: Decodable {
        var keyframes: [Entry]

        struct Entry: Decodable {
            var at: String?
            var frame: Int?
            var mode: Mode?
            var evOffset: Double?
            var interval: String?
            var shutter: String?
            var bulbMs: Int64?
            var iso: UInt32?
            var aperture: String?
        }
    }

    /// Reads a program file's JSON for a run of slots `intervalMs` apart, with an error that
    /// names the keyframe and the member when something is wrong (`keyframes[2].iso`).
    public init(json data: Data, intervalMs: Int64) throws(RampProgramError) {
        let file: File
        do throws(JSONShapeError) {
            file = try StrictJSONDecoder().decode(File.self, from: data)
        } catch where error.path.isEmpty {
            throw RampProgramError("the program is not a JSON object like {\"keyframes\": [...]}: \(error.problem)")
        } catch {
            throw RampProgramError(error.description)
        }
        guard !file.keyframes.isEmpty else { throw RampProgramError("keyframes: empty; a program needs at least one") }
        var keyframes: [Keyframe] = []
        for (index, entry) in file.keyframes.enumerated() {
            keyframes.append(try Self.keyframe(entry, name: "keyframes[\(index)]", intervalMs: intervalMs))
        }
        guard zip(keyframes, keyframes.dropFirst()).allSatisfy({ $0.atMs < $1.atMs }) else {
            throw RampProgramError("the keyframes must be in time order, each after the one before")
        }
        if keyframes[0].atMs > 0 {
            // Before the first keyframe the ramp follows the light as without a program.
            keyframes.insert(Keyframe(atMs: 0, mode: .auto, evOffset: 0, fixed: nil), at: 0)
        }
        self.keyframes = keyframes
    }

    private static func keyframe(_ entry: File.Entry, name: String, intervalMs: Int64) throws(RampProgramError) -> Keyframe {
        let atMs: Int64
        switch (entry.at, entry.frame) {
        case (let text?, nil):
            guard let duration = parseDuration(text) else { throw RampProgramError("\(name).at: '\(text)' is not a duration like 20m or 1h30m") }
            atMs = duration.wholeMilliseconds
        case (nil, let frame?) where frame >= 1:
            atMs = Int64(frame - 1) * intervalMs
        default:
            throw RampProgramError("\(name): give exactly one of at (a duration from the start, like \"20m\") or frame (1 or more)")
        }
        var intervalMs: Int64?
        if let text = entry.interval {
            guard let interval = parseDuration(text), interval >= .milliseconds(100) else {
                throw RampProgramError("\(name).interval: must be a duration of 100ms or more, like \"30s\"")
            }
            intervalMs = interval.wholeMilliseconds
        }
        let mode = entry.mode ?? .auto
        let offset = entry.evOffset ?? 0
        guard abs(offset) <= 5 else { throw RampProgramError("\(name).evOffset: must be a number of stops between -5 and 5") }
        guard mode == .fixed else {
            let stray = [("shutter", entry.shutter != nil), ("bulbMs", entry.bulbMs != nil), ("iso", entry.iso != nil),
                         ("aperture", entry.aperture != nil)].first { $0.1 }
            if let (member, _) = stray {
                throw RampProgramError("\(name).\(member): belongs to a fixed keyframe; an auto keyframe follows the light")
            }
            return Keyframe(atMs: atMs, mode: .auto, evOffset: offset, fixed: nil, intervalMs: intervalMs)
        }
        guard let iso = entry.iso, let isoSpeed = ISOSpeed(iso), !isoSpeed.isAuto else {
            throw RampProgramError("\(name).iso: a fixed keyframe needs an iso, like 100")
        }
        guard let aperture = entry.aperture, Aperture(text: aperture) != nil else {
            throw RampProgramError("\(name).aperture: a fixed keyframe needs an aperture, like \"f/8\"")
        }
        switch (entry.shutter, entry.bulbMs) {
        case (let text?, nil):
            guard let speed = ShutterSpeed(text: text), !speed.isBulb else {
                throw RampProgramError("\(name).shutter: '\(text)' is not a shutter speed like 1/500 or 2s (for bulb give bulbMs)")
            }
        case (nil, let milliseconds?) where milliseconds >= 1:
            break
        default:
            throw RampProgramError("\(name): a fixed keyframe needs exactly one of shutter (like \"1/500\") or bulbMs (1 or more)")
        }
        return Keyframe(atMs: atMs, mode: .fixed, evOffset: 0,
                        fixed: FixedExposure(shutter: entry.shutter, bulbMs: entry.bulbMs, iso: isoSpeed.rawValue, aperture: aperture),
                        intervalMs: intervalMs)
    }
}

extension RampProgram {
    /// The program in its file's form, for the control API: `init(json:intervalMs:)` reads it
    /// back (times as milliseconds, `"at": "1800000ms"`).
    public var json: JSONValue {
        .object(["keyframes": .array(keyframes.map { keyframe in
            var fields: [String: JSONValue] = ["at": .string("\(keyframe.atMs)ms"), "mode": .string(keyframe.mode.rawValue)]
            if keyframe.mode == .auto { fields["evOffset"] = .number(keyframe.evOffset) }
            if let intervalMs = keyframe.intervalMs { fields["interval"] = .string("\(intervalMs)ms") }
            if let fixed = keyframe.fixed {
                fields["iso"] = .integer(Int64(fixed.iso))
                fields["aperture"] = .string(fixed.aperture)
                if let shutter = fixed.shutter { fields["shutter"] = .string(shutter) }
                if let bulbMs = fixed.bulbMs { fields["bulbMs"] = .integer(bulbMs) }
            }
            return .object(fields)
        })])
    }
}

/// Why a ramp program cannot be used.
public struct RampProgramError: Error, CustomStringConvertible, Hashable, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension RampProgram.FixedExposure {
    /// The exposure these settings make; nil if a value does not read.
    var exposure: RampExposure? {
        guard let iso = ISOSpeed(iso), let aperture = Aperture(text: aperture), let gain = iso.gainStops else { return nil }
        if let bulbMs {
            return RampExposure(shutter: .bulb, bulbMilliseconds: bulbMs, iso: iso, aperture: aperture,
                                ev100: ExposureValue.ev100(timeStops: log2(Double(bulbMs) / 1000), gainStops: gain, lightStops: aperture.lightStops))
        }
        guard let text = shutter, let speed = ShutterSpeed(text: text), let time = speed.timeStops else { return nil }
        return RampExposure(shutter: speed, bulbMilliseconds: nil, iso: iso, aperture: aperture,
                            ev100: ExposureValue.ev100(timeStops: time, gainStops: gain, lightStops: aperture.lightStops))
    }
}
