import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import Intervalometer
import UnleashedApp
import UnleashedKit

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
            commandName: "list",
            abstract: "List every run, newest first, with its frames taken, failed and skipped.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        func run() async throws {
            let journal = try options.journal { () throws(RunQueryError) in try RunQueries() }
            let entries = try options.journal { () throws(RunQueryError) in try journal.runsWithSummaries() }
            options.emit(.array(entries.map { RunReport.json($0, $1) })) {
                entries.isEmpty ? "No runs in \(journal.path)" : RunReport.table(entries)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a run's plan and every frame, one line each.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Argument(help: ArgumentHelp("The run, as 'runs list' numbers it.", valueName: "id"))
        var id: Int64

        func run() async throws {
            let (run, frames) = try options.journal { () throws(RunQueryError) in
                let journal = try RunQueries()
                return (try journal.run(id), try journal.frames(of: id))
            }
            options.emit(RunReport.json(run, frames: frames)) { RunReport.text(run, frames: frames) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
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
            guard let output else {
                Output.write(try options.journal { () throws(RunQueryError) in try RunQueries().csv(of: id) })
                return
            }
            try options.journal { () throws(RunQueryError) in try RunQueries().exportCSV(of: id, to: output) }
            options.emit(["run": .integer(id), "output": .string(output)]) { "Wrote run \(id) to \(output)" }
        }
    }
}

extension GlobalOptions {
    /// Asks the run journal, journal errors becoming messages and exit statuses.
    func journal<T>(_ query: () throws(RunQueryError) -> T) throws(ExitCode) -> T {
        do {
            return try query()
        } catch {
            throw fail(code: error.code, error.description, status: error.exitStatus)
        }
    }
}

/// The journal for a run to write to, created when there is none yet.
enum RunJournalFile {
    static func forWriting(options: GlobalOptions) throws(ExitCode) -> SQLiteJournal {
        try options.journal { () throws(RunQueryError) in try RunQueries.forWriting() }
    }
}
