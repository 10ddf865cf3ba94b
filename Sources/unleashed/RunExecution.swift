import ArgumentParser
import CameraKit
import CommandCore
import DaemonClient
import Foundation
import Intervalometer
import UnleashedApp
import UnleashedKit

/// Runs a plan on the camera, for `timelapse` and `video clips`: the run journalled, the live
/// display or JSON lines, the signals (USR1, USR2, INT, TERM) wired to the run, and the outcome
/// printed with its exit status.
struct RunExecution {
    let options: GlobalOptions
    let journal: SQLiteJournal

    /// Starts a new run: as a job of the daemon when one answers (and follows it unless
    /// `detach`), else in this process. With a rig, every slot fires all of its cameras.
    /// `clock` is the one the plan was read on (``GlobalOptions/commandClock()``).
    static func begin(_ plan: RunPlan, delay: Duration, detach: Bool, options: GlobalOptions, clock: CommandClock,
                      rig: RigOptions? = nil) async throws {
        if let daemon = options.daemonClient() {
            var cameras: [String]?
            if let rig, rig.isRig { cameras = try await rig.names(options, daemon: daemon) }
            do {
                let job = try await daemon.startJob(plan, camera: options.module, cameras: cameras, startDelay: delay)
                guard !detach else {
                    return options.emit(["job": job.json]) { "Job \(job.id) started on \(job.camera); `unleashed attach \(job.id)` follows it" }
                }
                let run = JobRun(job, client: daemon, owned: true)
                return try await follow(run, plan: plan, startDelay: delay, options: options, clock: clock, interruptible: true)
            } catch let error as DaemonClientError {
                if !error.isUnreachable { throw options.fail(error) }
            }
        }
        if detach { throw options.usage("--detach hands the run to the daemon, and no daemon answers; start one with `unleashed daemon`") }
        let journal = try RunJournalFile.forWriting(options: options)
        try await RunExecution(options: options, journal: journal).run(.new(plan, delay: delay), rig: rig)
    }

    /// Runs `start` in this process on the camera (or the rig), shown and signalled as every run is.
    func run(_ start: RunStart, rig selection: RigOptions? = nil) async throws {
        let options = options
        let run = LocalRun(start, journal: journal)
        try await Self.follow(run, plan: start.plan, startDelay: start.delay, options: options) { signals in
            let onInterrupt: @Sendable () -> Void = { signals.stop(by: SIGINT) }
            do {
                if let selection, selection.isRig {
                    try await options.withRig(selection, onInterrupt: onInterrupt) { rig throws(ExitCode) in _ = await run.run(on: rig) }
                } else {
                    try await options.withCamera(onInterrupt: onInterrupt, savedFiles: .summary, events: true) { camera throws(CameraError) in
                        _ = await run.run(on: camera)
                    }
                }
            } catch {
                run.abandon()
                throw error
            }
        }
    }

    /// Shows `run` to its end (the live display, or JSON lines), with the signals wired to it,
    /// and prints its outcome with its exit status: the one place a run is followed, here or
    /// in a daemon. `work` does what the run needs meanwhile (opens the camera and shoots); a
    /// run followed in a daemon needs nothing. `clock` is the one the run's `t0` is read on: the
    /// daemon's for its job.
    static func follow(_ run: any RunController, plan: RunPlan, startDelay: Duration, options: GlobalOptions,
                       clock: CommandClock = .local, interruptible: Bool = false,
                       whileRunning work: (RunSignals) async throws -> Void = { _ in }) async throws {
        let signals = RunSignals(run, interrupt: interruptible)
        let display = RunDisplay(plan: plan, json: options.json, startDelay: startDelay, wallClock: clock) { await run.current() }
        let shown = Task { await display.show(run.records) }
        do {
            try await work(signals)
        } catch {
            signals.disarm()
            await shown.value
            display.finish()
            throw error
        }
        let outcome = await run.outcome()
        await shown.value
        display.finish()
        signals.disarm()
        try report(outcome, stoppedBy: signals.stoppedBy, options: options)
    }

    /// Prints how a run ended and throws its exit status.
    private static func report(_ outcome: RunOutcome, stoppedBy: ExitStatus?, options: GlobalOptions) throws {
        switch outcome {
        case .ended(let end):
            for record in end.unrecorded {
                // Kept nowhere else: standard error is the last place these frames are accounted for.
                Output.note("unrecorded frame: " + Output.json(RunReport.json(encoding: record)))
            }
            options.emit(RunReport.json(end)) { RunReport.text(end) }
            if let stoppedBy { throw ExitCode(stoppedBy.rawValue) }
            if let verdict = end.verdict { throw ExitCode(verdict.exitStatus) }
        case .failed(let error):
            if let stoppedBy { throw ExitCode(stoppedBy.rawValue) }
            throw options.fail(CameraFailure(error))
        case .daemon(let error):
            throw options.fail(error)
        case .unknown(let why):
            throw options.fail(code: "daemon", why, status: .unavailable)
        case .stoppedFollowing(let id):
            Output.note("Stopped following job \(id); it goes on in the daemon (`unleashed stop \(id)` ends it).")
        case .notStarted:
            throw ExitCode(ExitStatus.software.rawValue)
        }
    }
}

/// A run about to begin: new, after an optional delay, or resumed from the journal.
typealias RunStart = LocalRun.Start
