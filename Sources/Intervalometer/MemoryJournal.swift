import Synchronization

/// A journal in memory: for tests, and for runs that are told not to keep one.
public final class MemoryJournal: RunJournal {
    private struct Store {
        var runs: [RunRecord] = []
        var frames: [Int64: [FrameRecord]] = [:]
        var recorded: Set<FrameKey> = []
        var owners: [Int64: RunOwner] = [:]
    }

    private struct FrameKey: Hashable {
        let run: Int64, frame: Int, part: Int, camera: String?
    }

    private let store = Mutex(Store())

    public init() {}

    public func begin(plan: RunPlan, t0UnixMs: Int64, cameras: [String]) throws -> RunRecord {
        store.withLock { store in
            let record = RunRecord(id: Int64(store.runs.count + 1), plan: plan, t0UnixMs: t0UnixMs, cameras: cameras, state: .running)
            store.runs.append(record)
            return record
        }
    }

    public func append(_ frame: FrameRecord, to run: Int64) throws {
        try store.withLock { store in
            let key = FrameKey(run: run, frame: frame.frame, part: frame.part, camera: frame.camera)
            guard store.recorded.insert(key).inserted else {
                throw MemoryJournalError.duplicateFrame(run: run, frame: frame.frame, part: frame.part)
            }
            store.frames[run, default: []].append(frame)
        }
    }

    public func finish(run: Int64, state: RunState, reason: String) throws {
        store.withLock { store in
            guard let index = store.runs.firstIndex(where: { $0.id == run }) else { return }
            store.runs[index].state = state
            store.runs[index].endReason = reason
        }
    }

    public func run(_ id: Int64) throws -> RunRecord? {
        store.withLock { $0.runs.first { $0.id == id } }
    }

    public func runs() throws -> [RunRecord] {
        store.withLock { $0.runs.reversed() }
    }

    public func frames(of run: Int64) throws -> [FrameRecord] {
        store.withLock { $0.frames[run] ?? [] }
    }

    /// Pages by a record's place in the run: position n is the run's n-th record.
    public func framePage(of run: Int64, after position: Int64?, limit: Int) throws -> FramePage {
        let frames = try frames(of: run)
        let start = Int(clamping: max(position ?? 0, 0))
        let end = min(frames.count, start + max(limit, 1))
        guard start < end else { return FramePage(frames: [], next: nil) }
        return FramePage(frames: Array(frames[start..<end]), next: end < frames.count ? Int64(end) : nil)
    }

    public func claim(run: Int64) throws {
        try store.withLock { store in
            if let owner = store.owners[run], owner.isAlive { throw MemoryJournalError.owned(run: run, by: owner) }
            store.owners[run] = .current
        }
    }

    public func release(run: Int64) {
        store.withLock { store in
            if store.owners[run] == .current { store.owners[run] = nil }
        }
    }

    public func liveOwner(of run: Int64) throws -> RunOwner? {
        store.withLock { store in store.owners[run].flatMap { $0.isAlive ? $0 : nil } }
    }

    public func recoveryFiles(of run: Int64) -> [String] { [] }
}

/// Why the memory journal refused a record.
public enum MemoryJournalError: Error, Hashable, Sendable {
    case duplicateFrame(run: Int64, frame: Int, part: Int)
    /// A live process already runs the run.
    case owned(run: Int64, by: RunOwner)
}
