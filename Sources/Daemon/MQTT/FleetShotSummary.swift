public import Foundation
public import JSON

/// The hosts' answers to a fleet command, as `unleashed fleet shoot`, `timelapse` and `stop`
/// print them, and its exit status: 0 when every host that answered did it all (fired every
/// camera, stopped every job), 65 when one refused or a camera or job failed, 69 when no host
/// answered.
public struct FleetShotSummary: Sendable {
    public let at: Date
    public let answers: [JSONValue]

    public init(at: Date, answers: [JSONValue]) {
        self.at = at
        self.answers = answers
    }

    public var status: Int32 {
        if answers.isEmpty { return 69 }
        let allDone = answers.allSatisfy { answer in
            guard let members = answer.objectValue, members["accepted"] == true else { return false }
            return (members["shots"]?.arrayValue ?? []).allSatisfy { $0.objectValue?["ok"] == true }
                && (members["failed"]?.arrayValue ?? []).isEmpty
        }
        return allDone ? 0 : 65
    }

    public var json: JSONValue {
        ["at": .string(ShootRequest.text(at)), "hosts": .array(answers)]
    }

    /// The answers to a fleet shot: each host's clock and cameras' shots, or why it refused.
    public var text: String {
        lines(title: "Shot at \(ShootRequest.text(at))", none: "the shot at \(ShootRequest.text(at))") { members in
            let shots = (members["shots"]?.arrayValue ?? []).map { shot -> String in
                let shot = shot.objectValue ?? [:]
                let camera = shot["camera"]?.stringValue ?? "?"
                guard shot["ok"] == true else { return "\(camera) failed: \(shot["error"]?.stringValue ?? "?")" }
                let detail = shot["shot"]?.objectValue ?? [:]
                let counter = detail["counter"]?.integerValue.map(String.init) ?? "?"
                // Fired at the time (on the module's own timer where it has one): when the picture was confirmed after it.
                let after = shot["answeredAfterAtMs"].flatMap(Self.number).map { String(format: "%.0f ms", $0) } ?? "?"
                return "\(camera) #\(counter) (confirmed \(after) after the time)"
            }
            return "\(Self.clockText(members["clock"]))  \(shots.joined(separator: "; "))"
        }
    }

    /// The answers to a fleet time-lapse: each host's job, or why it refused.
    public var timelapseText: String {
        lines(title: "Time-lapse from \(ShootRequest.text(at))", none: "the time-lapse") { members in
            let cameras = (members["cameras"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            return "job \(members["job"]?.integerValue.map(String.init) ?? "?") on \(cameras)  \(Self.clockText(members["clock"]))"
        }
    }

    /// The answers to a fleet stop: each host's jobs stopped, with their frames, or why not.
    public var stopText: String {
        lines(title: "Stop", none: "the stop") { members in
            let stopped = (members["stopped"]?.arrayValue ?? []).compactMap(\.objectValue).map { job in
                let cameras = (job["cameras"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
                return "job \(job["job"]?.integerValue.map(String.init) ?? "?") on \(cameras) stopped after slot "
                    + "\(job["lastSlot"]?.integerValue ?? 0), \(job["frames"]?.integerValue ?? 0) taken"
            }
            let failed = (members["failed"]?.arrayValue ?? []).compactMap(\.objectValue).map { job in
                "job \(job["job"]?.integerValue.map(String.init) ?? "?") did not stop: \(job["error"]?.stringValue ?? "?")"
            }
            let all = stopped + failed
            return all.isEmpty ? "nothing was running" : all.joined(separator: "; ")
        }
    }

    /// A title line, then one line a host: `accepted`'s words for a host that took the command,
    /// its reason for one that refused.
    private func lines(title: String, none: String, accepted: ([String: JSONValue]) -> String) -> String {
        guard !answers.isEmpty else {
            return "No host answered \(none): is [mqtt] set in their daemons, and the broker the same?"
        }
        var lines = ["\(title): \(answers.count) host\(answers.count == 1 ? "" : "s") answered"]
        for answer in answers {
            let members = answer.objectValue ?? [:]
            let node = members["node"]?.stringValue ?? "?"
            if members["accepted"] == true {
                lines.append("  \(node): \(accepted(members))")
            } else {
                lines.append("  \(node): refused: \(members["reason"]?.stringValue ?? "no reason given")")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Each host's line of `unleashed fleet status`, its cameras and its runs, and where the
    /// rig's runs stand: the slot each host has reached.
    public static func statusText(_ hosts: JSONValue) -> String {
        let hosts = hosts.objectValue ?? [:]
        guard !hosts.isEmpty else { return "No host on the broker: no daemon with [mqtt] has connected to it." }
        var slots: [String: Int] = [:]
        let lines = hosts.keys.sorted().map { node in
            let host = hosts[node]?.objectValue ?? [:]
            var line = "\(node): \(host["availability"]?.stringValue ?? "unknown")  \(clockText(host["clock"]))"
            let cameras = host["cameras"]?.objectValue ?? [:]
            for name in cameras.keys.sorted() {
                let camera = cameras[name]?.objectValue ?? [:]
                let state = camera["state"]?.objectValue ?? [:]
                let run = camera["run"]?.objectValue ?? [:]
                var parts = [state["connection"]?.stringValue ?? "?"]
                if let battery = state["moduleBattery"]?.integerValue { parts.append("module \(battery)%") }
                if run["running"] == true { parts.append("time-lapse, \(run["frames"]?.integerValue ?? 0) frames") }
                line += "\n  \(state["name"]?.stringValue ?? name): \(parts.joined(separator: ", "))"
            }
            // Its running jobs, or else the latest one.
            let jobs = (host["jobs"]?.objectValue ?? [:]).compactMap { id, job in job.objectValue.map { (Int(id) ?? 0, $0) } }.sorted { $0.0 < $1.0 }
            let running = jobs.filter { ["running", "waiting", "paused"].contains($0.1["state"]?.stringValue ?? "") }
            for (id, job) in running.isEmpty ? Array(jobs.suffix(1)) : running {
                let summary = job["summary"]?.objectValue ?? [:]
                let slot = job["lastFrame"]?.objectValue?["frame"]?.integerValue.map { Int($0) } ?? 0
                if !running.isEmpty { slots[node] = max(slots[node] ?? 0, slot) }
                line += "\n  job \(id) \(job["state"]?.stringValue ?? "?"): slot \(slot), \(summary["taken"]?.integerValue ?? 0) taken, "
                    + "\(summary["failed"]?.integerValue ?? 0) failed, \(summary["skipped"]?.integerValue ?? 0) skipped"
            }
            return line
        }
        guard slots.count > 1, let lowest = slots.values.min(), let highest = slots.values.max() else { return lines.joined(separator: "\n") }
        let rig = lowest == highest
            ? "rig: every running host at slot \(lowest)"
            : "rig: slots \(lowest) to \(highest) (" + slots.keys.sorted().map { "\($0) \(slots[$0]!)" }.joined(separator: ", ") + ")"
        return (lines + [rig]).joined(separator: "\n")
    }

    static func clockText(_ clock: JSONValue?) -> String {
        guard let clock = clock?.objectValue else { return "clock unknown" }
        let error = clock["estimatedErrorMs"].flatMap(number).map { String(format: "%.1f ms", $0) } ?? "?"
        return clock["synchronised"] == true ? "clock ±\(error)" : "clock NOT synchronised (estimate \(error))"
    }

    /// A JSON number, integer or not, as a Double.
    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .number(let number): number
        default: nil
        }
    }
}
