public import Intervalometer

/// Where a job stands, as clients see it. The journal knows only running, finished and failed;
/// the rest is what the daemon knows about a run it holds.
public enum JobState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Journalled, waiting for its start delay to pass.
    case waiting
    case running
    /// Held by a client; slots wait until it continues.
    case paused
    case finished
    case failed
    /// Left running in the journal without being finished (the daemon stopped, or a run found
    /// interrupted whose camera is not here): the daemon resumes it on its original schedule
    /// when it starts again holding its cameras, and a client may resume it (``API/resumeJob``).
    case suspended

    /// Whether the job still holds its cameras and has slots to come: waiting, running or
    /// paused. The one place the live states are named.
    public var isLive: Bool { [.waiting, .running, .paused].contains(self) }

    /// The state of a run that has ended, from how it ended.
    public init(ended state: RunState) {
        switch state {
        case .running: self = .suspended
        case .finished: self = .finished
        case .failed: self = .failed
        }
    }
}

/// What a job shoots, for listings: a time-lapse takes pictures, a video job records clips.
public enum JobKind: String, Codable, Sendable, Hashable {
    case timelapse
    case video

    public init(_ plan: RunPlan) {
        if case .video = plan.exposure { self = .video } else { self = .timelapse }
    }
}
