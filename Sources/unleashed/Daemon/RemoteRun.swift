import ArgumentParser
import DaemonClient
import Foundation
import Intervalometer
import Synchronization
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol

/// A run handed to the daemon as a job: submitted, then followed with the same display and the
/// same last line as a run in this process. Ctrl-C and SIGTERM stop the job (a bulb is closed
/// first), SIGUSR1 asks for an extra frame and SIGUSR2 stops after the current one, as they do
/// for a run in this process; with `detach` the job id is printed and the command returns.
struct RemoteRun {
    let client: DaemonClient
    let options: GlobalOptions

    /// Submits `plan`; false when the daemon did not answer, so the caller runs it here instead.
    func run(_ plan: RunPlan, delay: Duration, detach: Bool, cameras: [String]? = nil) async throws -> Bool {
        let job: JobDocument
        do {
            job = try await client.startJob(plan, camera: options.module, cameras: cameras, startDelay: delay)
        } catch {
            if error.isUnreachable { return false }
            throw options.fail(error)
        }
        let id = job.id
        if detach {
            options.emit(["job": job.json]) { "Job \(id) started on \(job.camera); `unleashed attach \(id)` follows it" }
            return true
        }
        try await JobFollower(client: client, options: options).follow(job, plan: plan, startDelay: delay, ownsJob: true)
        return true
    }
}

/// Shows a job's frames as they are journalled and its outcome, from the daemon's event stream.
struct JobFollower {
    let client: DaemonClient
    let options: GlobalOptions

    /// Follows `job` (the daemon's document of it) to its end and prints its outcome. When
    /// `ownsJob`, this command started it and the run signals act on the job; otherwise
    /// (attach) Ctrl-C only stops following.
    func follow(_ job: JobDocument, plan: RunPlan, startDelay: Duration, ownsJob: Bool) async throws {
        let id = job.id
        let (records, sink) = AsyncStream.makeStream(of: FrameRecord.self)
        let known = Mutex(Self.run(job, id: id, plan: plan))
        let display = RunDisplay(plan: plan, options: options, startDelay: startDelay) { known.withLock { $0 } }
        let shown = Task { await display.show(records) }
        let stoppedBy = Mutex<ExitStatus?>(nil)
        let client = client
        let stopJob: @Sendable (StopWhen) -> Void = { when in Task { _ = try? await client.stopJob(id, when: when) } }
        let stop: @Sendable (ExitStatus) -> Void = { status in
            let first = stoppedBy.withLock { state in
                defer { state = state ?? status }
                return state == nil
            }
            guard first else { return }
            if ownsJob {
                stopJob(.now)
            } else {
                sink.finish()
            }
        }
        let signals = SignalWatch(ownsJob ? [
            SIGINT: { stop(.interrupted) }, SIGTERM: { stop(.terminated) },
            SIGUSR1: { Task { _ = try? await client.extraFrame(id) } },
            SIGUSR2: { stopJob(.afterFrame) },
        ] : [SIGINT: { stop(.interrupted) }, SIGTERM: { stop(.terminated) }])

        var ending: (state: String, reason: String, summary: RunSummary)?
        var failure: DaemonClientError?
        do {
            for try await event in client.jobEvents(id) {
                guard stoppedBy.withLock({ $0 }) == nil || ownsJob else { break }
                switch event {
                case .event(.frame(let record, _)):
                    sink.yield(record)
                case .event(.end(let run, let state, let reason, let summary)):
                    known.withLock { $0 = run }
                    ending = (state, reason, summary)
                default:
                    continue
                }
            }
        } catch let error as DaemonClientError {
            failure = error
        } catch {
            failure = nil
        }
        sink.finish()
        await shown.value
        display.finish()
        signals.disarm()
        if let ending {
            options.emit(RunExecution.json(id: id, state: ending.state, reason: ending.reason, ending.summary)) {
                RunExecution.text(id: id, state: ending.state, reason: ending.reason, ending.summary)
            }
            if ownsJob, let status = stoppedBy.withLock({ $0 }) { throw ExitCode(status.rawValue) }
            if ending.state == "failed" { throw ExitCode(ExitStatus.unavailable.rawValue) }
            if let status = RunExecution.failureStatus(of: ending.summary) { throw ExitCode(status.rawValue) }
            return
        }
        if !ownsJob, stoppedBy.withLock({ $0 }) != nil {
            Output.note("Stopped following job \(id); it goes on in the daemon (`unleashed stop \(id)` ends it).")
            return
        }
        if let failure { throw options.fail(failure) }
        throw options.fail(code: "daemon", "the daemon ended job \(id)'s events without its outcome; `unleashed jobs` shows its state",
                           status: .unavailable)
    }

    /// The run as the display needs it: its id, and `t0` once the daemon has placed it.
    private static func run(_ job: JobDocument, id: Int64, plan: RunPlan) -> RunRecord {
        // Before the daemon has placed slot 1 (a start delay), the display estimates t0 itself.
        let t0 = job.t0UnixMs ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return RunRecord(id: id, plan: plan, t0UnixMs: t0, camera: job.camera, state: .running)
    }
}
