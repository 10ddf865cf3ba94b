import Synchronization
import UnleashedKit

/// A run's frame records, written to its journal in order on a thread of their own.
///
/// A journal write is synced to disk, and a disk's sync now and then takes tens or hundreds of
/// milliseconds (an SD card, a busy ext4 journal). Written on the run's own thread, one such
/// sync made the next slot that late. Here the run hands the record over and goes on; the
/// record is on disk a moment later, and the run waits for every record before it ends.
/// A write that fails stops the writes after it (they would be out of order) and is reported
/// by the run's next record or its end.
final class JournalWrites: Sendable {
    private let journal: any RunJournal
    private let thread = ExecutorThread(name: "run journal")
    private let failure = Mutex<String?>(nil)

    init(journal: any RunJournal) {
        self.journal = journal
    }

    /// Queues `entry`; throws the failure of an earlier write instead.
    func append(_ entry: FrameRecord, to run: Int64) throws(TimelapseError) {
        try throwFailure()
        thread.submit { [self] in
            guard failure.withLock({ $0 == nil }) else { return }
            do {
                try journal.append(entry, to: run)
            } catch {
                failure.withLock { $0 = String(describing: error) }
            }
        }
    }

    /// Returns once every record queued so far is written; throws the first failure.
    func drain() async throws(TimelapseError) {
        await withCheckedContinuation { continuation in
            thread.submit { continuation.resume() }
        }
        try throwFailure()
    }

    private func throwFailure() throws(TimelapseError) {
        if let failure = failure.withLock({ $0 }) { throw .journal(failure) }
    }
}
