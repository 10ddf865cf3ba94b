public import DaemonClient
import Foundation
public import Intervalometer
import Synchronization
public import UnleashedAPI
import UnleashedKit

/// A run shot by the daemon as a job, followed from its event stream: the same controls, display
/// and last line as a run in this process. A job this command started (`owned`) is stopped,
/// given extra frames and paused through the daemon; a job only attached to is left running,
/// and stopping it merely stops following (``RunOutcome/stoppedFollowing(jobID:)``).
public final class JobRun: RunController {
    /// The daemon's document of the job as it was submitted or found.
    public let job: JobDocument
    public let records: AsyncStream<FrameRecord>
    private let client: DaemonClient
    private let sink: AsyncStream<FrameRecord>.Continuation
    private let owned: Bool
    private let known: Mutex<RunRecord>
    private let settled = OutcomeLatch()
    private let following = Mutex<Task<Void, Never>?>(nil)

    /// Follows `job` through `client`; `owned` when this command started it.
    public init(_ job: JobDocument, client: DaemonClient, owned: Bool) {
        self.job = job
        self.client = client
        self.owned = owned
        // Before the daemon has placed slot 1 (a start delay), the display estimates t0 itself.
        let t0 = job.t0UnixMs ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
        known = Mutex(RunRecord(id: job.id, plan: job.plan, t0UnixMs: t0, camera: job.camera, state: .running))
        let (records, sink) = AsyncStream.makeStream(of: FrameRecord.self, bufferingPolicy: .bufferingNewest(4096))
        self.records = records
        self.sink = sink
        let task = Task { [weak self] in
            let outcome = await Self.follow(job.id, client: client, sink: sink) { run in self?.known.withLock { $0 = run } }
            self?.finish(outcome)
        }
        following.withLock { $0 = task }
    }

    public func current() async -> RunRecord? { known.withLock { $0 } }

    public func stop(reason: String) async {
        guard owned else {
            // The outcome is settled before the events stop, which would otherwise read as their end.
            finish(.stoppedFollowing(jobID: job.id))
            following.withLock { $0?.cancel() }
            sink.finish()
            return
        }
        _ = try? await client.stopJob(job.id, when: .now)
    }

    public func stopAfterCurrentFrame() async {
        if owned { _ = try? await client.stopJob(job.id, when: .afterFrame) }
    }

    public func shootExtraFrame() async {
        if owned { _ = try? await client.extraFrame(job.id) }
    }

    public func pause() async {
        if owned { _ = try? await client.pauseJob(job.id) }
    }

    public func continueSchedule() async {
        if owned { _ = try? await client.continueJob(job.id) }
    }

    public func outcome() async -> RunOutcome { await settled.wait() }

    /// Relays job `id`'s frames to `sink` until its end, which is the outcome.
    private static func follow(_ id: Int64, client: DaemonClient, sink: AsyncStream<FrameRecord>.Continuation,
                               ended: (RunRecord) -> Void) async -> RunOutcome {
        defer { sink.finish() }
        var outcome: RunOutcome?
        do {
            for try await event in client.jobEvents(id) {
                switch event {
                case .event(.frame(let record, _)):
                    sink.yield(record)
                case .event(.end(let run, let state, let reason, let summary)):
                    ended(run)
                    outcome = .ended(RunEnd(id: id, state: state.rawValue, reason: reason, summary: summary))
                default:
                    continue
                }
            }
        } catch let error as DaemonClientError {
            return outcome ?? .daemon(error)
        } catch {}
        return outcome ?? .unknown("the daemon ended job \(id)'s events without its outcome; `unleashed jobs` shows its state")
    }

    private func finish(_ outcome: RunOutcome) {
        settled.settle(outcome)
    }
}
