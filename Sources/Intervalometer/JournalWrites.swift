import Synchronization
import UnleashedKit

/// A run's frame records, written to its journal in order on a thread of their own.
///
/// A journal write is synced to disk, and a disk's sync now and then takes tens or hundreds of
/// milliseconds (an SD card, a busy ext4 journal). Written on the run's own thread, one such
/// sync made the next slot that late. Here the run hands the record over and goes on; the
/// record is on disk a moment later, and the run waits for every record before it ends.
///
/// A write that fails (a full disk, an I/O error) does not stop the run: the record and the
/// ones after it wait here, in order, and are written when the journal takes them again (tried
/// with every new record and every ``retryInterval``). At most ``backlogLimit`` wait; what is
/// still unwritten when the run ends is handed back for a recovery file.
final class JournalWrites: Sendable {
    /// How many records may wait for the journal: at a 1 s interval, almost three hours of
    /// frames, and a few megabytes of memory.
    static let backlogLimit = 10_000
    static let retryInterval = Duration.seconds(1)

    private struct State {
        var pending: [(record: FrameRecord, run: Int64)] = []
        /// Index of the first record in `pending` not yet written.
        var head = 0
        /// Records before this index have been handed to `delivered`.
        var announced = 0
        var failure: String?
        var retryScheduled = false

        var count: Int { pending.count - head }
    }

    private let journal: any RunJournal
    private let limit: Int
    private let thread = ExecutorThread(name: "run journal")
    private let state = Mutex(State())
    private let delivered: @Sendable (FrameRecord) -> Void

    /// - Parameter delivered: called on the writer's thread with each record, in order, once
    ///   it is written, or once its write has failed and it waits (for displays: what a person
    ///   or a script sees is on disk, or is said to be waiting).
    init(journal: any RunJournal, limit: Int = JournalWrites.backlogLimit, delivered: @escaping @Sendable (FrameRecord) -> Void = { _ in }) {
        self.journal = journal
        self.limit = max(limit, 1)
        self.delivered = delivered
    }

    /// Queues `entry`; returns false when the backlog is at its limit (the run should end: the
    /// record is still queued, and comes back from ``drain(patience:)`` if it cannot be written).
    @discardableResult
    func append(_ entry: FrameRecord, to run: Int64) -> Bool {
        let count = state.withLock { state in
            state.pending.append((entry, run))
            return state.count
        }
        thread.submit { [self] in flush() }
        return count < limit
    }

    /// Waits until every record queued so far is written, trying again for `patience` when the
    /// journal fails; returns the records that could not be written (they are no longer queued)
    /// and the last failure.
    func drain(patience: Duration = .seconds(5)) async -> (unwritten: [FrameRecord], failure: String?) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        while true {
            let left = await thread.perform { [self] in
                flush()
                return state.withLock { $0.count }
            }
            if left == 0 { return ([], nil) }
            if clock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(250))
        }
        return await thread.perform { [self] in
            state.withLock { state in
                let unwritten = state.pending[state.head...].map(\.record)
                let failure = state.failure
                state = State()
                return (unwritten, failure)
            }
        }
    }

    /// Writes the waiting records in order, on the writer thread; stops at the first failure
    /// and tries again later.
    private func flush() {
        while let (record, run) = state.withLock({ $0.count > 0 ? $0.pending[$0.head] : nil }) {
            do {
                try journal.appendUnlessRecorded(record, to: run)
            } catch {
                state.withLock { $0.failure = String(describing: error) }
                // The records that wait are shown all the same, in order.
                let waiting = state.withLock { state -> [FrameRecord] in
                    let from = max(state.announced, state.head)
                    defer { state.announced = state.pending.count }
                    return state.pending[from...].map(\.record)
                }
                for record in waiting { delivered(record) }
                scheduleRetry()
                return
            }
            let announce = state.withLock { state -> Bool in
                defer {
                    state.announced = max(state.announced, state.head + 1)
                    state.head += 1
                    if state.head == state.pending.count {
                        state.pending.removeAll(keepingCapacity: true)
                        state.head = 0
                        state.announced = 0
                        state.failure = nil
                    } else if state.head >= 1024 {
                        state.pending.removeFirst(state.head)
                        state.announced -= state.head
                        state.head = 0
                    }
                }
                return state.head >= state.announced
            }
            if announce { delivered(record) }
        }
    }

    private func scheduleRetry() {
        let first = state.withLock { state in
            defer { state.retryScheduled = true }
            return !state.retryScheduled
        }
        guard first else { return }
        _ = thread.schedule(at: ContinuousClock.now.advanced(by: Self.retryInterval)) { [self] in
            state.withLock { $0.retryScheduled = false }
            flush()
        }
    }
}
