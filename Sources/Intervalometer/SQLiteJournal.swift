import Foundation
import GRDB
import UnleashedKit

/// The run journal in an SQLite file: what lets a time-lapse survive a crash or a power cut and
/// what `unleashed runs` reads afterwards.
///
/// The file is in WAL mode, so the engine can append while another process (`runs list`) reads,
/// and every write is synced (`synchronous=FULL`): ``append(_:to:)`` returns only once the frame
/// would survive a power cut.
public final class SQLiteJournal: RunJournal {
    /// The file the journal lives in, as given; errors name it.
    public let path: String
    private let pool: DatabasePool
    private let checkpoints: JournalCheckpoints

    /// Written into the file header, so that a database made by something else is recognised
    /// and left alone instead of being migrated into.
    private static let applicationID: Int32 = 0x554E_4C4A // "UNLJ"

    /// Opens the journal at `path`, creating it and its parent directories when missing.
    public init(path: String) throws(JournalError) {
        self.path = path
        checkpoints = JournalCheckpoints(path: path)
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .cannotOpen(path: path, reason: "cannot create its directory: \(error.localizedDescription)")
        }
        var configuration = Configuration()
        // Another process may be writing (a run going on while `runs list` reads): wait for it.
        configuration.busyMode = .timeout(10)
        configuration.label = "unleashed.journal"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.writeWithoutTransaction { db in
                // GRDB's WAL setup picks NORMAL, which may lose the last commits on power loss.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // Checkpoints run apart from the writer (JournalCheckpoints), not in a run's append.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
        } catch {
            throw Self.journalError(error, path: path)
        }
        try prepareSchema()
    }

    /// Where the journal lives unless told otherwise: `$UNLEASHED_JOURNAL`, else
    /// `$XDG_STATE_HOME/unleashed/journal.sqlite`, else `~/.local/state/unleashed/journal.sqlite`
    /// (the XDG place for state that should outlive a reboot but is not a document).
    public static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["UNLEASHED_JOURNAL"], !path.isEmpty { return path }
        return unleashedStateDirectory(environment: environment).appendingPathComponent("journal.sqlite").path
    }

    // MARK: RunJournal

    public func begin(plan: RunPlan, t0UnixMs: Int64, camera: String) throws(JournalError) -> RunRecord {
        let planText = try encode(plan)
        let createdAt = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let id = try write { db in
            try db.execute(
                sql: "INSERT INTO run (plan, t0UnixMs, camera, state, createdAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [planText, t0UnixMs, camera, RunState.running.rawValue, createdAt])
            return db.lastInsertedRowID
        }
        return RunRecord(id: id, plan: plan, t0UnixMs: t0UnixMs, camera: camera, state: .running)
    }

    public func append(_ frame: FrameRecord, to run: Int64) throws(JournalError) {
        do {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO frame (run, frame, part, scheduledMs, sentMs, completedMs, latenessMicros,
                                           outcome, error, exposure, meteredEV, shotCounter, camera,
                                           commandSpreadMicros, completionSpreadMicros,
                                           rampTargetEV, rampSceneEV, rampResidualEV, rampRate, intervalMs)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [run, frame.frame, frame.part, frame.scheduledMs, frame.sentMs, frame.completedMs,
                                frame.latenessMicros, frame.outcome.rawValue, frame.error, frame.exposure,
                                frame.meteredEV, frame.shotCounter, frame.camera ?? "", frame.commandSpreadMicros,
                                frame.completionSpreadMicros, frame.ramp?.targetEV, frame.ramp?.sceneEV,
                                frame.ramp?.residualEV, frame.ramp?.rate, frame.ramp?.intervalMs])
            }
            checkpoints.wrote()
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw .duplicateFrame(path: path, run: run, frame: frame.frame, part: frame.part, camera: frame.camera)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
            throw .runNotFound(path: path, run: run)
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    public func finish(run: Int64, state: RunState, reason: String) throws(JournalError) {
        let changed = try write { db in
            try db.execute(sql: "UPDATE run SET state = ?, endReason = ? WHERE id = ?",
                           arguments: [state.rawValue, reason, run])
            return db.changesCount
        }
        if changed == 0 { throw .runNotFound(path: path, run: run) }
    }

    public func run(_ id: Int64) throws(JournalError) -> RunRecord? {
        let row = try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM run WHERE id = ?", arguments: [id])
        }
        return try row.map(runRecord)
    }

    public func runs() throws(JournalError) -> [RunRecord] {
        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT * FROM run ORDER BY id DESC") }
        var records: [RunRecord] = []
        for row in rows { records.append(try runRecord(row)) }
        return records
    }

    /// A run's frames in the order they were recorded; throws ``JournalError/runNotFound(path:run:)``
    /// for a run that does not exist, so that a wrong id is not mistaken for an empty run.
    public func frames(of run: Int64) throws(JournalError) -> [FrameRecord] {
        try frames(of: run, sql: "SELECT * FROM frame WHERE run = ? ORDER BY id")
    }

    // MARK: Reading back

    /// The frame with the highest number (and part): the slot a resumed run continues after.
    /// Nil when the run has no frames yet.
    public func lastFrame(of run: Int64) throws(JournalError) -> FrameRecord? {
        try frames(of: run, sql: "SELECT * FROM frame WHERE run = ? ORDER BY frame DESC, part DESC LIMIT 1").first
    }

    /// Counts and timing of a run, for `runs list` and for judging how well a run kept time.
    public func summary(of run: Int64) throws(JournalError) -> RunSummary {
        RunSummary(frames: try frames(of: run))
    }

    /// The run's frames as CSV (RFC 4180: CRLF line ends, fields with commas, quotes or line
    /// breaks quoted), one row per record under ``FrameRecord/csvHeader``, for spreadsheets and
    /// scripts.
    public func csv(of run: Int64) throws(JournalError) -> String {
        let rows = [FrameRecord.csvHeader] + (try frames(of: run)).map(\.csvFields)
        return rows.map { $0.map(CSV.field).joined(separator: ",") + "\r\n" }.joined()
    }

    // MARK: Schema

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.create(table: "run") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("plan", .text).notNull()
                table.column("t0UnixMs", .integer).notNull()
                table.column("camera", .text).notNull()
                table.column("state", .text).notNull()
                table.column("endReason", .text)
                table.column("createdAt", .integer).notNull()
            }
            try db.create(table: "frame") { table in
                // Its own key keeps the order frames were recorded in.
                table.autoIncrementedPrimaryKey("id")
                table.column("run", .integer).notNull().indexed().references("run", onDelete: .cascade)
                table.column("frame", .integer).notNull()
                table.column("part", .integer).notNull()
                table.column("scheduledMs", .integer).notNull()
                table.column("sentMs", .integer)
                table.column("completedMs", .integer)
                table.column("latenessMicros", .integer)
                table.column("outcome", .text).notNull()
                table.column("error", .text)
                table.column("exposure", .text)
                table.column("meteredEV", .text)
                table.column("shotCounter", .integer)
                table.uniqueKey(["run", "frame", "part"])
            }
        }
        // A rig records one frame per camera and slot, with the slot's spread: the unique key
        // gains the camera ('' in a run of one camera), so the table is rebuilt.
        migrator.registerMigration("v2-rig-frames") { db in
            try db.create(table: "rigFrame") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("run", .integer).notNull().indexed().references("run", onDelete: .cascade)
                table.column("frame", .integer).notNull()
                table.column("part", .integer).notNull()
                table.column("scheduledMs", .integer).notNull()
                table.column("sentMs", .integer)
                table.column("completedMs", .integer)
                table.column("latenessMicros", .integer)
                table.column("outcome", .text).notNull()
                table.column("error", .text)
                table.column("exposure", .text)
                table.column("meteredEV", .text)
                table.column("shotCounter", .integer)
                table.column("camera", .text).notNull().defaults(to: "")
                table.column("commandSpreadMicros", .integer)
                table.column("completionSpreadMicros", .integer)
                table.uniqueKey(["run", "frame", "part", "camera"])
            }
            let columns = "id, run, frame, part, scheduledMs, sentMs, completedMs, latenessMicros, outcome, error, "
                + "exposure, meteredEV, shotCounter"
            try db.execute(sql: "INSERT INTO rigFrame (\(columns)) SELECT \(columns) FROM frame")
            try db.drop(table: "frame")
            try db.rename(table: "rigFrame", to: "frame")
        }
        // What an exposure ramp decided for each picture.
        migrator.registerMigration("v3-ramp") { db in
            try db.alter(table: "frame") { table in
                table.add(column: "rampTargetEV", .double)
                table.add(column: "rampSceneEV", .double)
                table.add(column: "rampResidualEV", .double)
                table.add(column: "rampRate", .double)
                table.add(column: "intervalMs", .integer)
            }
        }
        return migrator
    }

    /// Refuses databases that are not journals, and files written by a newer version whose
    /// schema this one does not know, before migrating a new or older journal.
    private func prepareSchema() throws(JournalError) {
        let migrator = Self.migrator
        let (ours, superseded) = try read { db in
            let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let tables = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'") ?? 0
            let ours = applicationID == Self.applicationID || (applicationID == 0 && tables == 0)
            return (ours, ours && tables > 0 ? try migrator.hasBeenSuperseded(db) : false)
        }
        guard ours else { throw .notAJournal(path: path) }
        guard !superseded else { throw .newerVersion(path: path) }
        do {
            try migrator.migrate(pool)
        } catch {
            // Another process creating the journal at the same moment may have won the race to
            // migrate it; then there is nothing left to do.
            if (try? pool.read(migrator.hasCompletedMigrations)) == true { return }
            throw Self.journalError(error, path: path)
        }
    }

    // MARK: Rows

    private func frames(of run: Int64, sql: String) throws(JournalError) -> [FrameRecord] {
        let rows = try read { db -> [Row]? in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM run WHERE id = ?", arguments: [run]) != nil else {
                return nil
            }
            return try Row.fetchAll(db, sql: sql, arguments: [run])
        }
        guard let rows else { throw .runNotFound(path: path, run: run) }
        var records: [FrameRecord] = []
        for row in rows { records.append(try frameRecord(row)) }
        return records
    }

    private func runRecord(_ row: Row) throws(JournalError) -> RunRecord {
        let id: Int64 = row["id"]
        let stateText: String = row["state"]
        guard let state = RunState(rawValue: stateText) else {
            throw .corrupt(path: path, reason: "run \(id) has an unknown state '\(stateText)'")
        }
        let plan: RunPlan
        do {
            plan = try JSONDecoder().decode(RunPlan.self, from: Data((row["plan"] as String).utf8))
        } catch {
            throw .corrupt(path: path, reason: "run \(id) has a plan that cannot be read (\(error))")
        }
        return RunRecord(id: id, plan: plan, t0UnixMs: row["t0UnixMs"], camera: row["camera"], state: state,
                         endReason: row["endReason"])
    }

    private func frameRecord(_ row: Row) throws(JournalError) -> FrameRecord {
        let outcomeText: String = row["outcome"]
        guard let outcome = FrameOutcome(rawValue: outcomeText) else {
            throw .corrupt(path: path, reason: "frame \(row["frame"] as Int) of run \(row["run"] as Int64) "
                + "has an unknown outcome '\(outcomeText)'")
        }
        return FrameRecord(frame: row["frame"], part: row["part"], scheduledMs: row["scheduledMs"],
                           sentMs: row["sentMs"], completedMs: row["completedMs"],
                           latenessMicros: row["latenessMicros"], outcome: outcome, error: row["error"],
                           exposure: row["exposure"], meteredEV: row["meteredEV"], shotCounter: row["shotCounter"],
                           camera: (row["camera"] as String?).flatMap { $0.isEmpty ? nil : $0 },
                           commandSpreadMicros: row["commandSpreadMicros"], completionSpreadMicros: row["completionSpreadMicros"],
                           ramp: Self.rampRecord(row))
    }

    private static func rampRecord(_ row: Row) -> RampRecord? {
        guard let target: Double = row["rampTargetEV"], let scene: Double = row["rampSceneEV"],
              let residual: Double = row["rampResidualEV"], let rate: Double = row["rampRate"],
              let interval: Int64 = row["intervalMs"] else { return nil }
        return RampRecord(targetEV: target, sceneEV: scene, residualEV: residual, rate: rate, intervalMs: interval)
    }

    private func encode(_ plan: RunPlan) throws(JournalError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(plan), as: UTF8.self)
        } catch {
            throw .storage(path: path, reason: "the plan cannot be stored (\(error))")
        }
    }

    // MARK: Access

    private func read<T>(_ body: (Database) throws -> T) throws(JournalError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    @discardableResult
    private func write<T>(_ body: (Database) throws -> T) throws(JournalError) -> T {
        do {
            let result = try pool.write(body)
            checkpoints.wrote()
            return result
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    private static func journalError(_ error: any Error, path: String) -> JournalError {
        if let error = error as? JournalError { return error }
        guard let error = error as? DatabaseError else {
            return .storage(path: path, reason: "\(error)")
        }
        let reason = error.message ?? "SQLite error \(error.extendedResultCode.rawValue)"
        return switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT: .corrupt(path: path, reason: reason)
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH: .cannotOpen(path: path, reason: reason)
        default: .storage(path: path, reason: reason)
        }
    }
}
