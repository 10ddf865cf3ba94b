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

    /// The body of `POST /v1/jobs`, member for member.
    struct Body: Codable {
        var camera: String?
        var cameras: [String]?
        var plan: PlanDocument?
        var startDelayMs: Int64?
    }

    /// The request body as a client sends it.
    public var json: JSONValue {
        JSONValue(encoding: Body(camera: camera, cameras: cameras, plan: plan.document, startDelayMs: startDelay.wholeMilliseconds))
    }

    /// Reads a request body: a JSON object with `plan`, and optionally `camera` or `cameras` and
    /// `startDelayMs`. Members this version does not know are refused, so that a misspelt one
    /// is not silently ignored.
    public init(body: Data, now: Date = Date()) throws(JobRequestError) {
        let members = try JobRequestError.decoding(Body.self, from: body,
                                                   example: #"send an object like {"plan": {"intervalMs": 5000, "frames": 50}}"#)
        camera = members.camera
        cameras = members.cameras
        if let cameras {
            guard camera == nil else { throw JobRequestError("cameras: give either camera (one) or cameras (a rig), not both") }
            guard !cameras.isEmpty else { throw JobRequestError("cameras: name at least one camera") }
            if let repeated = cameras.first(where: { name in cameras.count { $0 == name } > 1 }) {
                throw JobRequestError("cameras: '\(repeated)' is named twice")
            }
        }
        guard let plan = members.plan else {
            throw JobRequestError("plan: missing; say what to shoot, e.g. {\"intervalMs\": 5000, \"frames\": 50}")
        }
        self.plan = try RunPlan(document: plan, at: "plan", now: now)
        if cameras != nil, case .bracket = self.plan.exposure {
            throw JobRequestError("plan.exposure: a bracket steps one camera's own shutter speeds; run a bracket on each camera of a rig by itself",
                                  unprocessable: true)
        }
        let delay = members.startDelayMs ?? 0
        guard delay >= 0 else { throw JobRequestError("startDelayMs: cannot be negative") }
        startDelay = .milliseconds(delay)
    }
}

/// ``API/stopJob``'s optional body: `{"when": "now" | "afterFrame"}`.
public enum StopWhen: String, Sendable, CaseIterable {
    case now
    case afterFrame

    private struct Body: Codable {
        var when: String?
    }

    /// The request body as a client sends it.
    public var json: JSONValue { JSONValue(encoding: Body(when: rawValue)) }

    public init(body: Data) throws(JobRequestError) {
        guard !body.allSatisfy({ [0x20, 0x0A, 0x0D, 0x09].contains($0) }) else {
            self = .now
            return
        }
        let members = try JobRequestError.decoding(Body.self, from: body, example: #"send {"when": "now"} or {"when": "afterFrame"}, or nothing"#)
        guard let text = members.when else {
            self = .now
            return
        }
        guard let when = StopWhen(rawValue: text) else {
            throw JobRequestError("when: '\(text)' is not a choice; choose now or afterFrame")
        }
        self = when
    }
}

extension JobRequestError {
    /// A request body read strictly (``StrictJSONDecoder``): not JSON, or a member missing,
    /// unknown or of the wrong type, is a malformed request whose message names the member.
    static func decoding<T: Decodable>(_ type: T.Type, from body: Data, example: String) throws(JobRequestError) -> T {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: body)
        } catch {
            throw JobRequestError("the body is not JSON: \(example)")
        }
        do throws(JSONShapeError) {
            return try StrictJSONDecoder().decode(T.self, from: document)
        } catch {
            throw JobRequestError(error.path.isEmpty ? "body: \(error.problem)" : error.description)
        }
    }
}

/// A plan in the API's shape, member for member: what ``API/startJob`` takes as `plan` and a
/// job gives back, so that a client can send back what it read. ``RunPlan/init(document:at:now:)``
/// holds it to the rules of plans.
///
/// `{"intervalMs": 5000, "frames": 50 | "durationMs": 60000 | "until": "06:30" | "forever": true,
///   "exposure": {"kind": "camera"}, "overrun": "skip", "minimumGapMs": 0, "hook": "/path", "hookTimeoutMs": 30000}`
public struct PlanDocument: Codable, Hashable, Sendable {
    public var intervalMs: Int64?
    public var frames: Int?
    public var durationMs: Int64?
    /// `HH:MM`, `HH:MM:SS` or an ISO 8601 timestamp; answers give the timestamp.
    public var until: String?
    public var forever: Bool?
    public var exposure: ExposureDocument?
    public var overrun: String?
    public var minimumGapMs: Int64?
    public var hook: String?
    public var hookTimeoutMs: Int64?

    private enum CodingKeys: String, CodingKey {
        case intervalMs, frames, durationMs, until, forever, exposure, overrun, minimumGapMs, hook, hookTimeoutMs
    }

    public init(intervalMs: Int64?, frames: Int? = nil, durationMs: Int64? = nil, until: String? = nil, forever: Bool? = nil,
                exposure: ExposureDocument? = nil, overrun: String? = nil, minimumGapMs: Int64? = nil, hook: String? = nil,
                hookTimeoutMs: Int64? = nil) {
        self.intervalMs = intervalMs
        self.frames = frames
        self.durationMs = durationMs
        self.until = until
        self.forever = forever
        self.exposure = exposure
        self.overrun = overrun
        self.minimumGapMs = minimumGapMs
        self.hook = hook
        self.hookTimeoutMs = hookTimeoutMs
    }

    /// Writes `hook` as null when there is none, as answers always have.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(intervalMs, forKey: .intervalMs)
        try container.encodeIfPresent(frames, forKey: .frames)
        try container.encodeIfPresent(durationMs, forKey: .durationMs)
        try container.encodeIfPresent(until, forKey: .until)
        try container.encodeIfPresent(forever, forKey: .forever)
        try container.encodeIfPresent(exposure, forKey: .exposure)
        try container.encodeIfPresent(overrun, forKey: .overrun)
        try container.encodeIfPresent(minimumGapMs, forKey: .minimumGapMs)
        try container.encode(hook, forKey: .hook)
        try container.encodeIfPresent(hookTimeoutMs, forKey: .hookTimeoutMs)
    }
}

/// What each slot of a plan takes, in the API's shape: `{"kind": "camera"}`, `{"kind": "bulb",
/// "ms": 2000}`, `{"kind": "bracket", "count": 3, "stepThirds": 3}`, `{"kind": "video", "clipMs":
/// 5000}` or `{"kind": "ramp", …}`. Each kind reads only its own members: another's is refused.
public enum ExposureDocument: Codable, Hashable, Sendable {
    case camera
    case bulb(ms: Int64)
    case bracket(count: Int, stepThirds: Int)
    case video(clipMs: Int64)
    case ramp(Ramp)

    /// A ramp's members; those left out take ``RampPlan``'s defaults. `bulbFromMs` null is
    /// never bulb, as against left out (the default).
    public struct Ramp: Hashable, Sendable {
        public var minISO: Int?
        public var maxISO: Int?
        public var apertures: [String]?
        public var gapMs: Int64?
        public var bulbFromMs: Int64??
        public var nightIntervalMs: Int64?
        /// The keyframes, read by ``RampProgram`` for the run's interval.
        public var program: JSONValue?
    }

    private enum CodingKeys: String, CodingKey {
        case kind, ms, count, stepThirds, clipMs, minISO, maxISO, apertures, gapMs, bulbFromMs, nightIntervalMs, program
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "camera":
            self = .camera
        case "bulb":
            self = .bulb(ms: try container.decode(Int64.self, forKey: .ms))
        case "bracket":
            self = .bracket(count: try container.decode(Int.self, forKey: .count), stepThirds: try container.decode(Int.self, forKey: .stepThirds))
        case "video":
            self = .video(clipMs: try container.decode(Int64.self, forKey: .clipMs))
        case "ramp":
            var ramp = Ramp()
            ramp.minISO = try container.decodeIfPresent(Int.self, forKey: .minISO)
            ramp.maxISO = try container.decodeIfPresent(Int.self, forKey: .maxISO)
            ramp.apertures = try container.decodeIfPresent([String].self, forKey: .apertures)
            ramp.gapMs = try container.decodeIfPresent(Int64.self, forKey: .gapMs)
            if container.contains(.bulbFromMs) {
                ramp.bulbFromMs = .some(try container.decodeNil(forKey: .bulbFromMs) ? nil : try container.decode(Int64.self, forKey: .bulbFromMs))
            }
            ramp.nightIntervalMs = try container.decodeIfPresent(Int64.self, forKey: .nightIntervalMs)
            ramp.program = try container.decodeIfPresent(JSONValue.self, forKey: .program)
            self = .ramp(ramp)
        default:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container,
                                                   debugDescription: "'\(kind)' is not an exposure; choose camera, bulb, bracket, video or ramp")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .camera:
            try container.encode("camera", forKey: .kind)
        case .bulb(let ms):
            try container.encode("bulb", forKey: .kind)
            try container.encode(ms, forKey: .ms)
        case .bracket(let count, let stepThirds):
            try container.encode("bracket", forKey: .kind)
            try container.encode(count, forKey: .count)
            try container.encode(stepThirds, forKey: .stepThirds)
        case .video(let clipMs):
            try container.encode("video", forKey: .kind)
            try container.encode(clipMs, forKey: .clipMs)
        case .ramp(let ramp):
            // Answers give every member, null where there is none.
            try container.encode("ramp", forKey: .kind)
            try container.encode(ramp.minISO, forKey: .minISO)
            try container.encode(ramp.maxISO, forKey: .maxISO)
            try container.encode(ramp.apertures, forKey: .apertures)
            try container.encode(ramp.gapMs, forKey: .gapMs)
            try container.encode(ramp.bulbFromMs ?? nil, forKey: .bulbFromMs)
            try container.encode(ramp.nightIntervalMs, forKey: .nightIntervalMs)
            try container.encode(ramp.program, forKey: .program)
        }
    }
}

extension RunPlan {
    /// The plan as the API writes it in a job, and as ``API/startJob`` takes it, so that a
    /// client submits exactly what it would run itself.
    public var apiJSON: JSONValue { json }

    /// The plan in the API's shape.
    public var document: PlanDocument {
        var document = PlanDocument(intervalMs: intervalMs, exposure: ExposureDocument(exposure), overrun: overrun.rawValue,
                                    minimumGapMs: minimumGapMs, hook: hook, hookTimeoutMs: hookTimeoutMs)
        switch stop {
        case .frames(let count): document.frames = count
        case .duration(let milliseconds): document.durationMs = milliseconds
        case .until(let unix): document.until = JSONValue.isoTimestamp(unix)
        case .never: document.forever = true
        }
        return document
    }

    /// The plan in the shape requests use, so that a client can send back what it read.
    var json: JSONValue { JSONValue(encoding: document) }

    /// Reads a plan in the API's shape (a job's `plan`); the error names the field.
    public init(apiJSON: JSONValue, now: Date = Date()) throws(JobRequestError) {
        let document: PlanDocument
        do throws(JSONShapeError) {
            document = try StrictJSONDecoder(root: "plan").decode(PlanDocument.self, from: apiJSON)
        } catch {
            throw JobRequestError(error.description)
        }
        try self.init(document: document, at: "plan", now: now)
    }

    /// Holds a plan in the API's shape to the rules of plans; `path` names it in messages
    /// (`plan`). What it leaves unsaid (when to stop, a time of day) is the client's mistake
    /// (``JobRequestError/isUnprocessable`` false); what it says that no plan may (numbers
    /// against each other, a hook the daemon cannot run) is a rule the schema cannot state.
    public init(document: PlanDocument, at path: String, now: Date) throws(JobRequestError) {
        func name(_ member: String) -> String { "\(path).\(member)" }
        guard let interval = document.intervalMs else {
            throw JobRequestError("\(name("intervalMs")): missing; the time from one slot's start to the next, e.g. 5000")
        }
        let stop: StopCondition
        switch (document.frames, document.durationMs, document.until, document.forever) {
        case (let frames?, nil, nil, nil): stop = .frames(frames)
        case (nil, let milliseconds?, nil, nil): stop = .duration(milliseconds: milliseconds)
        case (nil, nil, let text?, nil): stop = .until(unixMilliseconds: try Self.until(text, field: name("until"), now: now))
        case (nil, nil, nil, let forever?):
            guard forever else { throw JobRequestError("\(name("forever")): expected true (a run that ends only when stopped)") }
            stop = .never
        default:
            throw JobRequestError("\(path): say when to stop with exactly one of frames, durationMs, until (\"06:30\") or forever (true)")
        }
        var overrun = OverrunPolicy.skip
        if let text = document.overrun {
            guard let policy = OverrunPolicy(rawValue: text) else {
                throw JobRequestError("\(name("overrun")): '\(text)' is not a policy; choose skip, defer or burst")
            }
            overrun = policy
        }
        let exposure = try document.exposure.map { exposure throws(JobRequestError) in
            try ExposurePlan(document: exposure, at: name("exposure"), intervalMs: interval)
        } ?? .camera
        // The same rule as the CLI's --hook: a hook the daemon cannot run is refused now, not at init.
        if let hook = document.hook, let problem = HookRunner.problem(with: hook) {
            throw JobRequestError("\(name("hook")): \(problem)", unprocessable: true)
        }
        if document.hookTimeoutMs != nil, document.hook == nil {
            throw JobRequestError("\(name("hookTimeoutMs")): is the time limit of a hook; give \(name("hook")) too")
        }
        self.init(intervalMs: interval, stop: stop, exposure: exposure, overrun: overrun, minimumGapMs: document.minimumGapMs ?? 0,
                  hook: document.hook, hookTimeoutMs: document.hookTimeoutMs)
        try checkNumbers(at: path)
    }

    /// Refuses what the plan gets wrong by itself, whatever camera runs it: before the daemon
    /// looks for the camera, so that a client learns of its own mistakes first, even while the
    /// camera is busy with another job (422 before 409). The rules are the plan's own
    /// (``RunPlan/validate()``); the message names the member as the client sent it.
    private func checkNumbers(at path: String) throws(JobRequestError) {
        do {
            try validate()
        } catch {
            let member = (["\(path).\(error.field.path[0])"] + error.field.path.dropFirst()).joined(separator: ".")
            throw JobRequestError("\(member): \(error.detail)", unprocessable: true)
        }
    }

    /// An ISO 8601 timestamp, or a time of day (``TimeOfDay``): the next time the daemon's local
    /// clock shows it, as the CLI's `--until` reads it (``LocalTime/next(_:after:clock:)``).
    private static func until(_ text: String, field: String, now: Date) throws(JobRequestError) -> Int64 {
        if let date = Self.timestamp(text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        do throws(LocalTime.Failure) {
            return Int64((try LocalTime.next(text, after: now).instant.timeIntervalSince1970 * 1000).rounded())
        } catch {
            switch error {
            case .notATime:
                throw JobRequestError("\(field): '\(text)' is not a time; give HH:MM (the next time the clock shows it) or an ISO 8601 timestamp")
            case .skipped:
                throw JobRequestError("\(field): \(error.skippedReason(text) ?? text)", unprocessable: true)
            }
        }
    }

    /// The instant an ISO 8601 timestamp names, with or without fractional seconds.
    static func timestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

extension ExposureDocument {
    /// The exposure in the API's shape.
    init(_ exposure: ExposurePlan) {
        switch exposure {
        case .camera: self = .camera
        case .bulb(let milliseconds): self = .bulb(ms: milliseconds)
        case .bracket(let count, let stepThirds): self = .bracket(count: count, stepThirds: stepThirds)
        case .video(let milliseconds): self = .video(clipMs: milliseconds)
        case .ramp(let ramp):
            self = .ramp(Ramp(minISO: Int(ramp.minISO), maxISO: Int(ramp.maxISO), apertures: ramp.apertures, gapMs: ramp.gapMs,
                              bulbFromMs: .some(ramp.bulbFromMs), nightIntervalMs: ramp.nightIntervalMs, program: ramp.program?.json))
        }
    }
}

extension ExposurePlan {
    /// An exposure in the API's shape; a ramp's program is read for a run of slots `intervalMs` apart.
    init(document: ExposureDocument, at path: String, intervalMs: Int64) throws(JobRequestError) {
        switch document {
        case .camera: self = .camera
        case .bulb(let milliseconds): self = .bulb(milliseconds: milliseconds)
        case .bracket(let count, let stepThirds): self = .bracket(count: count, stepThirds: stepThirds)
        case .video(let milliseconds): self = .video(milliseconds: milliseconds)
        case .ramp(let members):
            var ramp = RampPlan()
            if let iso = members.minISO { ramp.minISO = UInt32(clamping: iso) }
            if let iso = members.maxISO { ramp.maxISO = UInt32(clamping: iso) }
            if let apertures = members.apertures { ramp.apertures = apertures }
            if let gap = members.gapMs { ramp.gapMs = gap }
            if let from = members.bulbFromMs { ramp.bulbFromMs = from }
            ramp.nightIntervalMs = members.nightIntervalMs
            if let program = members.program, program != .null {
                do {
                    ramp.program = try RampProgram(json: program.data, intervalMs: intervalMs)
                } catch {
                    // The program's own rules (keyframes in time order, a fixed keyframe's exposure).
                    throw JobRequestError("\(path).program: \(error)", unprocessable: true)
                }
            }
            self = .ramp(plan: ramp)
        }
    }
}

extension JSONValue {
    /// Unix milliseconds as an ISO 8601 timestamp in UTC, with milliseconds.
    package static func isoTimestamp(_ unixMilliseconds: Int64) -> String {
        LocalTime.timestamp(UInt64(max(unixMilliseconds, 0)))
    }
}

