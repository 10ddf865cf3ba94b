/// Why the run journal could not do what was asked. Every message names the file, because the
/// journal's place depends on the environment and a user has to find it to fix anything.
public enum JournalError: Error, CustomStringConvertible, Hashable, Sendable {
    /// The file or its directory could not be created, opened or read.
    case cannotOpen(path: String, reason: String)
    /// The file is not an SQLite database, or it is damaged.
    case corrupt(path: String, reason: String)
    /// An SQLite database made by something else; it is left untouched.
    case notAJournal(path: String)
    /// A journal whose schema a newer version of unleashed wrote.
    case newerVersion(path: String)
    /// No run has this id.
    case runNotFound(path: String, run: Int64)
    /// The frame number and part are already recorded for the run: a resumed run must continue
    /// with new numbers, never overwrite what was recorded.
    case duplicateFrame(path: String, run: Int64, frame: Int, part: Int, camera: String?)
    /// Any other failure to read or write (disk full, locked for too long).
    case storage(path: String, reason: String)
    /// A process that is still alive runs the run: a second one must not shoot it too.
    case runOwned(path: String, run: Int64, owner: RunOwner)

    /// The journal file the error is about.
    public var path: String {
        switch self {
        case .cannotOpen(let path, _), .corrupt(let path, _), .notAJournal(let path), .newerVersion(let path),
             .runNotFound(let path, _), .duplicateFrame(let path, _, _, _, _), .storage(let path, _),
             .runOwned(let path, _, _):
            path
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open the run journal \(path): \(reason)"
        case .corrupt(let path, let reason):
            "the run journal \(path) is damaged or not an SQLite database (\(reason)); move it aside to start a new one"
        case .notAJournal(let path):
            "\(path) is an SQLite database but not an unleashed run journal; it was left untouched"
        case .newerVersion(let path):
            "the run journal \(path) was written by a newer version of unleashed; update unleashed to use it"
        case .runNotFound(let path, let run):
            "there is no run \(run) in the run journal \(path)"
        case .duplicateFrame(let path, let run, let frame, let part, let camera):
            "frame \(frame) part \(part)\(camera.map { " of camera \($0)" } ?? "") of run \(run) is already in the run journal \(path); "
                + "a run never records a frame number twice"
        case .storage(let path, let reason):
            "the run journal \(path) could not be read or written: \(reason)"
        case .runOwned(let path, let run, let owner):
            "run \(run) of the run journal \(path) is being run by \(owner); stop it there first "
                + "(a daemon's job: `unleashed stop \(run)`), or resume it once that process has ended"
        }
    }
}
