public import Intervalometer
public import Logging

/// The jobs the daemon runs: time-lapse and video runs on the intervalometer engine.
public actor JobManager {
    public init(journal: SQLiteJournal, cameras: CameraRegistry, logger: Logger) {}

    public func resumeInterrupted() async -> [Int64] { [] }

    public func suspendAll() async {}
}
