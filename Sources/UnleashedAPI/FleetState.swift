import Foundation
import Intervalometer
package import JSON

/// What the broker says of every host: each host's retained state (availability, clock, its
/// cameras' state and runs, its jobs) and the frames it publishes, folded in message by message.
/// `unleashed fleet status` folds what it reads once; the daemon's bridge keeps one for the web
/// app's rig view (`GET /v1/fleet`). Bounded: a few jobs and slots a host.
package struct FleetState: Sendable {
    package let prefix: String
    package private(set) var hosts: [String: Host] = [:]

    /// The slots kept of each job, the newest.
    package static let recentSlots = 24
    /// The ended jobs kept of each host beside its running ones, the newest.
    package static let endedJobsKept = 2

    package struct Host: Sendable {
        package var availability: String?
        package var clock: JSONValue?
        /// By camera level: its `state` and `run` documents.
        package var cameras: [String: [String: JSONValue]] = [:]
        package var jobs: [Int64: JSONValue] = [:]
        package var recent: [Int64: [FleetHost.Slot]] = [:]
    }

    package init(prefix: String) { self.prefix = prefix }

    /// The topics a listener subscribes to for ``take(topic:payload:)``.
    package static func filters(prefix: String) -> [String] {
        ["availability", "clock", "cameras/+/state", "cameras/+/run", "jobs/+", "jobs/+/frames"].map { "\(prefix)/+/\($0)" }
    }

    /// Folds one message in (an empty payload clears what its topic held, as a cleared retained
    /// message does); false when the topic is not a host's state, and nothing changed.
    package mutating func take(topic: String, payload: [UInt8]) -> Bool {
        guard topic.hasPrefix(prefix + "/") else { return false }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let node = levels.first, !node.isEmpty, node != "fleet" else { return false }
        let document = payload.isEmpty ? nil : (try? JSONDecoder().decode(JSONValue.self, from: Data(payload)))
        var host = hosts[node] ?? Host()
        switch Array(levels.dropFirst()) {
        case ["availability"]:
            host.availability = payload.isEmpty ? nil : String(decoding: payload, as: UTF8.self)
        case ["clock"]:
            host.clock = document
        case let rest where rest.count == 3 && rest[0] == "cameras" && ["state", "run"].contains(rest[2]):
            var camera = host.cameras[rest[1]] ?? [:]
            camera[rest[2]] = document
            host.cameras[rest[1]] = camera.isEmpty ? nil : camera
        case let rest where rest.count == 2 && rest[0] == "jobs":
            guard let id = Int64(rest[1]) else { return false }
            host.jobs[id] = document
            host.prune()
        case let rest where rest.count == 3 && rest[0] == "jobs" && rest[2] == "frames":
            guard let id = Int64(rest[1]), let frame = document?.objectValue, let slot = frame["frame"]?.integerValue,
                  let outcome = frame["outcome"]?.stringValue else { return false }
            host.record(slot: Int(slot), outcome: outcome, job: id)
        default:
            return false
        }
        hosts[node] = host
        return true
    }

    /// Every host as `unleashed fleet status --json` prints it:
    /// `{node: {availability, clock, cameras: {camera: {state, run}}, jobs: {id: job}}}`.
    package var statusJSON: JSONValue {
        .object(hosts.mapValues { host in
            var members: [String: JSONValue] = [:]
            if let availability = host.availability { members["availability"] = .string(availability) }
            if let clock = host.clock { members["clock"] = clock }
            if !host.cameras.isEmpty { members["cameras"] = .object(host.cameras.mapValues { .object($0) }) }
            if !host.jobs.isEmpty { members["jobs"] = .object(Dictionary(uniqueKeysWithValues: host.jobs.map { (String($0.key), $0.value) })) }
            return .object(members)
        })
    }

    /// The fleet as `GET /v1/fleet` answers: hosts by name, each with its running jobs (or
    /// its latest) and their latest slots, and where the running ones stand together.
    package func document(connected: Bool, node: String) -> FleetDocument {
        var reached: [Int] = []
        let hosts = self.hosts.keys.sorted().map { name in
            let host = self.hosts[name]!
            let clock = host.clock.flatMap { try? StrictJSONDecoder(refusesUnknownMembers: false).decode(HostClock.self, from: $0) }
            let cameras = host.cameras.keys.sorted().map { level in
                let state = host.cameras[level]?["state"]?.objectValue ?? [:]
                let run = host.cameras[level]?["run"]?.objectValue ?? [:]
                return FleetHost.Camera(name: state["name"]?.stringValue ?? level, connection: state["connection"]?.stringValue,
                                        running: run["running"] == true, frames: Int(run["frames"]?.integerValue ?? 0))
            }
            let jobs = host.jobs.compactMap { id, document in (try? JobDocument(json: document)).map { (id, $0) } }.sorted { $0.0 < $1.0 }
            let running = jobs.filter { $0.1.state.isLive }
            let shown = (running.isEmpty ? Array(jobs.suffix(1)) : running).map { id, job in
                FleetHost.Job(id: id, state: job.state, camera: job.camera, slot: job.lastFrame?.frame ?? 0, taken: job.summary.taken,
                              failed: job.summary.failed, skipped: job.summary.skipped, recent: host.recent[id] ?? [])
            }
            if !running.isEmpty, let slot = shown.map(\.slot).max() { reached.append(slot) }
            return FleetHost(node: name, online: host.availability == "online", clock: clock, cameras: cameras, jobs: shown)
        }
        let rig = reached.min().map { FleetRig(lowestSlot: $0, highestSlot: reached.max() ?? $0) }
        return FleetDocument(enabled: true, connected: connected, node: node, hosts: hosts, rig: rig)
    }


}

extension FleetState.Host {
    /// Keeps the running jobs and the newest ended ones, and the slots of those kept.
    package mutating func prune() {
        let ended = jobs.filter { ($0.value.objectValue?["state"]?.stringValue).flatMap(JobState.init(rawValue:))?.isLive != true }.keys.sorted()
        for id in ended.dropLast(FleetState.endedJobsKept) { jobs[id] = nil }
        recent = recent.filter { jobs[$0.key] != nil }
    }

    /// A camera's picture of `slot`, counted into the slot's line. Frames of a job not known
    /// (its document comes first, retained) are not kept.
    package mutating func record(slot: Int, outcome: String, job: Int64) {
        guard jobs[job] != nil else { return }
        var slots = recent[job] ?? []
        if !slots.contains(where: { $0.slot == slot }) {
            slots.append(FleetHost.Slot(slot: slot))
            slots.sort { $0.slot < $1.slot }
        }
        guard let index = slots.lastIndex(where: { $0.slot == slot }) else { return }
        switch outcome {
        case FrameOutcome.taken.rawValue: slots[index].taken += 1
        case FrameOutcome.failed.rawValue: slots[index].failed += 1
        default: slots[index].skipped += 1
        }
        recent[job] = Array(slots.suffix(FleetState.recentSlots))
    }
}
