public import Intervalometer

/// What the job manager asks of a run, whichever clock times it: the daemon's runs wait on the
/// real monotonic clock, a test's on a clock it moves itself.
///
/// A ``Timelapse`` is generic over its clock; this lets the manager hold runs on a clock it was
/// handed as `any Clock<Duration>` without the clock's type spreading into its own.
protocol JobRun: Actor {
    nonisolated var records: AsyncStream<FrameRecord> { get }
    nonisolated var begun: AsyncStream<RunRecord> { get }
    nonisolated var upcoming: AsyncStream<NextSlotNotice> { get }
    var nextSlotNotice: NextSlotNotice { get }
    func start(cameraName: String, startDelay: Duration) async throws(TimelapseError) -> RunEnding
    func start(cameraName: String, atUnixMs unixMs: Int64) async throws(TimelapseError) -> RunEnding
    func resume(_ record: RunRecord) async throws(TimelapseError) -> RunEnding
    func stop(reason: String)
    func suspend(reason: String)
    func stopAfterCurrentFrame()
    func shootExtraFrame()
    func pauseSchedule()
    func continueSchedule()
}

extension Timelapse: JobRun {}
