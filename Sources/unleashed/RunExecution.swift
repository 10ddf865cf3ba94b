import ArgumentParser
import CameraKit
import Foundation
import Intervalometer
import Synchronization
import UnleashedKit
import UnleashedProtocol

/// Runs a plan on the camera, for `timelapse` and `video clips`: the run journalled, the live
/// display or JSON lines, the signals (USR1, USR2, INT, TERM) wired to the run, and the outcome
/// printed with its exit status.
struct RunExecution {
    let options: GlobalOptions
    let journal: SQLiteJournal

    /// Starts a new run: as a job of the daemon when one answers (and follows it unless
    /// `detach`), else in this process. With a rig, every slot fires all of its cameras.
    static func begin(_ plan: RunPlan, delay: Duration, detach: Bool, options: GlobalOptions, rig: RigOptions? = nil) async throws {
        if let daemon = options.daemonClient() {
            var cameras: [String]?
            if let rig, rig.isRig { cameras = try await rig.names(options, daemon: daemon) }
            if try await RemoteRun(client: daemon, options: options).run(plan, delay: delay, detach: detach, cameras: cameras) {
                return
            }
        }
        if detach { throw options.usage("--detach hands the run to the daemon, and no daemon answers; start one with `unleashed daemon`") }
        let journal = try RunJournalFile.forWriting(options: options)
        try await RunExecution(options: options, journal: journal).run(.new(plan, delay: delay), rig: rig)
    }

    func run(_ start: RunStart, rig selection: RigOptions? = nil) async throws {
        let options = options
        let journal = journal
        let plan = start.plan
        let controls = RunControls()
        let outcome = Mutex<Result<RunEnding, TimelapseError>?>(nil)
        let wallClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
        if let selection, selection.isRig {
            try await options.withRig(selection, onInterrupt: { controls.stop(.interrupted) }) { rig throws(ExitCode) in
                let run = Timelapse(plan: plan, rig: rig, journal: journal, clock: ContinuousClock(), wallClock: wallClock,
                                    hooks: plan.hookRunner)
                let result = await drive(run, cameraName: rig.members.map(\.name).joined(separator: ","), start: start, controls: controls)
                outcome.withLock { $0 = result }
            }
        } else {
            try await options.withCamera(onInterrupt: { controls.stop(.interrupted) }, savedFiles: .summary) { camera throws(CameraError) in
                let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: ContinuousClock(), wallClock: wallClock,
                                    hooks: plan.hookRunner)
                let result = await drive(run, cameraName: camera.identity.name, start: start, controls: controls)
                outcome.withLock { $0 = result }
            }
        }
        controls.disarm()
        switch outcome.withLock({ $0 }) {
        case .success(let ending):
            // An interrupted run's journal lacks what it could not take: the recovery file (or,
            // failing that, the ending itself) holds the rest.
            let kept = ending.recoveryFile.map { JournalRecovery.records(in: [$0]) } ?? ending.unrecorded
            let summary = RunSummary(frames: ((try? journal.frames(of: ending.run.id)) ?? []) + kept)
            for record in ending.unrecorded {
                // Kept nowhere else: standard error is the last place these frames are accounted for.
                Output.note("unrecorded frame: " + Output.json(RunText.json(encoding: record)))
            }
            options.emit(Self.json(ending, summary)) { Self.text(ending, summary) }
            if let status = controls.stoppedBy { throw ExitCode(status.rawValue) }
            if ending.interrupted { throw ExitCode(ExitStatus.ioError.rawValue) }
            if let status = Self.failureStatus(of: summary) { throw ExitCode(status.rawValue) }
        case .failure(let error):
            if let status = controls.stoppedBy { throw ExitCode(status.rawValue) }
            throw fail(error)
        case nil:
            throw ExitCode(ExitStatus.software.rawValue)
        }
    }

    /// Runs `run` with the signals wired to it and the live display, to its end.
    private func drive(_ run: Timelapse<ContinuousClock>, cameraName: String, start: RunStart,
                       controls: RunControls) async -> Result<RunEnding, TimelapseError> {
        controls.attach(run)
        let display = RunDisplay(plan: start.plan, options: options, startDelay: start.delay) { await run.current }
        let shown = Task { await display.show(run.records) }
        let result: Result<RunEnding, TimelapseError>
        do throws(TimelapseError) {
            switch start {
            case .new(_, let delay): result = .success(try await run.start(cameraName: cameraName, startDelay: delay))
            case .resumed(let record): result = .success(try await run.resume(record))
            }
        } catch {
            result = .failure(error)
        }
        await shown.value
        display.finish()
        return result
    }

    private func fail(_ error: TimelapseError) -> ExitCode {
        switch error {
        case .invalidPlan: options.fail(code: "invalidPlan", error.description, status: .usage)
        case .intervalTooShort(let minimum, _):
            options.fail(code: "intervalTooShort", error.description, status: .usage, extra: ["minimumMs": .integer(minimum)])
        case .hookRefused: options.fail(code: "hookRefused", error.description, status: .refused)
        case .journal: options.fail(code: "journal", error.description, status: .unavailable)
        case .owned: options.fail(code: "runOwned", error.description, status: .temporary)
        case .stoppedBeforeStart: options.fail(code: "cancelled", error.description, status: Interrupt.exitStatus)
        case .camera(let cameraError), .rigCamera(_, let cameraError):
            options.fail(code: Output.classify(cameraError).0, error.description, status: Output.classify(cameraError).1)
        }
    }

    static func json(_ ending: RunEnding, _ summary: RunSummary) -> JSONValue {
        var json = json(id: ending.run.id, state: ending.stateName, reason: ending.reason, summary)
        if let file = ending.recoveryFile, case .object(var run)? = json.objectValue?["run"] {
            run["recoveryFile"] = .string(file)
            json = ["run": .object(run)]
        }
        return json
    }

    static func text(_ ending: RunEnding, _ summary: RunSummary) -> String {
        text(id: ending.run.id, state: ending.stateName, reason: ending.reason, summary)
    }

    /// A run that took no picture at all, because every slot failed (a card full from the
    /// start, a camera that refuses every shot), did not do its job: its exit status says so.
    /// Skipped slots alone (a camera never connected) are reported as such, with status 69.
    static func failureStatus(of summary: RunSummary) -> ExitStatus? {
        guard summary.taken == 0 else { return nil }
        if summary.failed > 0 { return .refused }
        if summary.skipped > 0 { return .unavailable }
        return nil
    }

    /// The last JSON line of a run, here or in the daemon.
    static func json(id: Int64, state: String, reason: String, _ summary: RunSummary) -> JSONValue {
        var run: [String: JSONValue] = ["id": .integer(id), "state": .string(state), "reason": .string(reason)]
        run["summary"] = RunText.json(encoding: summary)
        return ["run": .object(run)]
    }

    /// The last line of a run, here or in the daemon.
    static func text(id: Int64, state: String, reason: String, _ summary: RunSummary) -> String {
        var line = "Run \(id) \(state) (\(reason)): \(summary.taken) taken, "
            + "\(summary.failed) failed, \(summary.skipped) skipped"
        if let p50 = summary.p50LatenessMicros, let p99 = summary.p99LatenessMicros, let max = summary.maxLatenessMicros {
            line += "; lateness p50 \(RunText.lateness(p50)), p99 \(RunText.lateness(p99)), max \(RunText.lateness(max))"
        }
        if let p50 = summary.p50CommandSpreadMicros, let p99 = summary.p99CommandSpreadMicros, let max = summary.maxCommandSpreadMicros {
            line += "; command spread p50 \(RunText.lateness(p50)), p99 \(RunText.lateness(p99)), max \(RunText.lateness(max))"
        }
        return line
    }
}

/// A run about to begin: new, after an optional delay, or resumed from the journal.
enum RunStart {
    case new(RunPlan, delay: Duration)
    case resumed(RunRecord)

    var plan: RunPlan {
        switch self {
        case .new(let plan, _): plan
        case .resumed(let record): record.plan
        }
    }

    var delay: Duration {
        if case .new(_, let delay) = self { return delay }
        return .zero
    }
}

/// The signals a run answers, and which one stopped it.
final class RunControls: Sendable {
    private struct State {
        var run: Timelapse<ContinuousClock>?
        var stoppedBy: ExitStatus?
        var pending: [@Sendable (Timelapse<ContinuousClock>) async -> Void] = []
    }

    private let state = Mutex(State())
    private let watch = Mutex<SignalWatch?>(nil)

    init() {
        watch.withLock {
            $0 = SignalWatch([
                SIGTERM: { [weak self] in self?.stop(.terminated) },
                SIGUSR1: { [weak self] in self?.send { await $0.shootExtraFrame() } },
                SIGUSR2: { [weak self] in self?.send { await $0.stopAfterCurrentFrame() } },
            ])
        }
    }

    /// The status to exit with when a signal stopped the run.
    var stoppedBy: ExitStatus? { state.withLock { $0.stoppedBy } }

    /// Ctrl-C or SIGTERM: stops the run now (a bulb exposure is ended first).
    func stop(_ status: ExitStatus) {
        let first = state.withLock { state in
            defer { state.stoppedBy = state.stoppedBy ?? status }
            return state.stoppedBy == nil
        }
        guard first else { return }
        let reason = status == .interrupted ? "stopped by Ctrl-C" : "stopped by SIGTERM"
        send { await $0.stop(reason: reason) }
    }

    /// Connects the signals to `run`, delivering any that came while connecting.
    func attach(_ run: Timelapse<ContinuousClock>) {
        let pending = state.withLock { state in
            state.run = run
            defer { state.pending = [] }
            return state.pending
        }
        for action in pending { Task { await action(run) } }
    }

    func disarm() {
        watch.withLock { $0?.disarm() }
    }

    private func send(_ action: @escaping @Sendable (Timelapse<ContinuousClock>) async -> Void) {
        let run = state.withLock { state in
            if state.run == nil { state.pending.append(action) }
            return state.run
        }
        if let run { Task { await action(run) } }
    }
}

