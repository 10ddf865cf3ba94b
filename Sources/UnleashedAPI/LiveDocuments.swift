public import Intervalometer
public import JSON

// MARK: - One stream for a dashboard (the web app)

/// The first event of ``API/live``: the daemon as it stands when the stream opens. Every event
/// after it is a change to this, so a page that (re)connects is whole again without asking
/// anything else, and nothing that happened while it was away is missed.
public struct LiveSnapshot: APIDocument, Equatable {
    /// The frames of one running job that the snapshot carries.
    public struct RecentFrames: Codable, Equatable, Sendable {
        public var run: Int64
        public var frames: [FrameRecord]

        public init(run: Int64, frames: [FrameRecord]) {
            self.run = run
            self.frames = frames
        }
    }

    /// How many of a running job's newest frames a snapshot carries: enough for a page's list
    /// of last frames; the job's summary counts all of them.
    public static let recentFrameCount = 50

    /// The daemon's wall clock when the snapshot was taken (Unix milliseconds): a page places a
    /// job's slots, which are on this clock, by its offset from the phone's own.
    public var nowUnixMs: Int64
    public var status: DaemonStatus
    public var cameras: CameraList
    public var groups: GroupList
    /// The running jobs, newest first, then the latest ended ones, as ``API/jobs`` lists them.
    public var jobs: JobList
    /// For each running job, its newest frames (at most ``recentFrameCount``), oldest first.
    public var recentFrames: [RecentFrames]

    public init(nowUnixMs: Int64, status: DaemonStatus, cameras: CameraList, groups: GroupList, jobs: JobList,
                recentFrames: [RecentFrames]) {
        self.nowUnixMs = nowUnixMs
        self.status = status
        self.cameras = cameras
        self.groups = groups
        self.jobs = jobs
        self.recentFrames = recentFrames
    }

    public var json: JSONValue {
        [
            "nowUnixMs": .integer(nowUnixMs), "status": status.json, "cameras": cameras.json["cameras"] ?? .array([]), "groups": groups.json["groups"] ?? .array([]),
            "jobs": jobs.json["jobs"] ?? .array([]),
            "recentFrames": JSONValue(encoding: recentFrames),
        ]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "snapshot")
    }

    private enum CodingKeys: String, CodingKey {
        case nowUnixMs, status, cameras, groups, jobs, recentFrames
    }

    /// Reads ``json``, whose lists stand bare where the documents they come from hold them in an object.
    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: CodingKeys.self)
        self.init(nowUnixMs: try members.decode(Int64.self, forKey: .nowUnixMs), status: try members.decode(DaemonStatus.self, forKey: .status),
                  cameras: CameraList(cameras: try members.decode([CameraList.Entry].self, forKey: .cameras)),
                  groups: GroupList(groups: try members.decode([GroupList.Group].self, forKey: .groups)),
                  jobs: JobList(jobs: try members.decode([JobDocument].self, forKey: .jobs)),
                  recentFrames: try members.decode([RecentFrames].self, forKey: .recentFrames))
    }
}

/// One event of ``API/live``: a snapshot first, then every change to it, cameras and jobs on
/// one connection (a browser opens at most six to a host, and a page should need one).
public enum LiveEvent: ServerSentDocument, Equatable {
    /// Always the first event.
    case snapshot(LiveSnapshot)
    /// A camera's event, named and shaped as ``API/events`` sends it.
    case camera(CameraEventMessage)
    /// A job was started, paused, continued or ended: its document now.
    case job(JobDocument)
    /// A running job journalled a frame.
    case frame(FrameRecord, job: Int64)
    /// The stream ends here: open it again for a new snapshot. Sent when cameras came or went,
    /// or when the client fell too far behind to be sent every change.
    case resync(reason: String)
    /// Sent every ``heartbeatInterval`` with the daemon's wall clock, so that a page tells a
    /// quiet daemon from a lost connection.
    case heartbeat(nowUnixMs: Int64)

    /// How often the stream sends a ``heartbeat(nowUnixMs:)``.
    public static let heartbeatInterval: Duration = .seconds(15)

    public var eventName: String {
        switch self {
        case .snapshot: "snapshot"
        case .camera(let message): message.eventName
        case .job: "job"
        case .frame: "frame"
        case .resync: "resync"
        case .heartbeat: "heartbeat"
        }
    }

    /// The event's data.
    public var data: JSONValue {
        switch self {
        case .snapshot(let snapshot): snapshot.json
        case .camera(let message): message.data
        case .job(let job): job.json
        case .frame(let frame, let job): JournalledFrame(frame: frame, job: job).json
        case .resync(let reason): JSONValue(encoding: Resync(reason: reason))
        case .heartbeat(let now): JSONValue(encoding: Heartbeat(nowUnixMs: now))
        }
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        switch eventName {
        case "snapshot": self = .snapshot(try LiveSnapshot(json: data))
        case "job": self = .job(try JobDocument(json: data))
        case "frame":
            let frame = try JournalledFrame(answer: data, root: eventName)
            self = .frame(frame.frame, job: frame.job)
        case "resync": self = .resync(reason: try Resync(answer: data, root: eventName).reason)
        case "heartbeat": self = .heartbeat(nowUnixMs: try Heartbeat(answer: data, root: eventName).nowUnixMs)
        default: self = .camera(try CameraEventMessage(eventName: eventName, data: data))
        }
    }

    /// A `resync` event's data.
    private struct Resync: Codable {
        var reason: String
    }

    /// A `heartbeat` event's data.
    private struct Heartbeat: Codable {
        var nowUnixMs: Int64
    }
}
