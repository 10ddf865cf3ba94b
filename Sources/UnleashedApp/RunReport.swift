import CameraKit
import Foundation
public import Intervalometer
public import JSON
public import UnleashedAPI
import UnleashedKit

/// How runs, frames, a run's end and the daemon's jobs read, as text and as JSON: the same
/// for `runs`, the live display and a run's last line, here or in the daemon.
public enum RunReport {
    /// A run and its counts, as `runs list --json` shows each.
    public static func json(_ run: RunRecord, _ summary: RunSummary) -> JSONValue {
        var json: [String: JSONValue] = [
            "id": .integer(run.id), "state": .string(run.state.rawValue), "camera": .string(run.camera),
            "intervalMs": .integer(run.plan.intervalMs), "t0UnixMs": .integer(run.t0UnixMs),
            "started": .string(started(run)), "taken": .integer(Int64(summary.taken)),
            "failed": .integer(Int64(summary.failed)), "skipped": .integer(Int64(summary.skipped)),
        ]
        json["endReason"] = run.endReason.map(JSONValue.string)
        return .object(json)
    }

    /// A value in its stored JSON form (the plan, the frames), so that scripts read what the
    /// journal holds.
    public static func json(encoding value: some Encodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value),
              let json = try? JSONDecoder().decode(JSONValue.self, from: data)
        else { return .null }
        return json
    }

    /// `runs list`: one row a run, numbers aligned on the right.
    public static func table(_ entries: [(RunRecord, RunSummary)]) -> String {
        let header = ["ID", "STATE", "CAMERA", "INTERVAL", "TAKEN", "FAILED", "SKIPPED", "STARTED"]
        let rows = entries.map { run, summary in
            ["\(run.id)", run.state.rawValue, run.camera, interval(run.plan), "\(summary.taken)", "\(summary.failed)",
             "\(summary.skipped)", started(run)]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            var line = row.indices.map { column in
                let cell = row[column]
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                // Numbers line up on the right, words on the left.
                return [0, 4, 5, 6].contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// The head of `runs show`: state, camera, start, plan, counts and lateness.
    public static func header(_ run: RunRecord, _ summary: RunSummary) -> [String] {
        var lines = [
            "Run \(run.id)  \(run.state.rawValue)" + (run.endReason.map { " (\($0))" } ?? ""),
            "Camera   \(run.camera)",
            "Started  \(started(run))",
            "Plan     \(plan(run.plan))",
            "Frames   \(summary.taken) taken, \(summary.failed) failed, \(summary.skipped) skipped",
        ]
        if let p50 = summary.p50LatenessMicros, let p99 = summary.p99LatenessMicros,
           let max = summary.maxLatenessMicros {
            lines.append("Lateness p50 \(lateness(p50)), p99 \(lateness(p99)), max \(lateness(max))")
        }
        return lines
    }

    /// `12.2  due 55s  taken  late 1.500 ms  1/125  EV +12  shot 101`, and why for failed and
    /// skipped slots.
    public static func line(_ frame: FrameRecord, plan: RunPlan) -> String {
        var fields = [
            bracketed(plan) || frame.part > 1 ? "\(frame.frame).\(frame.part)" : "\(frame.frame)",
            "due \(milliseconds(frame.scheduledMs))",
            frame.outcome.rawValue,
        ]
        if let camera = frame.camera { fields.insert(camera, at: 1) }
        if let late = frame.latenessMicros { fields.append("late \(lateness(late))") }
        if let exposure = frame.exposure { fields.append(exposure) }
        if let ev = frame.meteredEV { fields.append("EV \(ev)") }
        if let counter = frame.shotCounter { fields.append("shot \(counter)") }
        if let spread = frame.commandSpreadMicros {
            fields.append("spread \(lateness(spread))" + (frame.completionSpreadMicros.map { ", reports \(lateness($0))" } ?? ""))
        }
        if let error = frame.error { fields.append("(\(error))") }
        return fields.joined(separator: "  ")
    }

    /// The plan in a line: `every 5s, 300 frames, one picture at the camera's shutter speed, ...`.
    public static func plan(_ plan: RunPlan) -> String {
        let stop = switch plan.stop {
        case .frames(let count): English.counting(count, "frame")
        case .duration(let length): "for \(milliseconds(length))"
        case .until(let time): "until \(JSONValue.isoTimestamp(time))"
        case .never: "until stopped"
        }
        let exposure = switch plan.exposure {
        case .camera: "one picture at the camera's shutter speed"
        case .bulb(let length): "bulb \(milliseconds(length))"
        case .bracket(let count, let step):
            "bracket of \(count), \(ExposureStops(thirds: Int32(clamping: step)).text.trimmingPrefix("+")) EV apart"
        case .video(let length): English.withArticle("\(milliseconds(length)) video clip")
        case .ramp(let ramp):
            "exposure ramped to the light (ISO \(ramp.minISO)-\(ramp.maxISO)"
                + (ramp.apertures.isEmpty ? "" : ", \(ramp.apertures.joined(separator: " "))") + ")"
        }
        var parts = ["every \(interval(plan))", stop, exposure, "overrun \(plan.overrun.rawValue)"]
        if plan.minimumGapMs > 0 { parts.append("at least \(milliseconds(plan.minimumGapMs)) between slots") }
        if let hook = plan.hook { parts.append("hook \(hook)") }
        return parts.joined(separator: ", ")
    }

    private static func bracketed(_ plan: RunPlan) -> Bool {
        if case .bracket = plan.exposure { true } else { false }
    }

    private static func interval(_ plan: RunPlan) -> String { milliseconds(plan.intervalMs) }

    private static func milliseconds(_ value: Int64) -> String { Duration.milliseconds(value).compactText }

    private static func started(_ run: RunRecord) -> String { JSONValue.isoTimestamp(run.t0UnixMs) }

    /// `01:02.5`, `1:02:03.5`: a running clock for exposures, video and the time-lapse display.
    public static func clock(_ duration: Duration) -> String {
        let tenths = max(duration.wholeMilliseconds, 0) / 100
        let (hours, minutes, seconds) = (tenths / 36_000, tenths / 600 % 60, tenths / 10 % 60)
        let fraction = tenths % 10
        return hours > 0
            ? String(format: "%d:%02d:%02d.%d", hours, minutes, seconds, fraction)
            : String(format: "%02d:%02d.%d", minutes, seconds, fraction)
    }

    /// `1.500 ms`, from microseconds.
    public static func lateness(_ micros: Int64) -> String { String(format: "%.3f ms", Double(micros) / 1000) }

    /// `runs show --json`: the run with its plan and summary, and every frame.
    public static func json(_ run: RunRecord, frames: [FrameRecord]) -> JSONValue {
        let summary = RunSummary(frames: frames)
        var members = json(run, summary).objectValue ?? [:]
        members["plan"] = json(encoding: run.plan)
        members["summary"] = json(encoding: summary)
        return ["run": .object(members), "frames": json(encoding: frames)]
    }

    /// `runs show`: the head, then a line a frame.
    public static func text(_ run: RunRecord, frames: [FrameRecord]) -> String {
        (header(run, RunSummary(frames: frames)) + frames.map { line($0, plan: run.plan) }).joined(separator: "\n")
    }

    /// The last JSON line of a run, here or in the daemon.
    public static func json(_ end: RunEnd) -> JSONValue {
        var run: [String: JSONValue] = ["id": .integer(end.id), "state": .string(end.state), "reason": .string(end.reason)]
        run["summary"] = json(encoding: end.summary)
        if let file = end.recoveryFile { run["recoveryFile"] = .string(file) }
        return ["run": .object(run)]
    }

    /// The last line of a run, here or in the daemon.
    public static func text(_ end: RunEnd) -> String {
        let summary = end.summary
        var line = "Run \(end.id) \(end.state) (\(end.reason)): \(summary.taken) taken, "
            + "\(summary.failed) failed, \(summary.skipped) skipped"
        if let p50 = summary.p50LatenessMicros, let p99 = summary.p99LatenessMicros, let max = summary.maxLatenessMicros {
            line += "; lateness p50 \(lateness(p50)), p99 \(lateness(p99)), max \(lateness(max))"
        }
        if let p50 = summary.p50CommandSpreadMicros, let p99 = summary.p99CommandSpreadMicros, let max = summary.maxCommandSpreadMicros {
            line += "; command spread p50 \(lateness(p50)), p99 \(lateness(p99)), max \(lateness(max))"
        }
        return line
    }

    /// `Job 7  timelapse on a  running  12 taken, 0 failed, 0 skipped  (t0 2026-11-23T16:40:01.020Z)`
    public static func line(_ job: JobDocument) -> String {
        let summary = job.summary
        let counts = "\(summary.taken) taken, \(summary.failed) failed, \(summary.skipped) skipped"
        var line = "Job \(job.id)  \(job.kind) on \(job.camera)  \(job.state)  \(counts)"
        if let t0 = job.json["t0"]?.stringValue { line += "  (t0 \(t0))" }
        if let reason = job.reason { line += "  \(reason)" }
        return line
    }

    /// What `stop` says of the job it stopped, now or after its current frame.
    public static func stopped(_ job: JobDocument, when: StopWhen) -> String {
        "Job \(job.id) \(when == .afterFrame ? "stops after its current frame" : "stopped")" + line(job).dropFirst("Job \(job.id)".count)
    }
}
