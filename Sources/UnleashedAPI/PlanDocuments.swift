import CameraKit
public import Foundation
public import Intervalometer
public import JSON
import UnleashedKit

/// A request body that does not say what the API needs; the message names the field.
public struct JobRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// Whether the body is well formed and breaks a rule no JSON schema can state: numbers
    /// against each other (a bulb and its gap longer than the interval), a hook the daemon
    /// cannot run, a bracket on a rig. The API answers 422 for these and 400 for the rest.
    public let isUnprocessable: Bool

    public init(_ description: String, unprocessable: Bool = false) {
        self.description = description
        self.isUnprocessable = unprocessable
    }
}

/// What ``API/startJob`` asks for: a plan for one camera (or the daemon's only one) or a rig.
public struct JobSubmission: Equatable, Sendable {
    public var camera: String?
    /// A rig: every slot fires all of these cameras together.
    public var cameras: [String]?
    public var plan: RunPlan
    public var startDelay: Duration

    public init(plan: RunPlan, camera: String? = nil, cameras: [String]? = nil, startDelay: Duration = .zero) {
        self.plan = plan
        self.camera = camera
        self.cameras = cameras
        self.startDelay = startDelay
    }

    /// The request body as a client sends it.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["plan": plan.json, "startDelayMs": .integer(startDelay.wholeMilliseconds)]
        members["camera"] = camera.map(JSONValue.string)
        members["cameras"] = cameras.map { .array($0.map(JSONValue.string)) }
        return .object(members)
    }

    /// Reads a request body: a JSON object with `plan`, and optionally `camera` and
    /// `startDelayMs`. Members this version does not know are refused, so that a misspelt one
    /// is not silently ignored.
    public init(body: Data, now: Date = Date()) throws(JobRequestError) {
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw JobRequestError("the body is not JSON: send an object like {\"plan\": {\"intervalMs\": 5000, \"frames\": 50}}")
        }
        let members = try RequestFields(document, at: "body", allowed: ["camera", "cameras", "plan", "startDelayMs"])
        camera = try members.string("camera")
        cameras = try members.strings("cameras")
        if let cameras {
            guard camera == nil else { throw JobRequestError("cameras: give either camera (one) or cameras (a rig), not both") }
            guard !cameras.isEmpty else { throw JobRequestError("cameras: name at least one camera") }
            if let repeated = cameras.first(where: { name in cameras.count { $0 == name } > 1 }) {
                throw JobRequestError("cameras: '\(repeated)' is named twice")
            }
        }
        guard let plan = members["plan"] else {
            throw JobRequestError("plan: missing; say what to shoot, e.g. {\"intervalMs\": 5000, \"frames\": 50}")
        }
        self.plan = try RunPlan(json: plan, at: "plan", now: now)
        if cameras != nil, case .bracket = self.plan.exposure {
            throw JobRequestError("plan.exposure: a bracket steps one camera's own shutter speeds; run a bracket on each camera of a rig by itself",
                                  unprocessable: true)
        }
        let delay = try members.milliseconds("startDelayMs") ?? 0
        guard delay >= 0 else { throw JobRequestError("startDelayMs: cannot be negative") }
        startDelay = .milliseconds(delay)
    }
}

/// ``API/stopJob``'s optional body: `{"when": "now" | "afterFrame"}`.
public enum StopWhen: String, Sendable, CaseIterable {
    case now
    case afterFrame

    /// The request body as a client sends it.
    public var json: JSONValue { ["when": .string(rawValue)] }

    public init(body: Data) throws(JobRequestError) {
        guard !body.allSatisfy({ [0x20, 0x0A, 0x0D, 0x09].contains($0) }) else {
            self = .now
            return
        }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw JobRequestError("the body is not JSON: send {\"when\": \"now\"} or {\"when\": \"afterFrame\"}, or nothing")
        }
        let members = try RequestFields(document, at: "body", allowed: ["when"])
        guard let text = try members.string("when") else {
            self = .now
            return
        }
        guard let when = StopWhen(rawValue: text) else {
            throw JobRequestError("when: '\(text)' is not a choice; choose now or afterFrame")
        }
        self = when
    }
}

/// The members of one JSON object, read with messages that name the path to each field; the
/// camera routes check their bodies' members with it too.
package struct RequestFields {
    let members: [String: JSONValue]
    let path: String

    package init(_ value: JSONValue, at path: String, allowed: Set<String>) throws(JobRequestError) {
        guard case .object(let members) = value else { throw JobRequestError("\(path): expected an object") }
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw JobRequestError("\(Self.name(unknown, in: path)): not a member this API knows; it knows \(allowed.sorted().joined(separator: ", "))")
        }
        self.members = members
        self.path = path
    }

    subscript(key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func name(_ key: String) -> String { Self.name(key, in: path) }

    private static func name(_ key: String, in path: String) -> String { path == "body" ? key : "\(path).\(key)" }

    func string(_ key: String) throws(JobRequestError) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.stringValue else { throw JobRequestError("\(name(key)): expected a string") }
        return text
    }

    func strings(_ key: String) throws(JobRequestError) -> [String]? {
        guard let value = self[key] else { return nil }
        guard let items = value.arrayValue else { throw JobRequestError("\(name(key)): expected an array of strings") }
        var strings: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw JobRequestError("\(name(key)): expected an array of strings") }
            strings.append(text)
        }
        return strings
    }

    func milliseconds(_ key: String) throws(JobRequestError) -> Int64? {
        guard let value = self[key] else { return nil }
        guard let whole = value.integerValue else { throw JobRequestError("\(name(key)): expected a whole number of milliseconds") }
        return whole
    }

    func count(_ key: String) throws(JobRequestError) -> Int? {
        guard let value = self[key] else { return nil }
        guard let whole = value.integerValue, let count = Int(exactly: whole) else {
            throw JobRequestError("\(name(key)): expected a whole number")
        }
        return count
    }

    func required<T>(_ key: String, _ read: (String) throws(JobRequestError) -> T?, _ what: String) throws(JobRequestError) -> T {
        guard let value = try read(key) else { throw JobRequestError("\(name(key)): missing; \(what)") }
        return value
    }
}

extension RunPlan {
    /// The plan as the API writes it in a job, and as ``API/startJob`` takes it, so that a
    /// client submits exactly what it would run itself.
    public var apiJSON: JSONValue { json }

    /// Reads a plan in the API's shape (a job's `plan`); the error names the field.
    public init(apiJSON: JSONValue, now: Date = Date()) throws(JobRequestError) {
        try self.init(json: apiJSON, at: "plan", now: now)
    }

    /// Reads the API's plan shape:
    /// `{"intervalMs": 5000, "frames": 50 | "durationMs": 60000 | "until": "06:30" | "forever": true,
    ///   "exposure": {"kind": "camera"}, "overrun": "skip", "minimumGapMs": 0, "hook": "/path", "hookTimeoutMs": 30000}`.
    init(json: JSONValue, at path: String, now: Date) throws(JobRequestError) {
        let fields = try RequestFields(json, at: path, allowed: [
            "intervalMs", "frames", "durationMs", "until", "forever", "exposure", "overrun", "minimumGapMs", "hook",
            "hookTimeoutMs",
        ])
        let interval = try fields.required("intervalMs", fields.milliseconds, "the time from one slot's start to the next, e.g. 5000")
        let stops = ["frames", "durationMs", "until", "forever"].filter { fields[$0] != nil }
        guard stops.count == 1, let stopKey = stops.first else {
            throw JobRequestError("\(path): say when to stop with exactly one of frames, durationMs, until (\"06:30\") or forever (true)")
        }
        let stop: StopCondition
        switch stopKey {
        case "frames":
            stop = .frames(try fields.required("frames", fields.count, "the number of slots"))
        case "durationMs":
            stop = .duration(milliseconds: try fields.required("durationMs", fields.milliseconds, "how long the run lasts"))
        case "until":
            let text = try fields.required("until", fields.string, "a time like 06:30")
            stop = .until(unixMilliseconds: try Self.until(text, field: fields.name("until"), now: now))
        default:
            guard fields["forever"] == .bool(true) else {
                throw JobRequestError("\(fields.name("forever")): expected true (a run that ends only when stopped)")
            }
            stop = .never
        }
        let exposure = try fields["exposure"].map { value throws(JobRequestError) in
            try ExposurePlan(json: value, at: fields.name("exposure"), intervalMs: interval)
        } ?? .camera
        var overrun = OverrunPolicy.skip
        if let text = try fields.string("overrun") {
            guard let policy = OverrunPolicy(rawValue: text) else {
                throw JobRequestError("\(fields.name("overrun")): '\(text)' is not a policy; choose skip, defer or burst")
            }
            overrun = policy
        }
        // The same rule as the CLI's --hook: a hook the daemon cannot run is refused now, not at init.
        let hook = try fields.string("hook")
        if let hook, let problem = HookRunner.problem(with: hook) {
            throw JobRequestError("\(fields.name("hook")): \(problem)", unprocessable: true)
        }
        let hookTimeoutMs = try fields.milliseconds("hookTimeoutMs")
        if hookTimeoutMs != nil, hook == nil {
            throw JobRequestError("\(fields.name("hookTimeoutMs")): is the time limit of a hook; give \(fields.name("hook")) too")
        }
        self.init(intervalMs: interval, stop: stop, exposure: exposure, overrun: overrun,
                  minimumGapMs: try fields.milliseconds("minimumGapMs") ?? 0, hook: hook, hookTimeoutMs: hookTimeoutMs)
        try checkNumbers(fields)
    }

    /// Refuses what the plan gets wrong by itself, whatever camera runs it: before the daemon
    /// looks for the camera, so that a client learns of its own mistakes first, even while the
    /// camera is busy with another job (422 before 409). The rules are the plan's own
    /// (``RunPlan/validate()``); the message names the member as the client sent it.
    private func checkNumbers(_ fields: RequestFields) throws(JobRequestError) {
        do {
            try validate()
        } catch {
            let path = error.field.path
            let member = ([fields.name(path[0])] + path.dropFirst()).joined(separator: ".")
            throw JobRequestError("\(member): \(error.detail)", unprocessable: true)
        }
    }

    /// `HH:MM` or `HH:MM:SS` (the next time the local clock shows it) or an ISO 8601 timestamp.
    private static func until(_ text: String, field: String, now: Date) throws(JobRequestError) -> Int64 {
        if let date = Self.timestamp(text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }),
              let hour = parts[0], let minute = parts[1], (0..<24).contains(hour), (0..<60).contains(minute),
              (0..<60).contains(parts.count == 3 ? parts[2]! : 0)
        else {
            throw JobRequestError("\(field): '\(text)' is not a time; give HH:MM (the next time the clock shows it) or an ISO 8601 timestamp")
        }
        let calendar = Calendar.current
        let components = DateComponents(hour: hour, minute: minute, second: parts.count == 3 ? parts[2]! : 0)
        guard let next = calendar.nextDate(after: now, matching: components, matchingPolicy: .nextTime) else {
            throw JobRequestError("\(field): '\(text)' never comes on this system's calendar", unprocessable: true)
        }
        return Int64((next.timeIntervalSince1970 * 1000).rounded())
    }

    /// The instant an ISO 8601 timestamp names, with or without fractional seconds.
    static func timestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// The plan in the shape requests use, so that a client can send back what it read.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "intervalMs": .integer(intervalMs),
            "exposure": exposure.json,
            "overrun": .string(overrun.rawValue),
            "minimumGapMs": .integer(minimumGapMs),
            "hook": .optional(hook),
        ]
        members["hookTimeoutMs"] = hookTimeoutMs.map(JSONValue.integer)
        switch stop {
        case .frames(let count): members["frames"] = .int(count)
        case .duration(let milliseconds): members["durationMs"] = .integer(milliseconds)
        case .until(let unix): members["until"] = .string(JSONValue.isoTimestamp(unix))
        case .never: members["forever"] = .bool(true)
        }
        return .object(members)
    }
}

extension ExposurePlan {
    /// `{"kind": "camera"}`, `{"kind": "bulb", "ms": 2000}`, `{"kind": "bracket", "count": 3,
    /// "stepThirds": 3}` or `{"kind": "video", "clipMs": 5000}`.
    init(json: JSONValue, at path: String, intervalMs: Int64) throws(JobRequestError) {
        guard case .object(let members) = json, let kind = members["kind"] else {
            throw JobRequestError("\(path): expected an object with a kind: camera, bulb, bracket, video or ramp")
        }
        guard let name = kind.stringValue else { throw JobRequestError("\(path).kind: expected a string") }
        switch name {
        case "camera":
            _ = try RequestFields(json, at: path, allowed: ["kind"])
            self = .camera
        case "bulb":
            let fields = try RequestFields(json, at: path, allowed: ["kind", "ms"])
            self = .bulb(milliseconds: try fields.required("ms", fields.milliseconds, "how long the shutter stays open"))
        case "bracket":
            let fields = try RequestFields(json, at: path, allowed: ["kind", "count", "stepThirds"])
            self = .bracket(count: try fields.required("count", fields.count, "an odd number of pictures, 3 or more"),
                            stepThirds: try fields.required("stepThirds", fields.count, "the step in thirds of a stop"))
        case "video":
            let fields = try RequestFields(json, at: path, allowed: ["kind", "clipMs"])
            self = .video(milliseconds: try fields.required("clipMs", fields.milliseconds, "how long each clip lasts"))
        case "ramp":
            let fields = try RequestFields(json, at: path, allowed: ["kind", "minISO", "maxISO", "apertures", "gapMs", "bulbFromMs",
                                                              "nightIntervalMs", "program"])
            var ramp = RampPlan()
            if let iso = try fields.count("minISO") { ramp.minISO = UInt32(clamping: iso) }
            if let iso = try fields.count("maxISO") { ramp.maxISO = UInt32(clamping: iso) }
            if let apertures = try fields.strings("apertures") { ramp.apertures = apertures }
            if let gap = try fields.milliseconds("gapMs") { ramp.gapMs = gap }
            if members["bulbFromMs"] == .null { ramp.bulbFromMs = nil } else if let from = try fields.milliseconds("bulbFromMs") { ramp.bulbFromMs = from }
            ramp.nightIntervalMs = try fields.milliseconds("nightIntervalMs")
            if let program = fields["program"] {
                do {
                    ramp.program = try RampProgram(json: program.data, intervalMs: intervalMs)
                } catch {
                    // The program's own rules (keyframes in time order, a fixed keyframe's exposure).
                    throw JobRequestError("\(fields.name("program")): \(error)", unprocessable: true)
                }
            }
            self = .ramp(plan: ramp)
        default:
            throw JobRequestError("\(path).kind: '\(name)' is not an exposure; choose camera, bulb, bracket, video or ramp")
        }
    }

    var json: JSONValue {
        switch self {
        case .camera: ["kind": "camera"]
        case .bulb(let milliseconds): ["kind": "bulb", "ms": .integer(milliseconds)]
        case .bracket(let count, let stepThirds): ["kind": "bracket", "count": .int(count), "stepThirds": .int(stepThirds)]
        case .video(let milliseconds): ["kind": "video", "clipMs": .integer(milliseconds)]
        case .ramp(let ramp):
            [
                "kind": "ramp", "minISO": .integer(Int64(ramp.minISO)), "maxISO": .integer(Int64(ramp.maxISO)),
                "apertures": .array(ramp.apertures.map(JSONValue.string)), "gapMs": .integer(ramp.gapMs),
                "bulbFromMs": ramp.bulbFromMs.map(JSONValue.integer) ?? .null,
                "nightIntervalMs": ramp.nightIntervalMs.map(JSONValue.integer) ?? .null,
                "program": ramp.program?.json ?? .null,
            ]
        }
    }
}

extension JSONValue {
    /// Unix milliseconds as an ISO 8601 timestamp in UTC, with milliseconds.
    package static func isoTimestamp(_ unixMilliseconds: Int64) -> String {
        LocalTime.timestamp(UInt64(max(unixMilliseconds, 0)))
    }
}

