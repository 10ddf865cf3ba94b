import ArgumentParser
import CommandCore
import Foundation
import Intervalometer
import Synchronization
import UnleashedApp
import UnleashedKit

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
            let clock = await options.commandClock()
            let planned = try options.planned { () throws(PlanRefusal) in try request.plan(now: clock.now) }
            try await RunExecution.begin(planned.plan, delay: planned.delay, detach: schedule.start.detach, options: options,
                                         clock: clock, rig: rig.isRig ? rig : nil)
            return
        }
        if schedule.start.detach { throw options.usage("--detach starts a new run; a daemon resumes interrupted runs itself") }
        let journal = try RunJournalFile.forWriting(options: options)
        let record = try interruptedRun(resume, journal: journal)
        try await RunExecution(options: options, journal: journal).run(.resumed(record), rig: try await rig.resuming(record, options))
    }

    /// The options as a request the library turns into a plan.
    private var request: PlanRequest {
        PlanRequest(interval: interval, bulb: bulb, bracket: bracket, ramp: ramp, minISO: minISO, maxISO: maxISO,
                    rampApertures: rampApertures, rampGap: rampGap, nightInterval: nightInterval, schedule: schedule.request)
    }

    private func interruptedRun(_ id: Int64, journal: SQLiteJournal) throws(ExitCode) -> RunRecord {
        if let conflict = request.resumeConflict { throw options.fail(conflict) }
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
}
