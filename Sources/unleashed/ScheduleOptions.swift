import ArgumentParser
import Foundation
import Intervalometer
import UnleashedKit

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

    /// The plan for slots `intervalMs` apart, each doing `exposure`.
    func plan(intervalMs: Int64, exposure: ExposurePlan, options: GlobalOptions) throws(ExitCode) -> RunPlan {
        guard let policy = OverrunPolicy(rawValue: overrun) else {
            throw options.usage("--overrun: '\(overrun)' is not a policy; choose skip, defer or burst")
        }
        let gapMs = try gap.map { text throws(ExitCode) in try options.milliseconds(text, for: "--gap", allowZero: true) } ?? 0
        let hookTimeoutMs = try hookTimeout.map { text throws(ExitCode) in try options.milliseconds(text, for: "--hook-timeout") }
        if hookTimeoutMs != nil, hook == nil { throw options.usage("--hook-timeout is the time limit of --hook; give the hook too") }
        return RunPlan(intervalMs: intervalMs, stop: try stop(options: options), exposure: exposure, overrun: policy,
                       minimumGapMs: gapMs, hook: try hook.map { program throws(ExitCode) in try Self.checkedHook(program, options) },
                       hookTimeoutMs: hookTimeoutMs)
    }

    private func stop(options: GlobalOptions) throws(ExitCode) -> StopCondition {
        guard [frames != nil, duration != nil, until != nil].count(where: { $0 }) == 1 else {
            throw options.usage("say when to stop with one of --frames N, --duration 2h or --until 06:30")
        }
        if let frames {
            guard frames >= 1 else { throw options.usage("--frames: a run needs at least 1 slot") }
            return .frames(frames)
        }
        if let duration { return .duration(milliseconds: try options.milliseconds(duration, for: "--duration")) }
        let end = try options.localTime(until ?? "", for: "--until")
        return .until(unixMilliseconds: Int64(end.timeIntervalSince1970 * 1000))
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

    /// How long to wait before slot 1.
    func delay(options: GlobalOptions) throws(ExitCode) -> Duration {
        guard startIn == nil || startAt == nil else { throw options.usage("choose --start-in or --start-at, not both") }
        if let startIn { return .milliseconds(try options.milliseconds(startIn, for: "--start-in", allowZero: true)) }
        if let startAt {
            let seconds = try options.localTime(startAt, for: "--start-at").timeIntervalSinceNow
            return .milliseconds(Int64(max(seconds, 0) * 1000))
        }
        return .zero
    }
}

extension GlobalOptions {
    /// A duration option in whole milliseconds, longer than 0 (or 0 when `allowZero`).
    func milliseconds(_ text: String, for option: String, allowZero: Bool = false) throws(ExitCode) -> Int64 {
        let value = try duration(text, for: option).wholeMilliseconds
        guard value > 0 || (allowZero && value == 0) else { throw usage("\(option): the duration must be longer than 0") }
        return value
    }

    /// The next local time of day `text` (`06:30`, `18:30:15`) names.
    func localTime(_ text: String, for option: String) throws(ExitCode) -> Date {
        guard let date = LocalTime.next(text, after: Date()) else {
            throw usage("\(option): '\(text)' is not a time of day; write it like 06:30 or 18:30:15")
        }
        return date
    }

    /// A usage error (status 64) with `message`.
    func usage(_ message: String) -> ExitCode {
        fail(code: "usage", message, status: .usage)
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
