import CameraKit
public import CommandCore
public import Foundation
public import Intervalometer

/// The run journal as `runs` reads it: a journal that does not exist yet reads as empty instead
/// of being created, and a run that is not there is told apart from a journal that cannot be read.
public struct RunQueries: Sendable {
    /// The journal's file: `$UNLEASHED_JOURNAL`, else the state directory's.
    public let path: String
    /// Nil when there is no journal file yet.
    private let journal: SQLiteJournal?

    /// Opens the journal read-only, if there is one.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(RunQueryError) {
        let path = SQLiteJournal.defaultPath(environment: environment)
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            journal = nil
            return
        }
        journal = try Self.access { () throws(JournalError) in try SQLiteJournal(path: path, access: .readOnly) }
    }

    /// The journal for a run to write to, created when there is none yet.
    public static func forWriting(environment: [String: String] = ProcessInfo.processInfo.environment) throws(RunQueryError) -> SQLiteJournal {
        let path = SQLiteJournal.defaultPath(environment: environment)
        return try access { () throws(JournalError) in try SQLiteJournal(path: path) }
    }

    /// Every run, newest first.
    public func runs() throws(RunQueryError) -> [RunRecord] {
        guard let journal else { return [] }
        return try Self.access { () throws(JournalError) in try journal.runs() }
    }

    /// Every run with its counts, newest first.
    public func runsWithSummaries() throws(RunQueryError) -> [(RunRecord, RunSummary)] {
        var entries: [(RunRecord, RunSummary)] = []
        for run in try runs() { entries.append((run, try summary(of: run.id))) }
        return entries
    }

    public func run(_ id: Int64) throws(RunQueryError) -> RunRecord {
        guard let run = try read(id, { journal throws(JournalError) in try journal.run(id) }) else { throw .noSuchRun(id) }
        return run
    }

    public func frames(of id: Int64) throws(RunQueryError) -> [FrameRecord] {
        try read(id) { journal throws(JournalError) in try journal.frames(of: id) }
    }

    public func summary(of id: Int64) throws(RunQueryError) -> RunSummary {
        try read(id) { journal throws(JournalError) in try journal.summary(of: id) }
    }

    /// The run's frames as CSV (RFC 4180, CRLF).
    public func csv(of id: Int64) throws(RunQueryError) -> String {
        try read(id) { journal throws(JournalError) in try journal.csv(of: id) }
    }

    /// Writes the run's CSV to `path`, whole or not at all (through a file beside it, renamed).
    public func exportCSV(of id: Int64, to path: String) throws(RunQueryError) {
        let text = try csv(of: id)
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .cannotWrite(path: path, reason: (error as NSError).localizedDescription)
        }
    }

    private func read<T>(_ id: Int64, _ body: (SQLiteJournal) throws(JournalError) -> T) throws(RunQueryError) -> T {
        guard let journal else { throw .noSuchRun(id) }
        return try Self.access { () throws(JournalError) in try body(journal) }
    }

    private static func access<T>(_ body: () throws(JournalError) -> T) throws(RunQueryError) -> T {
        do {
            return try body()
        } catch .runNotFound(_, let id) {
            throw .noSuchRun(id)
        } catch {
            throw .journal(error.description)
        }
    }
}

/// Why the journal could not answer.
public enum RunQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No run has this id.
    case noSuchRun(Int64)
    /// The journal cannot be opened or read.
    case journal(String)
    /// What was read could not be written where it was asked to go.
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .noSuchRun(let id): "there is no run \(id); `unleashed runs list` shows them"
        case .journal(let why): why
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        }
    }

    /// The code scripts go by, in `--json`.
    public var code: String {
        switch self {
        case .noSuchRun: "noSuchRun"
        case .journal: "journal"
        case .cannotWrite: "cannotWrite"
        }
    }

    /// How a command exits with it: a run that is not there is the command line's mistake (64),
    /// a journal that cannot be read is unavailable (69), output that cannot be written an I/O
    /// error (74).
    public var exitStatus: ExitStatus {
        switch self {
        case .noSuchRun: .usage
        case .journal: .unavailable
        case .cannotWrite: .ioError
        }
    }
}

extension RunQueries {
    /// The run `id` of `journal` if it can be resumed (``RunJournal/interruptedRun(_:)``),
    /// refused in the words of the command line.
    public static func interruptedRun(_ id: Int64, in journal: SQLiteJournal) throws(ResumeRefusal) -> RunRecord {
        do throws(NotResumable) {
            return try journal.interruptedRun(id)
        } catch {
            switch error {
            case .noSuchRun(let id):
                throw .refused("there is no run \(id); `unleashed runs list` shows them")
            case .ended(let record):
                throw .refused("run \(id) has \(record.state == .finished ? "finished" : "failed") "
                    + "(\(record.endReason ?? "no reason recorded")); only an interrupted run can be resumed")
            case .owned(let run, let owner):
                throw .owned(JournalError.runOwned(path: journal.path, run: run, owner: owner).description)
            case .journal(let why):
                throw .journal(why)
            }
        }
    }
}

/// Why a run cannot be resumed.
public enum ResumeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not there, or not interrupted.
    case refused(String)
    /// A live process shoots it.
    case owned(String)
    /// The journal cannot be read.
    case journal(String)

    public var description: String {
        switch self {
        case .refused(let why), .owned(let why), .journal(let why): why
        }
    }
}
