/// The jobs the daemon runs: time-lapse and video runs on the intervalometer engine.
public actor JobManager {
    public init() {}
}
