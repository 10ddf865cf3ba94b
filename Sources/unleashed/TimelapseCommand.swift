import ArgumentParser
import Foundation
import Intervalometer
import UnleashedApp
import Synchronization
import UnleashedKit
import UnleashedProtocol

struct TimelapseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timelapse",
        abstract: "Shoot a time-lapse: one slot every interval, on a schedule that does not drift.",
        discussion: """
            Slot n is due at t0 + (n - 1) x interval on the host's monotonic clock, whatever the \
            shots before it took. Every slot is written to the run journal (see 'unleashed runs') \
            before the next one is waited for: taken, failed (with the camera's reason) or skipped.

            Overrun (a slot whose time passed while the camera was still busy): 'skip' (default) \
            shoots at the next slot still to come and records the ones passed over, so frame \
            numbers stay on the clock; 'defer' shoots as soon as the camera is ready and moves the \
            rest of the schedule by the delay; 'burst' shoots the passed slots one after another \
            until it has caught up.

            Signals: SIGUSR1 shoots an extra picture now; SIGUSR2 stops after the current slot; \
            Ctrl-C (SIGINT) and SIGTERM stop at once, ending a bulb exposure first and closing the \
            journal. After a crash or a power cut, --resume ID continues the run on its original \
            schedule: slots that passed meanwhile are recorded as skipped, no number is used twice.

            The hook (--hook PROGRAM) is run as gphoto2 runs its hooks: ACTION=init|start|frame|stop \
            and ARGUMENT in the environment, plus UNLEASHED_FRAME, UNLEASHED_SCHEDULED, \
            UNLEASHED_LATENESS_MS, UNLEASHED_EXPOSURE, UNLEASHED_EV and more (docs/user-guide.md). \
            A non-zero exit at init aborts the run before anything is shot.

            On a terminal a live line shows frame n of N, a bar to the next slot, elapsed and \
            remaining time and the lateness so far; --json prints one JSON object per frame record \
            and a last one with the outcome. Exit status: 0 when the run ended (all slots, or \
            SIGUSR2), 130 after Ctrl-C, 143 after SIGTERM, 64 for a plan that cannot work.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @OptionGroup var schedule: ScheduleOptions

    @OptionGroup(title: "Rig") var rig: RigOptions

    @Option(help: ArgumentHelp("Time from one slot's start to the next one's, e.g. 5s or 1m30s.", valueName: "duration"))
    var interval: String?

    @Option(help: ArgumentHelp("Each slot is one bulb exposure this long, e.g. 2s or 1500ms.", valueName: "duration"))
    var bulb: String?

    @Option(help: ArgumentHelp(
        "Each slot is a bracket around the current shutter speed: COUNTxSTEP, e.g. 3x1ev, 5x2/3ev.", valueName: "bracket"))
    var bracket: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp(
        "Follow the light: 'auto' sets the shutter speed, ISO and aperture before each slot from the camera's meter "
            + "(with --backend gphoto2, from the last picture's thumbnail; the first frame then meters at the camera's "
            + "settings), in third stops by day and timed bulb exposures by night (a sunset into night, or the reverse); "
            + "each camera of a --group follows its own meter. 'program FILE' does the same with keyframes (fixed "
            + "exposures, brightness offsets, intervals) from a JSON file (docs/holy-grail.md).",
        valueName: "auto|program FILE"))
    var ramp: [String] = []

    @Option(name: .customLong("max-iso"), help: ArgumentHelp("With --ramp: the highest ISO the ramp may set (default 6400).", valueName: "iso"))
    var maxISO: UInt32?

    @Option(name: .customLong("min-iso"), help: ArgumentHelp("With --ramp: the lowest ISO the ramp may set (default 100).", valueName: "iso"))
    var minISO: UInt32?

    @Option(name: .customLong("ramp-aperture"), help: ArgumentHelp(
        "With --ramp: an aperture the ramp may use, e.g. f/2.8; repeat it to let the ramp open up once the shutter is "
            + "at its longest. Without it the camera's current aperture is kept.", valueName: "f-number"))
    var rampApertures: [String] = []

    @Option(name: .customLong("ramp-gap"), help: ArgumentHelp(
        "With --ramp: the time the camera needs after each exposure; the shutter stays open at most the interval less "
            + "this (default 2s).", valueName: "duration"))
    var rampGap: String?

    @Option(name: .customLong("night-interval"), help: ArgumentHelp(
        "With --ramp: the interval by night; the interval then follows the light from --interval by day (scene EV 8 "
            + "and above) to this by night (EV -2 and below), leaving room for longer exposures.", valueName: "duration"))
    var nightInterval: String?

    @Option(help: ArgumentHelp("Continue an interrupted run from the journal, on its original schedule.", valueName: "id"))
    var resume: Int64?

    func run() async throws {
        let options = options
        guard let resume else {
            let (plan, delay) = try plan()
            try await RunExecution.begin(plan, delay: delay, detach: schedule.start.detach, options: options, rig: rig.isRig ? rig : nil)
            return
        }
        if schedule.start.detach { throw options.usage("--detach starts a new run; a daemon resumes interrupted runs itself") }
        let journal = try RunJournalFile.forWriting(options: options)
        let record = try interruptedRun(resume, journal: journal)
        try await RunExecution(options: options, journal: journal).run(.resumed(record), rig: try await rig.resuming(record, options))
    }

    // MARK: - The plan from the command line

    /// The plan and the wait for its first slot.
    private func plan() throws(ExitCode) -> (RunPlan, Duration) {
        guard let interval else {
            throw options.usage("say how often to shoot: --interval 5s (or --resume ID to continue a run)")
        }
        let intervalMs = try options.interval(interval, for: "--interval")
        guard [bulb != nil, bracket != nil, !ramp.isEmpty].filter({ $0 }).count <= 1 else {
            throw options.usage("choose one of --bulb, --bracket and --ramp")
        }
        var exposure = ExposurePlan.camera
        if !ramp.isEmpty { exposure = .ramp(plan: try rampPlan(ramp, intervalMs: intervalMs)) }
        let rampOnly = [("--night-interval", nightInterval != nil), ("--max-iso", maxISO != nil), ("--min-iso", minISO != nil),
                        ("--ramp-aperture", !rampApertures.isEmpty), ("--ramp-gap", rampGap != nil)]
        if ramp.isEmpty, let given = rampOnly.first(where: \.1)?.0 { throw options.usage("\(given) goes with --ramp") }
        if let bulb { exposure = .bulb(milliseconds: try options.milliseconds(bulb, for: "--bulb")) }
        if let bracket {
            guard let parsed = Self.bracket(bracket) else {
                throw options.usage("--bracket: '\(bracket)' is not a bracket; write COUNTxSTEP with an odd count of 3 or more "
                    + "and a step in thirds of a stop, like 3x1ev, 5x2/3ev or 3x1/3ev")
            }
            exposure = parsed
        }
        return try schedule.plan(intervalMs: intervalMs, exposure: exposure, options: options)
    }

    /// The ramp's limits from the command line.
    private func rampPlan(_ words: [String], intervalMs: Int64) throws(ExitCode) -> RampPlan {
        var plan = RampPlan()
        switch words.count {
        case 1 where words[0] == "auto":
            break
        case 2 where words[0] == "program":
            plan.program = try program(words[1], intervalMs: intervalMs)
        default:
            throw options.usage("--ramp: '\(words.joined(separator: " "))' is not a ramp; write --ramp auto or --ramp program FILE")
        }
        if let minISO { plan.minISO = minISO }
        if let maxISO { plan.maxISO = maxISO }
        guard plan.minISO <= plan.maxISO else { throw options.usage("--min-iso \(plan.minISO) is above --max-iso \(plan.maxISO)") }
        plan.apertures = rampApertures
        if let rampGap { plan.gapMs = try options.milliseconds(rampGap, for: "--ramp-gap") }
        if let nightInterval { plan.nightIntervalMs = try options.interval(nightInterval, for: "--night-interval") }
        return plan
    }

    /// The keyframes of a program file.
    private func program(_ path: String, intervalMs: Int64) throws(ExitCode) -> RampProgram {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw options.fail(code: "programFile", "--ramp program: cannot read \(path): \(error.localizedDescription)", status: .usage)
        }
        do {
            return try RampProgram(json: data, intervalMs: intervalMs)
        } catch {
            throw options.fail(code: "programFile", "--ramp program \(path): \(error)", status: .usage)
        }
    }

    private func interruptedRun(_ id: Int64, journal: SQLiteJournal) throws(ExitCode) -> RunRecord {
        let planOptions = [("--interval", interval != nil), ("--bulb", bulb != nil), ("--bracket", bracket != nil), ("--ramp", !ramp.isEmpty),
                           ("--night-interval", nightInterval != nil)]
        if let given = planOptions.first(where: \.1)?.0 ?? schedule.givenOption {
            throw options.usage("\(given) cannot be changed on --resume: the run continues with the plan it was started with")
        }
        do throws(ResumeRefusal) {
            return try RunQueries.interruptedRun(id, in: journal)
        } catch {
            switch error {
            case .refused(let why): throw options.usage(why)
            case .owned(let why): throw options.fail(code: "runOwned", why, status: .temporary)
            case .journal(let why): throw options.fail(code: "journal", why, status: .unavailable)
            }
        }
    }

    /// `3x1ev` → 3 pictures 3/3 stop apart; `5x2/3ev`, `3x1/3ev`, `3x2ev`.
    static func bracket(_ text: String) -> ExposurePlan? {
        let lowered = text.lowercased()
        guard lowered.hasSuffix("ev") else { return nil }
        let parts = lowered.dropLast(2).split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0]), count >= 3, count % 2 == 1 else { return nil }
        let step = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        let thirds: Int?
        switch step.count {
        case 1: thirds = Int(step[0]).map { $0 * 3 }
        case 2 where step[1] == "3": thirds = Int(step[0])
        default: thirds = nil
        }
        guard let thirds, thirds >= 1 else { return nil }
        return .bracket(count: count, stepThirds: thirds)
    }
}
