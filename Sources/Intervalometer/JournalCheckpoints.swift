import Dispatch
import Foundation
import GRDB
import Synchronization

/// Copies the journal's write-ahead log back into the database file on a connection and a
/// queue of its own, away from the run.
///
/// Left to SQLite, the checkpoint runs inside whichever commit takes the log past 1000 pages,
/// and its disk syncs made that one frame's append take over 100 ms: a run's next slot went out
/// late. The writer's automatic checkpoint is turned off instead, and every
/// ``checkpointInterval`` writes a passive checkpoint runs here, which never blocks the writer.
/// SQLite still checkpoints when the last connection closes.
final class JournalCheckpoints: Sendable {
    /// Writes between two checkpoints: a few pages each, so the log stays far below the
    /// 1000 pages at which SQLite would have checkpointed.
    static let checkpointInterval = 64

    private let path: String
    private let queue = DispatchQueue(label: "unleashed.journal.checkpoint", qos: .utility)
    private let writesSince = Mutex(0)
    /// The checkpointing connection, opened on first use and only touched on `queue`.
    private let connection = Mutex<DatabaseQueue?>(nil)

    init(path: String) {
        self.path = path
    }

    /// Counts a committed write, and starts a checkpoint when enough have come since the last.
    func wrote() {
        let due = writesSince.withLock { count in
            count += 1
            guard count >= Self.checkpointInterval else { return false }
            count = 0
            return true
        }
        guard due else { return }
        queue.async { [self] in checkpoint() }
    }

    /// A checkpoint now, on the caller's thread (after any that is under way): for the end of a
    /// run, so that the main file holds the whole run, and a copy of it (a backup, a file sent
    /// by mail) lists the run without its `-wal` file beside it.
    func now() {
        writesSince.withLock { $0 = 0 }
        queue.sync { checkpoint() }
    }

    /// A passive checkpoint: as much of the log as no reader still needs. A failure is left for
    /// the next one (or SQLite's own at close): the frames are safe in the log meanwhile.
    private func checkpoint() {
        let database = connection.withLock { connection -> DatabaseQueue? in
            // A journal whose file is gone (a removed directory) is not created again here.
            if connection == nil, FileManager.default.fileExists(atPath: path) { connection = try? DatabaseQueue(path: path) }
            return connection
        }
        _ = try? database?.writeWithoutTransaction { try $0.checkpoint(.passive) }
    }
}
