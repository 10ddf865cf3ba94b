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
    private let database: any DatabaseWriter
    private let checkpoints: JournalCheckpoints

    /// Written into the file header, so that a database made by something else is recognised
    /// and left alone instead of being migrated into.
    private static let applicationID: Int32 = 0x554E_4C4A // "UNLJ"

    /// How a journal is opened.
    public enum Access: Sendable {
        /// For a run: the file and its directories are created when missing, and migrated.
        case readWrite
        /// For `runs list | show | export`: nothing is created or changed, so that a journal
        /// in a read-only folder, or another user's read through its group, can be read.
        case readOnly
    }

    /// Opens the journal at `path`; with `.readWrite`, creates it and its parent directories
    /// when missing.
    public init(path: String, access: Access = .readWrite) throws(JournalError) {
        self.path = path
        checkpoints = JournalCheckpoints(path: path)
        switch access {
        case .readWrite:
            database = try Self.openPrepared(path: path)
        case .readOnly:
            database = try Self.openForReading(path: path)
            do {
                try Self.checkSchema(database, path: path)
            } catch {
                throw Self.journalError(error, path: path)
            }
        }
    }

    /// Opens the journal for writing and brings its schema up to date. Several processes may
    /// create it at the same moment; one that finds the file locked while another sets it up
    /// (SQLite answers some of those at once, without waiting) tries again for a while.
    private static func openPrepared(path: String) throws(JournalError) -> DatabasePool {
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .cannotOpen(path: path, reason: "cannot create its directory: \(error.localizedDescription)")
        }
        var attempt = 0
        while true {
            do {
                let pool = try openForWriting(path: path)
                try prepareSchema(pool, path: path)
                return pool
            } catch let error as DatabaseError where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && attempt < 100 {
                attempt += 1
                usleep(50_000)
            } catch {
                throw journalError(error, path: path, sidecars: true)
            }
        }
    }

    /// The page cache of each of the journal's connections, in KiB.
    static let cacheKiB = 512

    /// `PRAGMA cache_size` as the writing connection and a reading one have it (for tests).
    func cacheSizes() throws -> (writer: Int, reader: Int) {
        let writer = try database.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
        let reader = try database.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
        return (writer, reader)
    }

    private static func openForWriting(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        // Another process may be writing (a run going on while `runs list` reads): wait for it.
        configuration.busyMode = .timeout(10)
        configuration.label = "unleashed.journal"
        // Each connection of the pool (the writer, and each reader the daemon's followers open)
        // caches up to 2 MiB by default, which a daemon holding a job for days fills and keeps.
        // Appends touch the last pages and reads go through the kernel's page cache anyway.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            // GRDB's WAL setup picks NORMAL, which may lose the last commits on power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Checkpoints run apart from the writer (JournalCheckpoints), not in a run's append.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        }
        return pool
    }

    /// A read-only connection. SQLite reads a journal in WAL mode through its `-wal` and `-shm`
    /// files, which a reader may not be able to create (a read-only folder); a journal without
    /// a `-wal` file holds everything in the main file and is then read as immutable.
    private static func openForReading(path: String) throws(JournalError) -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: path) else {
            throw .cannotOpen(path: path, reason: "there is no such file")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        configuration.label = "unleashed.journal"
        let firstError: any Error
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in _ = try Int.fetchOne(db, sql: "PRAGMA application_id") }
            return queue
        } catch {
            firstError = error
        }
        if !FileManager.default.fileExists(atPath: path + "-wal") {
            do {
                let queue = try DatabaseQueue(path: immutableURI(path), configuration: configuration)
                try queue.read { db in _ = try Int.fetchOne(db, sql: "PRAGMA application_id") }
                return queue
            } catch {}
        }
        throw journalError(firstError, path: path, sidecars: true)
    }

    /// An SQLite URI that opens `path` as a file no one changes (`immutable=1`).
    private static func immutableURI(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// Where the journal lives unless told otherwise: `$UNLEASHED_JOURNAL`, else
    /// `$XDG_STATE_HOME/unleashed/journal.sqlite`, else `~/.local/state/unleashed/journal.sqlite`
    /// (the XDG place for state that should outlive a reboot but is not a document).
    public static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["UNLEASHED_JOURNAL"], !path.isEmpty { return path }
        return unleashedStateDirectory(environment: environment).appendingPathComponent("journal.sqlite").path
    }

    // MARK: RunJournal

    public func begin(plan: RunPlan, t0UnixMs: Int64, cameras: [String]) throws(JournalError) -> RunRecord {
        let planText = try encode(plan)
        let createdAt = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let id = try write { db in
            // `camera` keeps the joined names for display; `runCamera` is what is read back.
            try db.execute(
                sql: "INSERT INTO run (plan, t0UnixMs, camera, state, createdAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [planText, t0UnixMs, cameras.joined(separator: ","), RunState.running.rawValue, createdAt])
            let id = db.lastInsertedRowID
            try Self.insertCameras(cameras, of: id, db)
            try Self.setOwner(.current, of: id, db)
            return id
        }
        return RunRecord(id: id, plan: plan, t0UnixMs: t0UnixMs, cameras: cameras, state: .running)
    }

    private static func insertCameras(_ cameras: [String], of run: Int64, _ db: Database) throws {
        for (position, name) in cameras.enumerated() {
            try db.execute(sql: "INSERT INTO runCamera (run, position, name) VALUES (?, ?, ?)", arguments: [run, position, name])
        }
    }

    /// The cameras of the runs `ids`, in order, by run.
    private static func cameras(of ids: [Int64], _ db: Database) throws -> [Int64: [String]] {
        guard !ids.isEmpty else { return [:] }
        let rows = try Row.fetchAll(db, sql: "SELECT run, name FROM runCamera WHERE run IN (\(ids.map { "\($0)" }.joined(separator: ","))) "
                                        + "ORDER BY run, position")
        return Dictionary(grouping: rows) { $0["run"] as Int64 }.mapValues { $0.map { $0["name"] as String } }
    }

    public func append(_ frame: FrameRecord, to run: Int64) throws(JournalError) {
        do {
            try database.write { db in
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
        // A run's end is where its frames are copied into the main file (as far as no reader
        // still holds an older view): a process that exits next closes nothing, and its log
        // would otherwise hold the whole run.
        checkpoints.now()
    }

    public func claim(run: Int64) throws(JournalError) {
        let owner = try write { db -> RunOwner? in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM run WHERE id = ?", arguments: [run]) != nil else {
                throw JournalError.runNotFound(path: path, run: run)
            }
            if let owner = try Self.owner(of: run, db), owner != .current, owner.isAlive { return owner }
            try Self.setOwner(.current, of: run, db)
            return nil
        }
        if let owner { throw .runOwned(path: path, run: run, owner: owner) }
    }

    public func release(run: Int64) {
        let me = RunOwner.current
        _ = try? write { db in
            try db.execute(sql: "DELETE FROM owner WHERE run = ? AND pid = ? AND bootID = ? AND startTicks = ?",
                           arguments: [run, me.pid, me.bootID, me.startTicks])
        }
    }

    /// The process that owns `run`, when one that is still alive does.
    public func liveOwner(of run: Int64) throws(JournalError) -> RunOwner? {
        let owner = try read { db in try Self.owner(of: run, db) }
        return owner?.isAlive == true ? owner : nil
    }

    /// The owner recorded for `run`, alive or not.
    private static func owner(of run: Int64, _ db: Database) throws -> RunOwner? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM owner WHERE run = ?", arguments: [run]) else { return nil }
        return RunOwner(pid: row["pid"], bootID: row["bootID"], startTicks: row["startTicks"], program: row["program"])
    }

    private static func setOwner(_ owner: RunOwner, of run: Int64, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO owner (run, pid, bootID, startTicks, program, since) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [run, owner.pid, owner.bootID, owner.startTicks, owner.program,
                        Int64((Date().timeIntervalSince1970 * 1000).rounded())])
    }

    public func recoveryFiles(of run: Int64) -> [String] {
        JournalRecovery.files(journalPath: path, run: run)
    }

    public func run(_ id: Int64) throws(JournalError) -> RunRecord? {
        let (row, cameras) = try read { db in
            (try Row.fetchOne(db, sql: "SELECT * FROM run WHERE id = ?", arguments: [id]), try Self.cameras(of: [id], db))
        }
        return try row.map { row throws(JournalError) in try runRecord(row, cameras: cameras[id]) }
    }

    public func runs() throws(JournalError) -> [RunRecord] {
        let (rows, cameras) = try read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM run ORDER BY id DESC")
            return (rows, try Self.cameras(of: rows.map { $0["id"] }, db))
        }
        var records: [RunRecord] = []
        for row in rows { records.append(try runRecord(row, cameras: cameras[row["id"]])) }
        return records
    }

    /// A run's frames in the order they were recorded; throws ``JournalError/runNotFound(path:run:)``
    /// for a run that does not exist, so that a wrong id is not mistaken for an empty run.
    public func frames(of run: Int64) throws(JournalError) -> [FrameRecord] {
        try frames(of: run, sql: "SELECT * FROM frame WHERE run = ? ORDER BY id")
    }

    /// Up to `limit` of the run's frames in recorded order, after `position`: each page is a
    /// read of its own, so that a reader that takes its time (a phone downloading a run of
    /// days) never holds a read open while the run appends.
    public func framePage(of run: Int64, after position: Int64?, limit: Int) throws(JournalError) -> FramePage {
        let limit = max(limit, 1)
        let rows = try frameRows(of: run, sql: "SELECT * FROM frame WHERE run = ? AND id > ? ORDER BY id LIMIT ?",
                                 arguments: [run, position ?? 0, limit])
        var records: [FrameRecord] = []
        for row in rows { records.append(try frameRecord(row)) }
        return FramePage(frames: records, next: rows.count == limit ? rows.last?["id"] : nil)
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
        FrameRecord.csvHeaderLine + (try frames(of: run)).map(\.csvLine).joined()
    }

    // MARK: Schema

    /// The columns of a frame as migration v1 made them, which v2 rebuilds with a camera: both
    /// are history, so this never changes (a new column is a new migration).
    private static func frameColumnsOfV1(_ table: TableDefinition) {
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
    }

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
                frameColumnsOfV1(table)
                table.uniqueKey(["run", "frame", "part"])
            }
        }
        // A rig records one frame per camera and slot, with the slot's spread: the unique key
        // gains the camera ('' in a run of one camera), so the table is rebuilt.
        migrator.registerMigration("v2-rig-frames") { db in
            try db.create(table: "rigFrame") { table in
                frameColumnsOfV1(table)
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
        // Which process runs a run (RunOwner): a second process refuses to resume it.
        migrator.registerMigration("v4-owner") { db in
            try db.create(table: "owner") { table in
                table.primaryKey("run", .integer).references("run", onDelete: .cascade)
                table.column("pid", .integer).notNull()
                table.column("bootID", .text).notNull()
                table.column("startTicks", .integer).notNull()
                table.column("program", .text).notNull()
                table.column("since", .integer).notNull()
            }
        }
        // A run's cameras as a list, one row each in firing order, so that a name with a comma
        // reads back whole; `run.camera` keeps the joined names. Runs from before are split on
        // their commas, except one whose frames were all recorded without a camera's name: that
        // run had one camera, commas or not.
        migrator.registerMigration("v5-run-cameras") { db in
            try db.create(table: "runCamera") { table in
                table.column("run", .integer).notNull().references("run", onDelete: .cascade)
                table.column("position", .integer).notNull()
                table.column("name", .text).notNull()
                table.primaryKey(["run", "position"])
            }
            let runs = try Row.fetchAll(db, sql: """
                SELECT id, camera,
                       EXISTS (SELECT 1 FROM frame WHERE frame.run = run.id) AS shot,
                       EXISTS (SELECT 1 FROM frame WHERE frame.run = run.id AND frame.camera <> '') AS named
                FROM run
                """)
            for run in runs {
                let joined: String = run["camera"]
                let oneCamera = run["shot"] as Bool && !(run["named"] as Bool)
                let names = oneCamera ? [joined] : joined.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                try insertCameras(names, of: run["id"], db)
            }
        }
        return migrator
    }

    /// Refuses databases that are not journals, and files written by a newer version whose
    /// schema this one does not know, before migrating a new or older journal.
    private static func prepareSchema(_ database: DatabasePool, path: String) throws {
        let migrator = Self.migrator
        try checkSchema(database, path: path)
        // Several processes may create the journal at the same moment: one that loses the race
        // to a migration fails it ("table already exists") while the winner is still at work,
        // and takes up after the winner's migrations, whose own transactions then are done.
        var attempt = 0
        while true {
            do {
                try migrator.migrate(database)
                return
            } catch {
                if (try? database.read(migrator.hasCompletedMigrations)) == true { return }
                attempt += 1
                guard attempt < 20 else { throw error }
                usleep(50_000)
            }
        }
    }

    /// Tables a journal may hold before its first migration is committed: a journal that
    /// another process is creating, or one whose creation was cut off, is finished, not refused.
    private static let bookkeepingTables: Set<String> = ["grdb_migrations", "sqlite_sequence"]

    /// Throws ``JournalError`` for a database that is not a journal, and SQLite's own errors
    /// as they are (a busy file is tried again by the caller).
    private static func checkSchema(_ database: any DatabaseReader, path: String) throws {
        let migrator = Self.migrator
        let verdict: (ours: Bool, superseded: Bool) = try database.read { db in
            let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            let started = applicationID == Self.applicationID
            let ours = started || (applicationID == 0 && Set(tables).isSubset(of: Self.bookkeepingTables))
            return (ours, started ? try migrator.hasBeenSuperseded(db) : false)
        }
        guard verdict.ours else { throw JournalError.notAJournal(path: path) }
        guard !verdict.superseded else { throw JournalError.newerVersion(path: path) }
    }

    // MARK: Rows

    private func frames(of run: Int64, sql: String) throws(JournalError) -> [FrameRecord] {
        var records: [FrameRecord] = []
        for row in try frameRows(of: run, sql: sql, arguments: [run]) { records.append(try frameRecord(row)) }
        return records
    }

    /// The rows `sql` selects, in one read that first checks that the run exists: a wrong id
    /// throws ``JournalError/runNotFound(path:run:)`` rather than reading as an empty run.
    private func frameRows(of run: Int64, sql: String, arguments: StatementArguments) throws(JournalError) -> [Row] {
        let rows = try read { db -> [Row]? in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM run WHERE id = ?", arguments: [run]) != nil else {
                return nil
            }
            return try Row.fetchAll(db, sql: sql, arguments: arguments)
        }
        guard let rows else { throw .runNotFound(path: path, run: run) }
        return rows
    }

    /// A run from its row and its `runCamera` rows (none for a row written without them).
    private func runRecord(_ row: Row, cameras: [String]?) throws(JournalError) -> RunRecord {
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
        return RunRecord(id: id, plan: plan, t0UnixMs: row["t0UnixMs"], cameras: cameras ?? [row["camera"]], state: state,
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
            return try database.read(body)
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    @discardableResult
    private func write<T>(_ body: (Database) throws -> T) throws(JournalError) -> T {
        do {
            let result = try database.write(body)
            checkpoints.wrote()
            return result
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    private static func journalError(_ error: any Error, path: String, sidecars: Bool = false) -> JournalError {
        if let error = error as? JournalError { return error }
        guard let error = error as? DatabaseError else {
            return .storage(path: path, reason: "\(error)")
        }
        var reason = error.message ?? "SQLite error \(error.extendedResultCode.rawValue)"
        if [.SQLITE_IOERR, .SQLITE_FULL].contains(error.resultCode), diskIsFull(holding: path) {
            // SQLite reports a WAL that cannot grow as an I/O error: say what a person can fix.
            reason += "; the disk holding it is full"
        }
        let refused: [ResultCode] = [.SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM]
        if sidecars || refused.contains(error.resultCode), let sidecar = unwritableSidecar(of: path) {
            // A `-shm` or `-wal` file left by another user (often root) that this user cannot write.
            reason += "; \(sidecar) belongs to another user and cannot be written: remove it while no run uses the journal"
        }
        return switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT: .corrupt(path: path, reason: reason)
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH, .SQLITE_READONLY: .cannotOpen(path: path, reason: reason)
        default: .storage(path: path, reason: reason)
        }
    }

    /// Whether the file system of the journal's folder has no block left for this user.
    private static func diskIsFull(holding path: String) -> Bool {
        var stats = statvfs()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return statvfs(folder, &stats) == 0 && stats.f_bavail == 0
    }

    /// The journal's `-shm` or `-wal` file when it exists and this process cannot write it.
    private static func unwritableSidecar(of path: String) -> String? {
        for suffix in ["-shm", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            if access(path + suffix, W_OK) != 0 { return path + suffix }
        }
        return nil
    }
}
