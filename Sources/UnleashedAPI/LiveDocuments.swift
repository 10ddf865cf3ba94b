public import Intervalometer
public import JSON

// MARK: - One stream for a dashboard (the web app)

/// The first event of ``API/live``: the daemon as it stands when the stream opens. Every event
/// after it is a change to this, so a page that (re)connects is whole again without asking
/// anything else, and nothing that happened while it was away is missed.
public struct LiveSnapshot: APIDocument, Equatable {
    /// The frames of one running job that the snapshot carries.
    public struct RecentFrames: Equatable, Sendable {
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
            "recentFrames": .array(recentFrames.map { ["run": .integer($0.run), "frames": .array($0.frames.map { JSONValue(encoding: $0) })] }),
        ]
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(json, path: "snapshot")
        nowUnixMs = try cursor.member("nowUnixMs").int64()
        status = try DaemonStatus(json: try cursor.member("status").value)
        cameras = try CameraList(json: ["cameras": try cursor.member("cameras").value])
        groups = try GroupList(json: ["groups": try cursor.member("groups").value])
        jobs = try JobList(json: ["jobs": try cursor.member("jobs").value])
        recentFrames = try cursor.member("recentFrames").array().map { entry throws(JSONShapeError) in
            RecentFrames(run: try entry.member("run").int64(),
                         frames: try entry.member("frames").array().map { frame throws(JSONShapeError) in try frame.decoded(FrameRecord.self) })
        }
    }
}

/// One event of ``API/live``: a snapshot first, then every change to it, cameras and jobs on
/// one connection (a browser opens at most six to a host, and a page should need one).
public enum LiveEvent: APIDocument, ServerSentDocument, Equatable {
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
        case .frame(let frame, let job): JSONValue(encoding: frame).merging(["run": .integer(job)])
        case .resync(let reason): ["reason": .string(reason)]
        case .heartbeat(let now): ["nowUnixMs": .integer(now)]
        }
    }

    public init(eventName: String, data: JSONValue) throws(JSONShapeError) {
        let cursor = JSONCursor(data, path: eventName)
        switch eventName {
        case "snapshot": self = .snapshot(try LiveSnapshot(json: data))
        case "job": self = .job(try JobDocument(json: data))
        case "frame": self = .frame(try cursor.decoded(FrameRecord.self), job: try cursor.member("run").int64())
        case "resync": self = .resync(reason: try cursor.member("reason").string())
        case "heartbeat": self = .heartbeat(nowUnixMs: try cursor.member("nowUnixMs").int64())
        default: self = .camera(try CameraEventMessage(eventName: eventName, data: data))
        }
    }
}
