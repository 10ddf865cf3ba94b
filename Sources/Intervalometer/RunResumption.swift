/// Why a journalled run cannot be resumed, found before any camera is opened: the one rule that
/// `unleashed timelapse --resume` and the daemon (by itself at start, or asked through its API)
/// go by. Each says it in its own words.
public enum NotResumable: Error, Hashable, Sendable {
    /// No run has this id.
    case noSuchRun(Int64)
    /// The run has ended, finished or failed (its record says why): nothing is left to resume.
    case ended(RunRecord)
    /// A process that is still alive shoots the run: it is not interrupted, only elsewhere.
    case owned(run: Int64, by: RunOwner)
    /// The journal could not be read.
    case journal(String)
}

extension RunJournal {
    /// Run `id`, when it is interrupted: in the journal, `running` there (never ended), and shot
    /// by no live process (the one that began it crashed, lost its power, or suspended it).
    /// ``Timelapse/resume(_:)`` claims the run as it starts, which settles a race between two
    /// processes that both passed this check.
    public func interruptedRun(_ id: Int64) throws(NotResumable) -> RunRecord {
        let found: RunRecord?
        do {
            found = try run(id)
        } catch {
            throw .journal(String(describing: error))
        }
        guard let record = found else { throw .noSuchRun(id) }
        try checkInterrupted(record)
        return record
    }

    /// Throws unless `record`, as read from this journal, is interrupted (``interruptedRun(_:)``).
    public func checkInterrupted(_ record: RunRecord) throws(NotResumable) {
        guard record.state == .running else { throw .ended(record) }
        // An owner that cannot be read blocks nothing here: the claim at the run's start decides.
        if let owner = try? liveOwner(of: record.id) { throw .owned(run: record.id, by: owner) }
    }
}
