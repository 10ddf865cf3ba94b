public import CameraKit
import Foundation
public import Intervalometer
public import JSON
public import UnleashedKit
import UnleashedProtocol

// The documents of the control API, version 1: what each request takes and each answer holds.
// Each is read through `Decodable` by ``StrictJSONDecoder``, whose failures name the member a
// sender got wrong; docs/api/openapi.yaml describes the same shapes, and UnleashedAPITests checks
// that it does.

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

/// A document of the API whose ``json`` is written by hand, where a synthesized form would
/// differ (members written as null, times as text, the camera values' own forms). It reads
/// through its `Decodable` conformance and encodes as ``json``, so that a `JSONEncoder` writes
/// the same bytes as the API.
public protocol APIDocument: JSONForm, Codable {}

extension APIDocument {
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
        try self.init(answer: json, root: "")
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
        let event = try SentEvent(answer: json, root: "event")
        try self.init(eventName: event.event, data: event.data)
    }
}

/// A Server-Sent Event as one JSON value.
private struct SentEvent: Decodable {
    var event: String
    var data: JSONValue
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
public struct NoDocument: JSONForm, Equatable {
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

/// The daemon's wall clock (``API/clock``, and `clock` in ``DaemonStatus``): whether a time
/// service keeps the host's clock synchronised, the time the daemon goes by, and the correction a
/// client's clock gave it, if one is in effect.
public struct HostClockState: CodableDocument, Equatable {
    /// A client's clock taken for the host's (``API/offerClock``).
    public struct Correction: Codable, Equatable, Sendable {
        /// True time less the host's wall clock: positive when the host's clock is behind.
        public var offsetMs: Int64
        /// When it was taken, on the corrected clock (Unix milliseconds).
        public var takenUnixMs: Int64
        /// Who gave it, in the daemon's words: `browser 'Pixel 7' (k3x9)`, `uid 1000 on the socket`.
        public var client: String
        /// The paired browser's id when a browser gave it (`unleashed web clients` lists them).
        public var webClient: String?

        public init(offsetMs: Int64, takenUnixMs: Int64, client: String, webClient: String?) {
            self.offsetMs = offsetMs
            self.takenUnixMs = takenUnixMs
            self.client = client
            self.webClient = webClient
        }

        private enum CodingKeys: String, CodingKey {
            case offsetMs, takenUnixMs, client, webClient
        }

        /// Writes `webClient` as null when no browser gave it.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(offsetMs, forKey: .offsetMs)
            try container.encode(takenUnixMs, forKey: .takenUnixMs)
            try container.encode(client, forKey: .client)
            try container.encode(webClient, forKey: .webClient)
        }
    }

    /// Whether a time service keeps the host's clock (the kernel's clock discipline).
    public var synchronised: Bool
    /// The daemon's wall clock now (Unix milliseconds): the host's, corrected when `correction` is set.
    public var nowUnixMs: Int64
    /// The correction in effect; null while the daemon goes by the host's own clock.
    public var correction: Correction?

    public init(synchronised: Bool, nowUnixMs: Int64, correction: Correction?) {
        self.synchronised = synchronised
        self.nowUnixMs = nowUnixMs
        self.correction = correction
    }

    private enum CodingKeys: String, CodingKey {
        case synchronised, nowUnixMs, correction
    }

    /// Writes `correction` as null when there is none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(synchronised, forKey: .synchronised)
        try container.encode(nowUnixMs, forKey: .nowUnixMs)
        try container.encode(correction, forKey: .correction)
    }
}

/// ``API/offerClock``'s body: a client's clock (the phone's `Date.now()`) as it sent the request.
public struct ClockReading: CodableDocument, Equatable {
    /// The client's wall clock, Unix milliseconds.
    public var unixMs: Int64

    /// The earliest reading taken, 2020-01-01T00:00:00Z: a clock that reads earlier is no more
    /// set than a host's that lost its time.
    public static let earliestUnixMs: Int64 = 1_577_836_800_000
    /// The latest reading taken, 2100-01-01T00:00:00Z.
    public static let latestUnixMs: Int64 = 4_102_444_800_000

    public init(unixMs: Int64) {
        self.unixMs = unixMs
    }

    /// Reads the body strictly; a reading outside 2020 to 2100 is refused, naming the member.
    public init(requestBody: JSONValue) throws(JSONShapeError) {
        let reading = try StrictJSONDecoder().decode(Self.self, from: requestBody)
        guard (Self.earliestUnixMs...Self.latestUnixMs).contains(reading.unixMs) else {
            throw JSONShapeError(path: "unixMs", problem: "must be Unix milliseconds from \(Self.earliestUnixMs) (2020) "
                + "to \(Self.latestUnixMs) (2100), as the browser's Date.now() gives them")
        }
        self = reading
    }
}

/// ``API/offerClock``'s answer: whether the daemon took the client's clock, why, and its clock after.
public struct ClockOffer: CodableDocument, Equatable {
    /// Whether the daemon now goes by the client's clock.
    public var taken: Bool
    /// `hostNotSynchronised` and `hostDiffers` (taken), or `hostAgrees` (kept out).
    public var reason: ClockCorrection.Verdict
    /// The same in words.
    public var message: String
    /// The client's reading less the host's wall clock when the daemon read the request.
    public var differenceMs: Int64
    /// The daemon's clock after the offer.
    public var clock: HostClockState

    public init(reason: ClockCorrection.Verdict, message: String, differenceMs: Int64, clock: HostClockState) {
        taken = reason.takes
        self.reason = reason
        self.message = message
        self.differenceMs = differenceMs
        self.clock = clock
    }
}

/// ``API/status``: the daemon's version, how long it has run and each camera's status.
public struct DaemonStatus: APIDocument, Equatable {
    /// One camera the daemon holds; a camera that cannot answer has an `error` instead of a status.
    public struct Camera: Decodable, Equatable, Sendable {
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

        private enum CodingKeys: String, CodingKey {
            case name, source, status, error
        }

        public init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            self.init(name: try members.decode(String.self, forKey: .name), source: try members.decode(String.self, forKey: .source),
                      status: try members.decodeIfPresent(CameraStatus.self, forKey: .status),
                      error: try members.decodeIfPresent(String.self, forKey: .error))
        }
    }

    public var version: String
    public var uptimeSeconds: Double
    public var cameras: [Camera]
    /// The daemon's wall clock; nil from a daemon older than the member.
    public var clock: HostClockState?

    public init(version: String, uptimeSeconds: Double, cameras: [Camera], clock: HostClockState? = nil) {
        self.version = version
        self.uptimeSeconds = uptimeSeconds
        self.cameras = cameras
        self.clock = clock
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "version": .string(version), "uptimeSeconds": .number(uptimeSeconds),
            "cameras": .array(cameras.map { camera in
                ["name": .string(camera.name), "source": .string(camera.source),
                 "status": camera.status?.json ?? .null, "error": .optional(camera.error)]
            }),
        ]
        members["clock"] = clock?.json
        return .object(members)
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "status")
    }
}

/// ``API/groups``: the configured `[[groups]]`.
public struct GroupList: CodableDocument, Equatable {
    /// Cameras fired together, under a name (`--group NAME`).
    public struct Group: Codable, Equatable, Sendable {
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
}

// MARK: - Cameras

/// ``API/cameras``: the cameras the daemon holds, by name.
public struct CameraList: APIDocument, Equatable {
    public struct Entry: Decodable, Equatable, Sendable {
        public var name: String
        public var source: String
        public var identity: CameraIdentity

        public init(name: String, source: String, identity: CameraIdentity) {
            self.name = name
            self.source = source
            self.identity = identity
        }

        private enum CodingKeys: String, CodingKey {
            case name, source, identity
        }

        public init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            self.init(name: try members.decode(String.self, forKey: .name), source: try members.decode(String.self, forKey: .source),
                      identity: try members.decode(CameraIdentity.self, forKey: .identity))
        }
    }

    public var cameras: [Entry]

    public init(cameras: [Entry]) { self.cameras = cameras }

    public var json: JSONValue {
        ["cameras": .array(cameras.map { ["name": .string($0.name), "source": .string($0.source), "identity": $0.identity.json] })]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "cameras")
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
        try self.init(answer: json, root: "camera")
    }

    private enum CodingKeys: String, CodingKey {
        case name, source, identity, status
    }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try members.decode(String.self, forKey: .name), source: try members.decode(String.self, forKey: .source),
                  identity: try members.decode(CameraIdentity.self, forKey: .identity),
                  status: try members.decode(CameraStatus.self, forKey: .status))
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
        try self.init(answer: json, root: "camera")
    }

    private enum CodingKeys: String, CodingKey {
        case name, source, connected, identity, status
    }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try members.decode(String.self, forKey: .name), source: try members.decode(String.self, forKey: .source),
                  connected: try members.decode(Bool.self, forKey: .connected),
                  identity: try members.decodeIfPresent(CameraIdentity.self, forKey: .identity),
                  status: try members.decodeIfPresent(CameraStatus.self, forKey: .status))
    }
}

/// ``API/settings``: every setting the camera offers, with its value and choices.
public struct SettingList: APIDocument, Equatable {
    public var settings: [SettingDescriptor]

    public init(settings: [SettingDescriptor]) { self.settings = settings }

    public var json: JSONValue { ["settings": .array(settings.map(\.json))] }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "body")
    }

    private enum CodingKeys: String, CodingKey {
        case settings
    }

    public init(from decoder: any Decoder) throws {
        settings = try decoder.container(keyedBy: CodingKeys.self).decode([SettingDescriptor].self, forKey: .settings)
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
        self.init(value: value.text, raw: value.wireValue)
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
public struct VideoClipLength: CodableDocument, Equatable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    private enum CodingKeys: String, CodingKey {
        case milliseconds = "ms"
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
        try self.init(answer: json, root: "event")
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        try self.init(answer: data.merging(["event": .string(eventName)]), root: eventName)
    }

    private enum CodingKeys: String, CodingKey {
        case camera
    }

    /// Reads ``json``: the camera's name and the event, whose members are beside it.
    public init(from decoder: any Decoder) throws {
        camera = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .camera)
        event = try CameraEvent(reading: decoder)
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
    /// The slot the run's schedule shoots next; nil while paused, once it is to end, or when the
    /// job is not live. The schedule's own answer, so that no client redoes pauses, re-anchoring
    /// or a ramp's interval to draw a countdown.
    public var nextSlot: NextSlot?
    /// Whether ``API/resumeJob`` would take the job up now: only a `suspended` job can be, when
    /// the daemon holds its cameras and no other process shoots it. A camera busy with another
    /// job is not counted, and is the resume's refusal.
    public var resumable: Bool
    /// Why a `suspended` job cannot be resumed now, in the words a resume would be refused
    /// with; nil when it can be, and for a job that is not suspended.
    public var resumeRefusal: String?

    public init(id: Int64, camera: String, cameras: [String], kind: JobKind, state: JobState, plan: RunPlan, t0UnixMs: Int64?,
                reason: String?, summary: RunSummary, lastFrame: FrameRecord?, nextSlot: NextSlot? = nil,
                resumable: Bool = false, resumeRefusal: String? = nil) {
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
        self.nextSlot = nextSlot
        self.resumable = resumable
        self.resumeRefusal = resumeRefusal
    }

    public var json: JSONValue {
        [
            "id": .integer(id), "camera": .string(camera), "cameras": .array(cameras.map(JSONValue.string)),
            "kind": .string(kind.rawValue), "state": .string(state.rawValue), "live": .bool(state.isLive),
            "plan": plan.json, "t0": t0UnixMs.map { .string(JSONValue.isoTimestamp($0)) } ?? .null,
            "reason": .optional(reason), "summary": JSONValue(encoding: summary),
            "lastFrame": lastFrame.map { JSONValue(encoding: $0) } ?? .null,
            "nextSlot": nextSlot.map { JSONValue(encoding: $0) } ?? .null,
            "resumable": .bool(resumable), "resumeRefusal": .optional(resumeRefusal),
        ]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "job")
    }

    private enum CodingKeys: String, CodingKey {
        case id, camera, cameras, kind, state, plan, t0, reason, summary, lastFrame, nextSlot, resumable, resumeRefusal
    }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        id = try members.decode(Int64.self, forKey: .id)
        camera = try members.decode(String.self, forKey: .camera)
        // A daemon before the list gave the joined names only.
        cameras = try members.decodeIfPresent([String].self, forKey: .cameras) ?? camera.split(separator: ",").map(String.init)
        kind = try members.decode(JobKind.self, forKey: .kind)
        state = try members.decode(JobState.self, forKey: .state)
        let document = try members.decode(PlanDocument.self, forKey: .plan)
        do throws(JobRequestError) {
            plan = try RunPlan(document: document, at: "plan", now: Date())
        } catch {
            // A rule of plans the plan breaks, which names its member from the job.
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
        t0UnixMs = try members.decodeIfPresent(Timestamp.self, forKey: .t0).map { Int64(($0.date.timeIntervalSince1970 * 1000).rounded()) }
        reason = try members.decodeIfPresent(String.self, forKey: .reason)
        summary = try members.decode(RunSummary.self, forKey: .summary)
        lastFrame = try members.decodeIfPresent(FrameRecord.self, forKey: .lastFrame)
        // A daemon before it did not say.
        nextSlot = try members.decodeIfPresent(NextSlot.self, forKey: .nextSlot)
        // A daemon before them resumed no job on request.
        resumable = try members.decodeIfPresent(Bool.self, forKey: .resumable) ?? false
        resumeRefusal = try members.decodeIfPresent(String.self, forKey: .resumeRefusal)
    }
}

/// When a job's next slot is due: its frame number, and its time on the daemon's clock.
public struct NextSlot: Codable, Hashable, Sendable {
    /// The slot number, from 1.
    public var frame: Int
    /// When it is due, in Unix milliseconds; already past for a slot the run is catching up on.
    public var dueUnixMs: Int64

    public init(frame: Int, dueUnixMs: Int64) {
        self.frame = frame
        self.dueUnixMs = dueUnixMs
    }

    private enum CodingKeys: String, CodingKey { case frame, at }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        frame = try members.decode(Int.self, forKey: .frame)
        dueUnixMs = Int64((try members.decode(Timestamp.self, forKey: .at).date.timeIntervalSince1970 * 1000).rounded())
    }

    public func encode(to encoder: any Encoder) throws {
        var members = encoder.container(keyedBy: CodingKeys.self)
        try members.encode(frame, forKey: .frame)
        try members.encode(JSONValue.isoTimestamp(dueUnixMs), forKey: .at)
    }
}

/// ``API/jobs``: the jobs running and the last ones that ran.
public struct JobList: APIDocument, Equatable {
    public var jobs: [JobDocument]

    public init(jobs: [JobDocument]) { self.jobs = jobs }

    public var json: JSONValue { ["jobs": .array(jobs.map(\.json))] }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "body")
    }
}

/// One event of ``API/jobEvents``.
public enum JobEvent: ServerSentDocument, Equatable {
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
        case .frame(let frame, let job): JournalledFrame(frame: frame, job: job).json
        case .end(let run, let state, let reason, let summary):
            JSONValue(encoding: End(run: run, state: state, reason: reason, summary: summary))
        case .streamError(let message): JSONValue(encoding: StreamError(message: message))
        }
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        switch eventName {
        case "frame":
            let frame = try JournalledFrame(answer: data, root: eventName)
            self = .frame(frame.frame, job: frame.job)
        case "end":
            let end = try End(answer: data, root: eventName)
            self = .end(run: end.run, state: end.state, reason: end.reason, summary: end.summary)
        case "error": self = .streamError(message: try StreamError(answer: data, root: eventName).message)
        default: throw JSONShapeError(path: eventName, problem: "'\(eventName)' is not a job event")
        }
    }

    /// An `end` event's data.
    private struct End: Codable {
        var run: RunRecord
        var state: JobState
        var reason: String
        var summary: RunSummary
    }

    /// An `error` event's data.
    private struct StreamError: Codable {
        var message: String
    }
}

/// A frame as a job's stream and the live stream send it: the journal's record with the job's
/// id as `run`.
struct JournalledFrame: Decodable {
    var frame: FrameRecord
    var job: Int64

    init(frame: FrameRecord, job: Int64) {
        self.frame = frame
        self.job = job
    }

    var json: JSONValue { JSONValue(encoding: frame).merging(["run": .integer(job)]) }

    private enum CodingKeys: String, CodingKey {
        case run
    }

    init(from decoder: any Decoder) throws {
        frame = try FrameRecord(from: decoder)
        job = try decoder.container(keyedBy: CodingKeys.self).decode(Int64.self, forKey: .run)
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
        try self.init(answer: json, root: "body")
    }

    private enum CodingKeys: String, CodingKey {
        case error
    }

    private enum ErrorKeys: String, CodingKey {
        case code, message, camera
    }

    public init(from decoder: any Decoder) throws {
        let error = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
        // A camera's error code is a word; the daemon's own refusal gives its HTTP status, a number.
        code = try (try? error.decode(String.self, forKey: .code)) ?? String(error.decode(Int64.self, forKey: .code))
        message = try error.decode(String.self, forKey: .message)
        camera = try error.decodeIfPresent(CameraError.self, forKey: .camera)
    }
}
