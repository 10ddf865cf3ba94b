public import JSON

// MARK: - The rig across hosts (MQTT)

/// ``API/fleet``'s answer: every host this daemon hears on its MQTT broker (itself included),
/// with its clock, its cameras and its time-lapses slot by slot, for the web app's rig view.
/// Without `[mqtt]` in the configuration, `enabled` is false and there are no hosts.
public struct FleetDocument: APIDocument, Equatable {
    /// Whether `[mqtt]` is set, so that there is a fleet to show.
    public var enabled: Bool
    /// Whether the daemon is connected to the broker now; what it shows is what it last heard.
    public var connected: Bool
    /// This host's name on the broker.
    public var node: String?
    /// The hosts, by name.
    public var hosts: [FleetHost]
    /// Where the running time-lapses stand across the hosts, when any runs.
    public var rig: FleetRig?

    public init(enabled: Bool, connected: Bool, node: String?, hosts: [FleetHost], rig: FleetRig?) {
        self.enabled = enabled
        self.connected = connected
        self.node = node
        self.hosts = hosts
        self.rig = rig
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["enabled": .bool(enabled), "connected": .bool(connected),
                                            "hosts": JSONValue(encoding: hosts), "rig": rig.map { JSONValue(encoding: $0) } ?? .null]
        members["node"] = node.map(JSONValue.string) ?? .null
        return .object(members)
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        try self.init(answer: json, root: "fleet")
    }
}

/// One host of the fleet, as its retained messages on the broker describe it.
public struct FleetHost: Codable, Equatable, Sendable {
    public var node: String
    /// Its availability: false once it said goodbye or the broker sent its last will.
    public var online: Bool
    /// Its clock as it reported it; nil before it did.
    public var clock: HostClock?
    public var cameras: [Camera]
    /// Its running time-lapses, or else its latest one.
    public var jobs: [Job]

    public init(node: String, online: Bool, clock: HostClock?, cameras: [Camera], jobs: [Job]) {
        self.node = node
        self.online = online
        self.clock = clock
        self.cameras = cameras
        self.jobs = jobs
    }

    /// One camera of a host.
    public struct Camera: Codable, Equatable, Sendable {
        public var name: String
        /// `ready`, `connecting`, … as `GET /v1/cameras/{camera}/status` says; nil when unknown.
        public var connection: String?
        /// Whether a time-lapse runs on it.
        public var running: Bool
        /// The pictures its current (or last) time-lapse took.
        public var frames: Int

        public init(name: String, connection: String?, running: Bool, frames: Int) {
            self.name = name
            self.connection = connection
            self.running = running
            self.frames = frames
        }
    }

    /// One time-lapse job of a host, with its latest slots.
    public struct Job: Codable, Equatable, Sendable {
        public var id: Int64
        public var state: JobState
        /// Its camera, or a rig's cameras joined by commas, as ``JobDocument/camera``.
        public var camera: String
        /// The last slot it recorded; 0 before the first.
        public var slot: Int
        public var taken: Int
        public var failed: Int
        public var skipped: Int
        /// The latest slots heard while this daemon listened, oldest first.
        public var recent: [Slot]

        public init(id: Int64, state: JobState, camera: String, slot: Int, taken: Int, failed: Int, skipped: Int, recent: [Slot]) {
            self.id = id
            self.state = state
            self.camera = camera
            self.slot = slot
            self.taken = taken
            self.failed = failed
            self.skipped = skipped
            self.recent = recent
        }
    }

    /// One slot of a job on a host: how its cameras' pictures went.
    public struct Slot: Codable, Equatable, Sendable {
        public var slot: Int
        public var taken: Int
        public var failed: Int
        public var skipped: Int

        public init(slot: Int, taken: Int = 0, failed: Int = 0, skipped: Int = 0) {
            self.slot = slot
            self.taken = taken
            self.failed = failed
            self.skipped = skipped
        }
    }
}

/// The slots the hosts' running time-lapses have reached: equal when the rig keeps together.
public struct FleetRig: Codable, Equatable, Sendable {
    public var lowestSlot: Int
    public var highestSlot: Int

    public init(lowestSlot: Int, highestSlot: Int) {
        self.lowestSlot = lowestSlot
        self.highestSlot = highestSlot
    }
}
