import ArgumentParser
import Foundation
import Intervalometer
import UnleashedKit
import UnleashedProtocol

/// When a run starts and stops, and how it treats its slots: the options `timelapse` and
/// `video clips` share.
struct ScheduleOptions: ParsableArguments, Sendable {
    @Option(help: ArgumentHelp("Stop after this many slots.", valueName: "n"))
    var frames: Int?

    @Option(help: ArgumentHelp("Stop after this long: no slot is due at or after it, e.g. 2h.", valueName: "duration"))
    var duration: String?

    @Option(help: ArgumentHelp("Stop at this local time (HH:MM or HH:MM:SS; the next time it comes).", valueName: "time"))
    var until: String?

    @OptionGroup var start: StartOptions

    @Option(help: ArgumentHelp("What to do with slots missed while the camera was busy: skip, defer or burst.",
                               valueName: "policy"))
    var overrun: String = OverrunPolicy.skip.rawValue

    @Option(help: ArgumentHelp("Leave at least this long between one slot's work and the next command.", valueName: "duration"))
    var gap: String?

    @Option(help: ArgumentHelp("A program to run at init, start, each slot and stop.", valueName: "program"))
    var hook: String?

    @Option(name: .customLong("hook-timeout"),
            help: ArgumentHelp("Kill a hook call still running after this long (default 30s); the run goes on.", valueName: "duration"))
    var hookTimeout: String?

    /// The first option given that would change a stored plan (refused on `--resume`).
    var givenOption: String? {
        let given: [(String, Bool)] = [
            ("--frames", frames != nil), ("--duration", duration != nil), ("--until", until != nil),
            ("--start-in", start.startIn != nil), ("--start-at", start.startAt != nil), ("--gap", gap != nil), ("--hook", hook != nil),
            ("--hook-timeout", hookTimeout != nil),
            ("--overrun", overrun != OverrunPolicy.skip.rawValue),
        ]
        return given.first(where: \.1)?.0
    }

    /// The plan for slots `intervalMs` apart, each doing `exposure`, and how long to wait for slot
    /// 1. `--until` is the first such time after the run starts; a `--start-at` or `--until` that
    /// falls on a later day than today is told once the plan is known to be good (see
    /// ``GlobalOptions/tell(_:)``).
    func plan(intervalMs: Int64, exposure: ExposurePlan, options: GlobalOptions,
              now: Date = Date()) throws(ExitCode) -> (plan: RunPlan, delay: Duration) {
        guard let policy = OverrunPolicy(rawValue: overrun) else {
            throw options.usage("--overrun: '\(overrun)' is not a policy; choose skip, defer or burst")
        }
        let (delay, startDay) = try start.start(options: options, now: now)
        let startMoment = now.addingTimeInterval(Double(delay.wholeMilliseconds) / 1000)
        let (stop, stopDay) = try stop(intervalMs: intervalMs, startingAt: startMoment, options: options, now: now)
        let gapMs = try gap.map { text throws(ExitCode) in try options.milliseconds(text, for: "--gap", allowZero: true) } ?? 0
        let hookTimeoutMs = try hookTimeout.map { text throws(ExitCode) in try options.milliseconds(text, for: "--hook-timeout") }
        if hookTimeoutMs != nil, hook == nil { throw options.usage("--hook-timeout is the time limit of --hook; give the hook too") }
        let plan = RunPlan(intervalMs: intervalMs, stop: stop, exposure: exposure, overrun: policy,
                           minimumGapMs: gapMs, hook: try hook.map { program throws(ExitCode) in try Self.checkedHook(program, options) },
                           hookTimeoutMs: hookTimeoutMs)
        options.tell([startDay, stopDay].compactMap { $0 })
        return (plan, delay)
    }

    private func stop(intervalMs: Int64, startingAt start: Date, options: GlobalOptions,
                      now: Date) throws(ExitCode) -> (StopCondition, LaterDay?) {
        guard [frames != nil, duration != nil, until != nil].count(where: { $0 }) == 1 else {
            throw options.usage("say when to stop with one of --frames N, --duration 2h or --until 06:30")
        }
        if let frames {
            guard frames >= 1 else { throw options.usage("--frames: a run needs at least 1 slot") }
            guard !Int64(frames).multipliedReportingOverflow(by: intervalMs).overflow else {
                throw options.usage("--frames: \(frames) slots \(Duration.milliseconds(intervalMs).compactText) apart are too long "
                    + "a run to be counted; use fewer, or --duration")
            }
            return (.frames(frames), nil)
        }
        if let duration { return (.duration(milliseconds: try options.milliseconds(duration, for: "--duration")), nil) }
        let text = until ?? ""
        let end = try options.localTime(text, for: "--until", after: start)
        return (.until(unixMilliseconds: Int64(end.timeIntervalSince1970 * 1000)), LaterDay("--until", text, end, now: now))
    }

    /// An absolute path to an executable hook, so that a resumed run finds it from anywhere.
    private static func checkedHook(_ program: String, _ options: GlobalOptions) throws(ExitCode) -> String {
        let path = URL(fileURLWithPath: program).standardizedFileURL.path
        if let problem = HookRunner.problem(with: path) { throw options.usage("--hook: \(problem)") }
        return path
    }
}

/// When a run's first slot comes: after a delay or at a local time. Shared by every scheduled
/// command, `video record` included.
struct StartOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("start-in"), help: ArgumentHelp("Wait this long before the first slot.", valueName: "duration"))
    var startIn: String?

    @Option(name: .customLong("start-at"), help: ArgumentHelp("Start at this local time (HH:MM or HH:MM:SS).", valueName: "time"))
    var startAt: String?

    @Flag(help: "Hand the run to the daemon, print its job id and return; `unleashed attach JOB` follows it.")
    var detach = false

    /// The longest wait for slot 1 that `--start-in` takes.
    static let longestDelay = Duration.seconds(365 * 86_400)

    /// How long to wait before slot 1, telling on standard error (and in JSON) when `--start-at`
    /// is tomorrow.
    func delay(options: GlobalOptions) throws(ExitCode) -> Duration {
        let (delay, later) = try start(options: options, now: Date())
        options.tell([later].compactMap { $0 })
        return delay
    }

    /// How long to wait before slot 1, and the day `--start-at` falls on when it is not today.
    func start(options: GlobalOptions, now: Date) throws(ExitCode) -> (Duration, LaterDay?) {
        guard startIn == nil || startAt == nil else { throw options.usage("choose --start-in or --start-at, not both") }
        if let startIn {
            let delay = try options.milliseconds(startIn, for: "--start-in", allowZero: true, atMost: Self.longestDelay,
                                                 limit: "a run starts within a year (8760h)")
            return (.milliseconds(delay), nil)
        }
        if let startAt {
            let moment = try options.localTime(startAt, for: "--start-at", after: now)
            let seconds = moment.timeIntervalSince(now)
            return (.milliseconds(Int64(max(seconds, 0) * 1000)), LaterDay("--start-at", startAt, moment, now: now))
        }
        return (.zero, nil)
    }
}

/// A time of day from the command line (`--start-at`, `--until`) that falls on a later day than
/// today: it has passed today, or comes after the run's start. Told so that no one is surprised
/// by a run that starts or stops a day later than they meant.
struct LaterDay {
    let option: String
    let text: String
    let moment: Date
    /// `tomorrow`, or the date.
    let day: String

    /// Nil when `moment` is today.
    init?(_ option: String, _ text: String, _ moment: Date, now: Date) {
        guard LocalTime.daysAhead(of: moment, from: now) > 0 else { return nil }
        (self.option, self.text, self.moment) = (option, text, moment)
        day = LocalTime.day(of: moment, from: now)
    }

    var message: String {
        let when = day == "tomorrow" ? day : "on \(day)"
        return option == "--start-at"
            ? "\(option) \(text) is \(when): \(text) has passed today, so the run starts \(when) at \(text)"
            : "\(option) \(text) is \(when): the run stops at the first \(text) after it starts, \(when)"
    }

    var json: JSONValue {
        ["note": ["code": "laterDay", "option": .string(option), "time": .string(text), "day": .string(day),
                  "at": .string(Output.timestamp(UInt64(max(moment.timeIntervalSince1970 * 1000, 0)))),
                  "message": .string(message)]]
    }
}

extension GlobalOptions {
    /// A duration option in whole milliseconds, longer than 0 (or 0 when `allowZero`), and at
    /// most `atMost` when given (`limit` says what the limit is, for the message).
    func milliseconds(_ text: String, for option: String, allowZero: Bool = false, atMost: Duration? = nil,
                      limit: String = "") throws(ExitCode) -> Int64 {
        let duration = try duration(text, for: option)
        let value = duration.wholeMilliseconds
        guard value > 0 || (allowZero && value == 0) else { throw usage("\(option): the duration must be longer than 0") }
        if let atMost, duration > atMost { throw usage("\(option): \(text) is too long; \(limit)") }
        return value
    }

    /// An interval between slots (`--interval`, `--every`, `--night-interval`, a clip's length):
    /// longer than 0 and at most a day.
    func interval(_ text: String, for option: String) throws(ExitCode) -> Int64 {
        try milliseconds(text, for: option, atMost: .seconds(86_400), limit: "it can be at most a day (24h)")
    }

    /// The next local time of day `text` (`06:30`, `18:30:15`) names after `moment`.
    func localTime(_ text: String, for option: String, after moment: Date = Date()) throws(ExitCode) -> Date {
        guard let date = LocalTime.next(text, after: moment) else {
            throw usage("\(option): '\(text)' is not a time of day; write it like 06:30 or 18:30:15")
        }
        return date
    }

    /// Tells what the schedule does that one might not expect: a time of day that falls on a
    /// later day. On standard error always, a terminal or not; with --json also as a
    /// `{"note": {...}}` line on standard output, ahead of the run's records.
    func tell(_ notes: [LaterDay]) {
        for note in notes {
            Output.note("note: \(note.message)")
            if json { Output.line(Output.json(note.json)) }
        }
    }

    /// A usage error (status 64) with `message`.
    func usage(_ message: String) -> ExitCode {
        fail(code: "usage", message, status: .usage)
    }
}
