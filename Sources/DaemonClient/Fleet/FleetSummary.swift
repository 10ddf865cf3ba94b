public import Foundation
public import JSON
public import UnleashedAPI

/// The hosts' answers to a fleet command, as `unleashed fleet shoot`, `timelapse` and `stop`
/// print them, and its exit status: 0 when every host that answered did it all (fired every
/// camera, stopped every job), 65 when one refused or a camera or job failed, 69 when no host
/// answered.
public struct FleetShotSummary: Sendable {
    public let at: Date
    public let answers: [FleetAnswer]

    public init(at: Date, answers: [FleetAnswer]) {
        self.at = at
        self.answers = answers
    }

    /// Every host did it all.
    public static let statusDone: Int32 = 0
    /// A host refused, or a camera or a job failed (sysexits' EX_DATAERR).
    public static let statusRefused: Int32 = 65
    /// No host answered (sysexits' EX_UNAVAILABLE).
    public static let statusNoAnswer: Int32 = 69

    public var status: Int32 {
        if answers.isEmpty { return Self.statusNoAnswer }
        let allDone = answers.allSatisfy { answer in
            answer.accepted && (answer.shots ?? []).allSatisfy(\.ok) && (answer.failed ?? []).isEmpty
        }
        return allDone ? Self.statusDone : Self.statusRefused
    }

    public var json: JSONValue {
        ["at": .string(FleetTime.text(at)), "hosts": JSONValue(encoding: answers)]
    }

    /// The answers to a fleet shot: each host's clock and cameras' shots, or why it refused.
    public var text: String {
        lines(title: "Shot at \(FleetTime.text(at))", none: "the shot at \(FleetTime.text(at))") { answer in
            let shots = (answer.shots ?? []).map { shot -> String in
                guard shot.ok else { return "\(shot.camera) failed: \(shot.error ?? "?")" }
                let counter = shot.shot?["counter"]?.integerValue.map(String.init) ?? "?"
                // Fired at the time (on the module's own timer where it has one): when the picture was confirmed after it.
                let after = shot.answeredAfterAtMs.map { String(format: "%.0f ms", $0) } ?? "?"
                return "\(shot.camera) #\(counter) (confirmed \(after) after the time)"
            }
            return "\(Self.clockText(answer.clock))  \(shots.joined(separator: "; "))"
        }
    }

    /// The answers to a fleet time-lapse: each host's job, or why it refused.
    public var timelapseText: String {
        lines(title: "Time-lapse from \(FleetTime.text(at))", none: "the time-lapse") { answer in
            "job \(answer.job.map(String.init) ?? "?") on \((answer.cameras ?? []).joined(separator: ", "))  \(Self.clockText(answer.clock))"
        }
    }

    /// The answers to a fleet stop: each host's jobs stopped, with their frames, or why not.
    public var stopText: String {
        lines(title: "Stop", none: "the stop") { answer in
            let stopped = (answer.stopped ?? []).map { job in
                "job \(job.job) on \(job.cameras.joined(separator: ", ")) stopped after slot \(job.lastSlot), \(job.frames) taken"
            }
            let failed = (answer.failed ?? []).map { job in "job \(job.job) did not stop: \(job.error)" }
            let all = stopped + failed
            return all.isEmpty ? "nothing was running" : all.joined(separator: "; ")
        }
    }

    /// A title line, then one line a host: `accepted`'s words for a host that took the command,
    /// its reason for one that refused.
    private func lines(title: String, none: String, accepted: (FleetAnswer) -> String) -> String {
        guard !answers.isEmpty else {
            return "No host answered \(none): is [mqtt] set in their daemons, and the broker the same?"
        }
        var lines = ["\(title): \(answers.count) host\(answers.count == 1 ? "" : "s") answered"]
        for answer in answers {
            if answer.accepted {
                lines.append("  \(answer.node): \(accepted(answer))")
            } else {
                lines.append("  \(answer.node): refused: \(answer.reason ?? "no reason given")")
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
            let running = jobs.filter { ($0.1["state"]?.stringValue).flatMap(JobState.init(rawValue:))?.isLive == true }
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

    static func clockText(_ clock: HostClock) -> String {
        let error = String(format: "%.1f ms", clock.estimatedErrorMs)
        return clock.synchronised ? "clock ±\(error)" : "clock NOT synchronised (estimate \(error))"
    }

    /// A retained clock document, as `fleet status` reads it.
    static func clockText(_ clock: JSONValue?) -> String {
        guard let clock = clock?.objectValue else { return "clock unknown" }
        let error = clock["estimatedErrorMs"]?.numberValue.map { String(format: "%.1f ms", $0) } ?? "?"
        return clock["synchronised"] == true ? "clock ±\(error)" : "clock NOT synchronised (estimate \(error))"
    }
}
