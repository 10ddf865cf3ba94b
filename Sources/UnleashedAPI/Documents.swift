public import CameraKit
import Foundation
public import Intervalometer
public import JSON
import UnleashedKit

// The documents of the control API, version 1: what each request takes and each answer holds.
// They are written by hand, in the style of the camera values' JSON (CameraJSON.swift), because
// the server's messages name the exact field a client got wrong; docs/api/openapi.yaml
// describes the same shapes, and UnleashedAPITests checks that it does.

/// A value with a JSON form: written by ``json``, read back by ``init(json:)``, the failure
/// naming where the document went wrong. Every endpoint's body and answer is one.
public protocol JSONForm: Sendable {
    var json: JSONValue { get }
    init(json: JSONValue) throws(JSONShapeError)
    /// Reads the document as a request's body, from a client: a member it does not name is
    /// refused, so that a misspelt one is not silently ignored.
    init(requestBody: JSONValue) throws(JSONShapeError)
}

extension JSONForm {
    /// A document whose ``init(json:)`` is already strict reads a body with it.
    public init(requestBody: JSONValue) throws(JSONShapeError) {
        try self.init(json: requestBody)
    }
}

/// A document of the API, Codable through its JSON form, so that it reads and writes the same
/// bytes through a `JSONEncoder` as through the API.
public protocol APIDocument: JSONForm, Codable {}

extension APIDocument {
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// A document whose JSON form is its synthesized `Codable` form: the way a document is written
/// from now on. A client reads it leniently (a newer daemon may add members); the daemon reads a
/// body strictly (``StrictJSONDecoder``), refusing a member it does not name.
public protocol CodableDocument: JSONForm, Codable {}

extension CodableDocument {
    public var json: JSONValue { JSONValue(encoding: self) }

    public init(json: JSONValue) throws(JSONShapeError) {
        self = try StrictJSONDecoder(refusesUnknownMembers: false).decode(Self.self, from: json)
    }

    public init(requestBody: JSONValue) throws(JSONShapeError) {
        self = try StrictJSONDecoder().decode(Self.self, from: requestBody)
    }
}

/// A document sent as one Server-Sent Event: its name and its data.
public protocol ServerSentDocument: JSONForm {
    /// The event's `event:` name.
    var eventName: String { get }
    /// The event's `data:`, one JSON line.
    var data: JSONValue { get }
    /// Reads one event; the failure names the field.
    init(eventName: String, data: JSONValue) throws(JSONShapeError)
}

extension ServerSentDocument {
    /// `{"event": NAME, "data": DATA}`: the event as one JSON value, unless a document has a
    /// form of its own.
    public var json: JSONValue { ["event": .string(eventName), "data": data] }

    /// Reads what ``json`` writes.
    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "event")
        try self.init(eventName: try cursor.member("event").string(), data: try cursor.member("data").value)
    }
}

extension CameraIdentity: JSONForm {}
extension CameraStatus: JSONForm {}
extension SettingValue: JSONForm {}
extension SettingDescriptor: JSONForm {}
extension Shot: JSONForm {}
extension BulbExposure: JSONForm {}
extension FocusResult: JSONForm {}
extension WallTime: JSONForm {}
extension GeoPosition: JSONForm {}

/// No document: a request without a body, or an answer without one (204).
public struct NoDocument: APIDocument, Equatable {
    public init() {}
    public var json: JSONValue { .null }
    public init(json: JSONValue) throws(JSONShapeError) {}
}

// MARK: - The daemon

/// ``API/daemonVersion``: which daemon answers, for a client that checks before it relies on a
/// route (``API/status`` asks every camera, which takes as long as the slowest).
public struct DaemonVersion: CodableDocument, Equatable {
    /// The daemon's version, as `unleashed --version` prints it.
    public var version: String
    /// The API's version: 1 for the routes under `/v1`.
    public var api: Int

    public init(version: String, api: Int = 1) {
        self.version = version
        self.api = api
    }
}

/// ``API/status``: the daemon's version, how long it has run and each camera's status.
public struct DaemonStatus: APIDocument, Equatable {
    /// One camera the daemon holds; a camera that cannot answer has an `error` instead of a status.
    public struct Camera: Equatable, Sendable {
        public var name: String
        public var source: String
        public var status: CameraStatus?
        public var error: String?

        public init(name: String, source: String, status: CameraStatus?, error: String?) {
            self.name = name
            self.source = source
            self.status = status
            self.error = error
        }
    }

    public var version: String
    public var uptimeSeconds: Double
    public var cameras: [Camera]

    public init(version: String, uptimeSeconds: Double, cameras: [Camera]) {
        self.version = version
        self.uptimeSeconds = uptimeSeconds
        self.cameras = cameras
    }

    public var json: JSONValue {
        [
            "version": .string(version), "uptimeSeconds": .number(uptimeSeconds),
            "cameras": .array(cameras.map { camera in
                ["name": .string(camera.name), "source": .string(camera.source),
                 "status": camera.status?.json ?? .null, "error": .optional(camera.error)]
            }),
        ]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "status")
        version = try cursor.member("version").string()
        uptimeSeconds = try cursor.member("uptimeSeconds").double()
        cameras = try cursor.member("cameras").array().map { entry throws(JSONShapeError) in
            Camera(name: try entry.member("name").string(), source: try entry.member("source").string(),
                   status: try entry.optional("status").map { cursor throws(JSONShapeError) in try CameraStatus(json: cursor.value) },
                   error: try entry.optional("error")?.string())
        }
    }
}

/// ``API/groups``: the configured `[[groups]]`.
public struct GroupList: APIDocument, Equatable {
    /// Cameras fired together, under a name (`--group NAME`).
    public struct Group: Equatable, Sendable {
        /// Unique among the groups.
        public var name: String
        /// Names of configured modules, in order; at least one, each once.
        public var cameras: [String]

        public init(name: String, cameras: [String]) {
            self.name = name
            self.cameras = cameras
        }
    }

    public var groups: [Group]

    public init(groups: [Group]) { self.groups = groups }

    public var json: JSONValue {
        ["groups": .array(groups.map { ["name": .string($0.name), "cameras": .array($0.cameras.map(JSONValue.string))] })]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        groups = try JSONCursor(json, path: "groups").member("groups").array().map { entry throws(JSONShapeError) in
            Group(name: try entry.member("name").string(),
                  cameras: try entry.member("cameras").array().map { name throws(JSONShapeError) in try name.string() })
        }
    }
}

// MARK: - Cameras

/// ``API/cameras``: the cameras the daemon holds, by name.
public struct CameraList: APIDocument, Equatable {
    public struct Entry: Equatable, Sendable {
        public var name: String
        public var source: String
        public var identity: CameraIdentity

        public init(name: String, source: String, identity: CameraIdentity) {
            self.name = name
            self.source = source
            self.identity = identity
        }
    }

    public var cameras: [Entry]

    public init(cameras: [Entry]) { self.cameras = cameras }

    public var json: JSONValue {
        ["cameras": .array(cameras.map { ["name": .string($0.name), "source": .string($0.source), "identity": $0.identity.json] })]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        cameras = try JSONCursor(json, path: "cameras").member("cameras").array().map { entry throws(JSONShapeError) in
            Entry(name: try entry.member("name").string(), source: try entry.member("source").string(),
                  identity: try CameraIdentity(json: try entry.member("identity").value))
        }
    }
}

/// ``API/camera``: one camera, its identity and its status now.
public struct CameraDocument: APIDocument, Equatable {
    public var name: String
    public var source: String
    public var identity: CameraIdentity
    public var status: CameraStatus

    public init(name: String, source: String, identity: CameraIdentity, status: CameraStatus) {
        self.name = name
        self.source = source
        self.identity = identity
        self.status = status
    }

    public var json: JSONValue {
        ["name": .string(name), "source": .string(source), "identity": identity.json, "status": status.json]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "camera")
        name = try cursor.member("name").string()
        source = try cursor.member("source").string()
        identity = try CameraIdentity(json: try cursor.member("identity").value)
        status = try CameraStatus(json: try cursor.member("status").value)
    }
}

/// ``API/connect``'s body: `{"module": "AA:BB:CC:DD:EE:FF"}` or a configured module's name.
public struct ConnectRequest: CodableDocument, Equatable {
    public var module: String

    public init(module: String) { self.module = module }
}

/// What ``API/connect`` and ``API/disconnect`` answer: the camera, whether it is now held and,
/// once connected, its identity and status (null when it could not be read).
public struct ConnectedCamera: APIDocument, Equatable {
    public var name: String
    public var source: String
    public var connected: Bool
    public var identity: CameraIdentity?
    public var status: CameraStatus?

    public init(name: String, source: String, connected: Bool, identity: CameraIdentity? = nil, status: CameraStatus? = nil) {
        self.name = name
        self.source = source
        self.connected = connected
        self.identity = identity
        self.status = status
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["name": .string(name), "source": .string(source), "connected": .bool(connected)]
        if let identity {
            members["identity"] = identity.json
            members["status"] = status?.json ?? .null
        }
        return .object(members)
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "camera")
        name = try cursor.member("name").string()
        source = try cursor.member("source").string()
        connected = try cursor.member("connected").bool()
        identity = try cursor.optional("identity").map { value throws(JSONShapeError) in try CameraIdentity(json: value.value) }
        status = try cursor.optional("status").map { value throws(JSONShapeError) in try CameraStatus(json: value.value) }
    }
}

/// ``API/settings``: every setting the camera offers, with its value and choices.
public struct SettingList: APIDocument, Equatable {
    public var settings: [SettingDescriptor]

    public init(settings: [SettingDescriptor]) { self.settings = settings }

    public var json: JSONValue { ["settings": .array(settings.map(\.json))] }

    public init(json: JSONValue) throws(JSONShapeError) {
        settings = try JSONCursor(json, path: "body").member("settings").array().map { entry throws(JSONShapeError) in
            try SettingDescriptor(json: entry.value)
        }
    }
}

/// ``API/setSetting``'s body: the value as a person writes it (`"1/125"`), or its wire number
/// (`raw`), which names it exactly; `raw` wins when both are there.
public struct SettingChange: CodableDocument, Equatable {
    public var value: String?
    public var raw: UInt32?

    public init(value: String? = nil, raw: UInt32? = nil) {
        self.value = value
        self.raw = raw
    }

    /// The change to `value`, by its text and its wire number.
    public init(_ value: SettingValue) {
        self.init(value: value.text, raw: value.rawValue)
    }

    private enum CodingKeys: String, CodingKey {
        case value, raw
    }

    /// Either member may be left out, not given as null: the schema allows neither null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for key in [CodingKeys.value, .raw] where container.contains(key) {
            if try container.decodeNil(forKey: key) {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "cannot be null; leave it out")
            }
        }
        value = try container.decodeIfPresent(String.self, forKey: .value)
        raw = try container.decodeIfPresent(UInt32.self, forKey: .raw)
    }
}

/// ``API/bulb``'s body: how long the shutter stays open.
public struct BulbRequest: CodableDocument, Equatable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    private enum CodingKeys: String, CodingKey {
        case milliseconds = "ms"
    }
}

/// ``API/focus``'s body: whether to hold focus after it is found.
public struct FocusRequest: CodableDocument, Equatable {
    public var hold: Bool

    public init(hold: Bool = false) { self.hold = hold }

    /// `hold` may be left out: focus is then not held.
    public init(from decoder: any Decoder) throws {
        hold = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Bool.self, forKey: .hold) ?? false
    }
}

/// ``API/stopVideo``'s answer: how long the clip ran.
public struct VideoClipLength: APIDocument, Equatable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public var json: JSONValue { ["ms": .integer(milliseconds)] }

    public init(json: JSONValue) throws(JSONShapeError) {
        milliseconds = try JSONCursor(json, path: "video").member("ms").int64()
    }
}

extension WallTime {
    /// The latest instant a request may name: the module's clock fields hold 53 bits (PROTOCOL.md).
    public static let latestUnixMilliseconds: UInt64 = (1 << 53) - 1
}

/// One camera event of ``API/events`` or ``API/cameraEvents``, with the camera's name.
public struct CameraEventMessage: APIDocument, ServerSentDocument, Equatable {
    public var camera: String
    public var event: CameraEvent

    public init(camera: String, event: CameraEvent) {
        self.camera = camera
        self.event = event
    }

    public var eventName: String { event.jsonName }

    /// The event's fields and the camera's name: a Server-Sent Event's data.
    public var data: JSONValue {
        var fields = event.jsonFields
        fields["camera"] = .string(camera)
        return .object(fields)
    }

    public var json: JSONValue { data.merging(["event": .string(eventName)]) }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(eventName: try JSONCursor(json, path: "event").member("event").string(), data: json)
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        camera = try JSONCursor(data, path: eventName).member("camera").string()
        event = try CameraEvent(name: eventName, fields: data)
    }
}

// MARK: - Jobs

extension JobSubmission: JSONForm {
    public init(json: JSONValue) throws(JSONShapeError) {
        self = try readBody(json) { body throws(JobRequestError) in try JobSubmission(body: body) }
    }
}

extension StopWhen: JSONForm {
    public init(json: JSONValue) throws(JSONShapeError) {
        self = try readBody(json) { body throws(JobRequestError) in try StopWhen(body: body) }
    }
}

/// A request body read by the server's own reader, whose refusal names the field.
private func readBody<T>(_ json: JSONValue, _ read: (Data) throws(JobRequestError) -> T) throws(JSONShapeError) -> T {
    do throws(JobRequestError) {
        return try read(json == .null ? Data() : json.data)
    } catch {
        throw JSONShapeError(path: "body", problem: error.description)
    }
}

/// A job as the API describes it: what it runs, on which camera, where it stands.
public struct JobDocument: APIDocument, Hashable {
    /// The journal's run id.
    public var id: Int64
    /// Its camera, or a rig's cameras joined by commas (as the journal names them).
    public var camera: String
    /// Its cameras, one for a job of one camera.
    public var cameras: [String]
    public var kind: JobKind
    public var state: JobState
    public var plan: RunPlan
    /// Wall-clock time of slot 1 (Unix milliseconds); nil until the job has placed it.
    public var t0UnixMs: Int64?
    /// Why the job ended; nil while it runs.
    public var reason: String?
    public var summary: RunSummary
    public var lastFrame: FrameRecord?

    public init(id: Int64, camera: String, cameras: [String], kind: JobKind, state: JobState, plan: RunPlan, t0UnixMs: Int64?,
                reason: String?, summary: RunSummary, lastFrame: FrameRecord?) {
        self.id = id
        self.camera = camera
        self.cameras = cameras
        self.kind = kind
        self.state = state
        self.plan = plan
        self.t0UnixMs = t0UnixMs
        self.reason = reason
        self.summary = summary
        self.lastFrame = lastFrame
    }

    public var json: JSONValue {
        [
            "id": .integer(id), "camera": .string(camera), "cameras": .array(cameras.map(JSONValue.string)),
            "kind": .string(kind.rawValue), "state": .string(state.rawValue), "live": .bool(state.isLive),
            "plan": plan.json, "t0": t0UnixMs.map { .string(JSONValue.isoTimestamp($0)) } ?? .null,
            "reason": .optional(reason), "summary": JSONValue(encoding: summary),
            "lastFrame": lastFrame.map { JSONValue(encoding: $0) } ?? .null,
        ]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "job")
        id = try cursor.member("id").int64()
        camera = try cursor.member("camera").string()
        // A daemon before the list gave the joined names only.
        cameras = try cursor.optional("cameras")?.array().map { name throws(JSONShapeError) in try name.string() }
            ?? camera.split(separator: ",").map(String.init)
        kind = try cursor.member("kind").decoded(JobKind.self)
        state = try cursor.member("state").decoded(JobState.self)
        let plan = try cursor.member("plan")
        let document = try plan.decoded(PlanDocument.self)
        do throws(JobRequestError) {
            self.plan = try RunPlan(document: document, at: plan.path, now: Date())
        } catch {
            throw JSONShapeError(path: "", problem: error.description)
        }
        t0UnixMs = try cursor.optional("t0").map { t0 throws(JSONShapeError) in
            guard let date = RunPlan.timestamp(try t0.string()) else { throw t0.fail("expected an ISO 8601 timestamp") }
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        reason = try cursor.optional("reason")?.string()
        summary = try cursor.member("summary").decoded(RunSummary.self)
        lastFrame = try cursor.optional("lastFrame")?.decoded(FrameRecord.self)
    }
}

/// ``API/jobs``: the jobs running and the last ones that ran.
public struct JobList: APIDocument, Equatable {
    public var jobs: [JobDocument]

    public init(jobs: [JobDocument]) { self.jobs = jobs }

    public var json: JSONValue { ["jobs": .array(jobs.map(\.json))] }

    public init(json: JSONValue) throws(JSONShapeError) {
        jobs = try JSONCursor(json, path: "body").member("jobs").array().map { entry throws(JSONShapeError) in
            try JobDocument(json: entry.value)
        }
    }
}

/// One event of ``API/jobEvents``.
public enum JobEvent: APIDocument, ServerSentDocument, Equatable {
    /// A frame as journalled, with the job's id.
    case frame(FrameRecord, job: Int64)
    /// The job's end: the run as recorded, its state, why it ended and its summary.
    case end(run: RunRecord, state: JobState, reason: String, summary: RunSummary)
    /// The stream ended before the job did (the client fell too far behind): follow again.
    case streamError(message: String)

    public var eventName: String {
        switch self {
        case .frame: "frame"
        case .end: "end"
        case .streamError: "error"
        }
    }

    /// The event's data.
    public var data: JSONValue {
        switch self {
        case .frame(let frame, let job): JSONValue(encoding: frame).merging(["run": .integer(job)])
        case .end(let run, let state, let reason, let summary):
            ["run": JSONValue(encoding: run), "state": .string(state.rawValue), "reason": .string(reason), "summary": JSONValue(encoding: summary)]
        case .streamError(let message): ["message": .string(message)]
        }
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(data, path: eventName)
        switch eventName {
        case "frame": self = .frame(try cursor.decoded(FrameRecord.self), job: try cursor.member("run").int64())
        case "end":
            self = .end(run: try cursor.member("run").decoded(RunRecord.self), state: try cursor.member("state").decoded(JobState.self),
                        reason: try cursor.member("reason").string(), summary: try cursor.member("summary").decoded(RunSummary.self))
        case "error": self = .streamError(message: try cursor.member("message").string())
        default: throw JSONShapeError(path: eventName, problem: "'\(eventName)' is not a job event")
        }
    }
}

// MARK: - Errors

/// The API's error answer: `{"error": {"code", "message", "camera"?}}`. `code` is the HTTP
/// status for the daemon's own refusals and a camera error's stable code (`valueNotOffered`)
/// for a camera's, which also carries the camera error itself.
public struct ErrorDocument: APIDocument, Equatable {
    public var code: String
    public var message: String
    public var camera: CameraError?

    public init(code: String, message: String, camera: CameraError? = nil) {
        self.code = code
        self.message = message
        self.camera = camera
    }

    /// The daemon's own refusal with HTTP status `status`.
    public init(status: Int, message: String) {
        self.init(code: String(status), message: message)
    }

    /// A camera's error.
    public init(_ error: CameraError) {
        self.init(code: error.code, message: error.description, camera: error)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["message": .string(message)]
        members["code"] = camera == nil ? Int64(code).map(JSONValue.integer) ?? .string(code) : .string(code)
        members["camera"] = camera?.json
        return ["error": .object(members)]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let error = try JSONCursor(json, path: "body").member("error")
        let code = try error.member("code")
        if let text = code.value.stringValue { self.code = text } else { self.code = String(try code.int64()) }
        message = try error.member("message").string()
        camera = try error.optional("camera").map { value throws(JSONShapeError) in try CameraError(json: value.value) }
    }
}

extension JSONCursor {
    /// A Codable value (the journal's records) from its JSONEncoder form.
    func decoded<T: Decodable>(_: T.Type) throws(JSONShapeError) -> T {
        // What a client reads from a daemon, which may be newer: members it adds are let be.
        try StrictJSONDecoder(root: path, refusesUnknownMembers: false).decode(T.self, from: value)
    }
}
