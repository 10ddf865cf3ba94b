import ArgumentParser
import Daemon
import DaemonClient
import Foundation
import Intervalometer
import Synchronization
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
        var body: [String: JSONValue] = ["plan": plan.apiJSON, "startDelayMs": .integer(delay.wholeMilliseconds)]
        body["camera"] = options.module.map(JSONValue.string)
        body["cameras"] = cameras.map { .array($0.map(JSONValue.string)) }
        let job: JSONValue
        do {
            job = try await client.request("POST", "/v1/jobs", body: .object(body))
        } catch {
            if error.isUnreachable { return false }
            throw options.fail(error)
        }
        guard let id = job["id"]?.integerValue else {
            throw options.fail(code: "daemon", "the daemon answered without a job id", status: .software)
        }
        if detach {
            options.emit(["job": job]) { "Job \(id) started on \(job["camera"]?.stringValue ?? "the camera"); `unleashed attach \(id)` follows it" }
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
    func follow(_ job: JSONValue, plan: RunPlan, startDelay: Duration, ownsJob: Bool) async throws {
        guard let id = job["id"]?.integerValue else {
            throw options.fail(code: "daemon", "the daemon answered without a job id", status: .software)
        }
        let (records, sink) = AsyncStream.makeStream(of: FrameRecord.self)
        let known = Mutex(Self.run(job, id: id, plan: plan))
        let display = RunDisplay(plan: plan, options: options, startDelay: startDelay) { known.withLock { $0 } }
        let shown = Task { await display.show(records) }
        let stoppedBy = Mutex<ExitStatus?>(nil)
        let client = client
        let post: @Sendable (String, JSONValue?) -> Void = { path, body in
            Task { _ = try? await client.request("POST", path, body: body) }
        }
        let stop: @Sendable (ExitStatus) -> Void = { status in
            let first = stoppedBy.withLock { state in
                defer { state = state ?? status }
                return state == nil
            }
            guard first else { return }
            if ownsJob {
                let reason = status == .interrupted ? "stopped by Ctrl-C" : "stopped by SIGTERM"
                post("/v1/jobs/\(id)/stop", ["when": "now", "reason": .string(reason)])
            } else {
                sink.finish()
            }
        }
        let signals = SignalWatch(ownsJob ? [
            SIGINT: { stop(.interrupted) }, SIGTERM: { stop(.terminated) },
            SIGUSR1: { post("/v1/jobs/\(id)/extra-frame", nil) },
            SIGUSR2: { post("/v1/jobs/\(id)/stop", ["when": "afterFrame"]) },
        ] : [SIGINT: { stop(.interrupted) }, SIGTERM: { stop(.terminated) }])

        var ending: (state: String, reason: String, summary: RunSummary)?
        var failure: DaemonClientError?
        do {
            for try await event in client.events("/v1/jobs/\(id)/events") {
                guard stoppedBy.withLock({ $0 }) == nil || ownsJob else { break }
                switch event.name {
                case "frame":
                    guard let record = try? JSONDecoder().decode(FrameRecord.self, from: Data(event.data.utf8)) else { continue }
                    sink.yield(record)
                case "end":
                    let end = try JSONDecoder().decode(JobEnd.self, from: Data(event.data.utf8))
                    known.withLock { $0 = end.run }
                    ending = (end.state, end.reason, end.summary)
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
    private static func run(_ job: JSONValue, id: Int64, plan: RunPlan) -> RunRecord {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Before the daemon has placed slot 1 (a start delay), the display estimates t0 itself.
        let t0 = job["t0"]?.stringValue.flatMap(formatter.date(from:)) ?? Date()
        return RunRecord(id: id, plan: plan, t0UnixMs: Int64((t0.timeIntervalSince1970 * 1000).rounded()),
                         camera: job["camera"]?.stringValue ?? "", state: .running)
    }

    /// The data of a job's `end` event.
    private struct JobEnd: Decodable {
        var run: RunRecord
        var state: String
        var reason: String
        var summary: RunSummary
    }
}
