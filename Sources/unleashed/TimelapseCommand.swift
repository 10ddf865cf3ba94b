import ArgumentParser
import Foundation
import Intervalometer
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

    @OptionGroup var options: GlobalOptions

    @Option(help: ArgumentHelp("Time from one slot's start to the next one's, e.g. 5s or 1m30s.", valueName: "duration"))
    var interval: String?

    @Option(help: ArgumentHelp("Stop after this many slots.", valueName: "n"))
    var frames: Int?

    @Option(help: ArgumentHelp("Stop after this long: no slot is due at or after it, e.g. 2h.", valueName: "duration"))
    var duration: String?

    @Option(help: ArgumentHelp("Stop at this local time (HH:MM or HH:MM:SS; the next time it comes).", valueName: "time"))
    var until: String?

    @Option(name: .customLong("start-in"), help: ArgumentHelp("Wait this long before the first slot.", valueName: "duration"))
    var startIn: String?

    @Option(name: .customLong("start-at"), help: ArgumentHelp("Start at this local time (HH:MM or HH:MM:SS).", valueName: "time"))
    var startAt: String?

    @Option(help: ArgumentHelp("Each slot is one bulb exposure this long, e.g. 2s or 1500ms.", valueName: "duration"))
    var bulb: String?

    @Option(help: ArgumentHelp(
        "Each slot is a bracket around the current shutter speed: COUNTxSTEP, e.g. 3x1ev, 5x2/3ev.", valueName: "bracket"))
    var bracket: String?

    @Option(help: ArgumentHelp("What to do with slots missed while the camera was busy: skip, defer or burst.",
                               valueName: "policy"))
    var overrun: String = OverrunPolicy.skip.rawValue

    @Option(help: ArgumentHelp("Leave at least this long between one slot's work and the next command.", valueName: "duration"))
    var gap: String?

    @Option(help: ArgumentHelp("A program to run at init, start, each frame and stop.", valueName: "program"))
    var hook: String?

    @Option(help: ArgumentHelp("Continue an interrupted run from the journal, on its original schedule.", valueName: "id"))
    var resume: Int64?

    func run() async throws {
        let options = options
        let journal = try RunJournalFile.forWriting(options: options)
        let start: RunStart
        if let resume {
            start = try resumedRun(resume, journal: journal)
        } else {
            start = .new(try plan(), delay: try startDelay())
        }
        let plan = start.plan
        let controls = RunControls()
        let outcome = Mutex<Result<RunEnding, TimelapseError>?>(nil)
        try await options.withCamera(onInterrupt: { controls.stop(.interrupted) }) { camera throws(CameraError) in
            let run = Timelapse(plan: plan, camera: camera, journal: journal, clock: ContinuousClock(),
                                wallClock: { Int64((Date().timeIntervalSince1970 * 1000).rounded()) },
                                hooks: plan.hook.map(HookRunner.init(program:)))
            controls.attach(run)
            let display = RunDisplay(plan: plan, options: options, startDelay: start.delay) { await run.current }
            let shown = Task { await display.show(run.records) }
            let result: Result<RunEnding, TimelapseError>
            do throws(TimelapseError) {
                switch start {
                case .new(_, let delay): result = .success(try await run.start(cameraName: camera.identity.name, startDelay: delay))
                case .resumed(let record): result = .success(try await run.resume(record))
                }
            } catch {
                result = .failure(error)
            }
            await shown.value
            display.finish()
            outcome.withLock { $0 = result }
        }
        controls.disarm()
        switch outcome.withLock({ $0 }) {
        case .success(let ending):
            let summary = (try? journal.summary(of: ending.run.id)) ?? RunSummary(frames: [])
            options.emit(Self.json(ending, summary)) { Self.text(ending, summary) }
            if let status = controls.stoppedBy { throw ExitCode(status.rawValue) }
        case .failure(let error):
            if let status = controls.stoppedBy { throw ExitCode(status.rawValue) }
            throw fail(error)
        case nil:
            throw ExitCode(ExitStatus.software.rawValue)
        }
    }

    // MARK: - The plan from the command line

    private func plan() throws(ExitCode) -> RunPlan {
        guard let interval else { throw usage("say how often to shoot: --interval 5s (or --resume ID to continue a run)") }
        let intervalMs = try milliseconds(interval, for: "--interval")
        let stops = [frames != nil, duration != nil, until != nil].count { $0 }
        guard stops == 1 else {
            throw usage("say when to stop with one of --frames N, --duration 2h or --until 06:30")
        }
        let stop: StopCondition
        if let frames {
            guard frames >= 1 else { throw usage("--frames: a run needs at least 1 frame") }
            stop = .frames(frames)
        } else if let duration {
            stop = .duration(milliseconds: try milliseconds(duration, for: "--duration"))
        } else {
            stop = .until(unixMilliseconds: Int64(try localTime(until ?? "", for: "--until").timeIntervalSince1970 * 1000))
        }
        guard bulb == nil || bracket == nil else { throw usage("choose --bulb or --bracket, not both") }
        var exposure = ExposurePlan.camera
        if let bulb { exposure = .bulb(milliseconds: try milliseconds(bulb, for: "--bulb")) }
        if let bracket {
            guard let parsed = Self.bracket(bracket) else {
                throw usage("--bracket: '\(bracket)' is not a bracket; write COUNTxSTEP with an odd count of 3 or more "
                    + "and a step in thirds of a stop, like 3x1ev, 5x2/3ev or 3x1/3ev")
            }
            exposure = parsed
        }
        guard let policy = OverrunPolicy(rawValue: overrun) else {
            throw usage("--overrun: '\(overrun)' is not a policy; choose skip, defer or burst")
        }
        let gapMs = try gap.map { text throws(ExitCode) in try milliseconds(text, for: "--gap", allowZero: true) } ?? 0
        return RunPlan(intervalMs: intervalMs, stop: stop, exposure: exposure, overrun: policy, minimumGapMs: gapMs,
                       hook: try hook.map(checkedHook))
    }

    private func startDelay() throws(ExitCode) -> Duration {
        guard startIn == nil || startAt == nil else { throw usage("choose --start-in or --start-at, not both") }
        if let startIn { return .milliseconds(try milliseconds(startIn, for: "--start-in", allowZero: true)) }
        if let startAt {
            let seconds = try localTime(startAt, for: "--start-at").timeIntervalSinceNow
            return .milliseconds(Int64(max(seconds, 0) * 1000))
        }
        return .zero
    }

    private func resumedRun(_ id: Int64, journal: SQLiteJournal) throws(ExitCode) -> RunStart {
        let planOptions: [(String, Bool)] = [
            ("--interval", interval != nil), ("--frames", frames != nil), ("--duration", duration != nil),
            ("--until", until != nil), ("--start-in", startIn != nil), ("--start-at", startAt != nil),
            ("--bulb", bulb != nil), ("--bracket", bracket != nil), ("--gap", gap != nil), ("--hook", hook != nil),
            ("--overrun", overrun != OverrunPolicy.skip.rawValue),
        ]
        if let given = planOptions.first(where: \.1) {
            throw usage("\(given.0) cannot be changed on --resume: the run continues with the plan it was started with")
        }
        let found: RunRecord?
        do {
            found = try journal.run(id)
        } catch {
            throw options.fail(code: "journal", error.description, status: .unavailable)
        }
        guard let record = found else { throw usage("there is no run \(id); `unleashed runs list` shows them") }
        guard record.state == .running else {
            throw usage("run \(id) has \(record.state == .finished ? "finished" : "failed") (\(record.endReason ?? "no reason recorded")); "
                + "only an interrupted run can be resumed")
        }
        return .resumed(record)
    }

    /// An absolute path to an executable hook, so that a resumed run finds it from anywhere.
    private func checkedHook(_ program: String) throws(ExitCode) -> String {
        let path = URL(fileURLWithPath: program).standardizedFileURL.path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw usage("--hook: \(program) is not an executable file")
        }
        return path
    }

    private func milliseconds(_ text: String, for option: String, allowZero: Bool = false) throws(ExitCode) -> Int64 {
        let value = try options.duration(text, for: option).wholeMilliseconds
        guard value > 0 || (allowZero && value == 0) else { throw usage("\(option): the duration must be longer than 0") }
        return value
    }

    private func localTime(_ text: String, for option: String) throws(ExitCode) -> Date {
        guard let date = LocalTime.next(text, after: Date()) else {
            throw usage("\(option): '\(text)' is not a time of day; write it like 06:30 or 18:30:15")
        }
        return date
    }

    private func usage(_ message: String) -> ExitCode {
        options.fail(code: "usage", message, status: .usage)
    }

    private func fail(_ error: TimelapseError) -> ExitCode {
        switch error {
        case .invalidPlan: options.fail(code: "invalidPlan", error.description, status: .usage)
        case .intervalTooShort(let minimum, _):
            options.fail(code: "intervalTooShort", error.description, status: .usage, extra: ["minimumMs": .integer(minimum)])
        case .hookRefused: options.fail(code: "hookRefused", error.description, status: .refused)
        case .journal: options.fail(code: "journal", error.description, status: .unavailable)
        case .camera(let cameraError):
            options.fail(code: Output.classify(cameraError).0, error.description, status: Output.classify(cameraError).1)
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

    // MARK: - The outcome

    static func json(_ ending: RunEnding, _ summary: RunSummary) -> JSONValue {
        var run: [String: JSONValue] = [
            "id": .integer(ending.run.id), "state": .string(ending.state.rawValue), "reason": .string(ending.reason),
        ]
        run["summary"] = RunText.json(encoding: summary)
        return ["run": .object(run)]
    }

    static func text(_ ending: RunEnding, _ summary: RunSummary) -> String {
        var line = "Run \(ending.run.id) \(ending.state.rawValue) (\(ending.reason)): \(summary.taken) taken, "
            + "\(summary.failed) failed, \(summary.skipped) skipped"
        if let p50 = summary.p50LatenessMicros, let p99 = summary.p99LatenessMicros, let max = summary.maxLatenessMicros {
            line += "; lateness p50 \(RunText.lateness(p50)), p99 \(RunText.lateness(p99)), max \(RunText.lateness(max))"
        }
        return line
    }
}

/// A run about to begin: new, after an optional delay, or resumed from the journal.
private enum RunStart {
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
private final class RunControls: Sendable {
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

/// Times of day as people type them: `06:30`, `18:30:15`, the next such local time.
enum LocalTime {
    static func next(_ text: String, after now: Date, calendar: Calendar = .current) -> Date? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
        let (hour, minute, second) = (fields[0]!, fields[1]!, fields.count == 3 ? fields[2]! : 0)
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        return calendar.nextDate(after: now, matching: DateComponents(hour: hour, minute: minute, second: second),
                                 matchingPolicy: .nextTime)
    }
}
