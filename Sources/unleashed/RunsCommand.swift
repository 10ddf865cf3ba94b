import ArgumentParser
import CameraKit
import Foundation
import Intervalometer
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

struct RunsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List, show and export the time-lapse runs in the run journal.",
        discussion: """
            The run journal is a local file: $UNLEASHED_JOURNAL, else \
            $XDG_STATE_HOME/unleashed/journal.sqlite, else ~/.local/state/unleashed/journal.sqlite. \
            These commands only read it and need no module. An unknown run id exits with status 64; \
            a journal that cannot be opened, with 69.
            """,
        subcommands: [List.self, Show.self, Export.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every run, newest first, with its frames taken, failed and skipped.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        func run() async throws {
            let journal = try options.journal { () throws(RunQueryError) in try RunQueries() }
            let entries = try options.journal { () throws(RunQueryError) in try journal.runsWithSummaries() }
            options.emit(.array(entries.map { RunText.json($0, $1) })) {
                entries.isEmpty ? "No runs in \(journal.path)" : RunText.table(entries)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a run's plan and every frame, one line each.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Argument(help: ArgumentHelp("The run, as 'runs list' numbers it.", valueName: "id"))
        var id: Int64

        func run() async throws {
            let (run, frames) = try options.journal { () throws(RunQueryError) in
                let journal = try RunQueries()
                return (try journal.run(id), try journal.frames(of: id))
            }
            let summary = RunSummary(frames: frames)
            var json = RunText.json(run, summary).objectValue ?? [:]
            json["plan"] = RunText.json(encoding: run.plan)
            json["summary"] = RunText.json(encoding: summary)
            options.emit(["run": .object(json), "frames": RunText.json(encoding: frames)]) {
                (RunText.header(run, summary) + frames.map { RunText.line($0, plan: run.plan) })
                    .joined(separator: "\n")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a run's frames as CSV.",
            discussion: """
                Columns: \(FrameRecord.csvHeader.joined(separator: ",")). Times are milliseconds \
                after the run's first slot, lateness in microseconds; empty fields have no value. \
                Lines end with CRLF and fields are quoted as RFC 4180 says.
                """
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Argument(help: ArgumentHelp("The run, as 'runs list' numbers it.", valueName: "id"))
        var id: Int64

        @Flag(help: "Write CSV (the only format so far; required, so that others can be added).")
        var csv = false

        @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
        var output: String?

        func validate() throws {
            guard csv else { throw ValidationError("Say which format to export: --csv.") }
        }

        func run() async throws {
            let text = try options.journal { () throws(RunQueryError) in try RunQueries().csv(of: id) }
            guard let output else {
                Output.write(text)
                return
            }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw options.fail(code: "cannotWrite", "cannot write \(output): \(error.localizedDescription)",
                                   status: .unavailable)
            }
            options.emit(["run": .integer(id), "output": .string(output)]) { "Wrote run \(id) to \(output)" }
        }
    }
}

extension GlobalOptions {
    /// Asks the run journal, journal errors becoming messages and exit statuses.
    func journal<T>(_ query: () throws(RunQueryError) -> T) throws(ExitCode) -> T {
        do {
            return try query()
        } catch .noSuchRun(let id) {
            throw fail(code: "noSuchRun", RunQueryError.noSuchRun(id).description, status: .usage)
        } catch {
            throw fail(code: "journal", error.description, status: .unavailable)
        }
    }
}

/// The journal for a run to write to, created when there is none yet.
enum RunJournalFile {
    static func forWriting(options: GlobalOptions) throws(ExitCode) -> SQLiteJournal {
        try options.journal { () throws(RunQueryError) in try RunQueries.forWriting() }
    }
}

/// How runs and frames read, as text and as JSON.
enum RunText {
    static func json(_ run: RunRecord, _ summary: RunSummary) -> JSONValue {
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
    static func json(encoding value: some Encodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value),
              let json = try? JSONDecoder().decode(JSONValue.self, from: data)
        else { return .null }
        return json
    }

    static func table(_ entries: [(RunRecord, RunSummary)]) -> String {
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

    static func header(_ run: RunRecord, _ summary: RunSummary) -> [String] {
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
    static func line(_ frame: FrameRecord, plan: RunPlan) -> String {
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
    static func plan(_ plan: RunPlan) -> String {
        let stop = switch plan.stop {
        case .frames(let count): English.counting(count, "frame")
        case .duration(let length): "for \(milliseconds(length))"
        case .until(let time): "until \(Output.timestamp(UInt64(clamping: time)))"
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

    private static func started(_ run: RunRecord) -> String { Output.timestamp(UInt64(clamping: run.t0UnixMs)) }

    static func lateness(_ micros: Int64) -> String { String(format: "%.3f ms", Double(micros) / 1000) }
}
