import CameraKit
public import Foundation
public import JSON
public import Intervalometer
public import UnleashedKit

/// Why the words of a command line make no plan: a usage error (exit status 64), with the code
/// a `--json` error carries (`usage`, `invalidDuration`, `programFile`, `invalidArgument`).
public struct PlanRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(_ message: String, code: String = "usage") {
        (self.code, self.message) = (code, message)
    }

    public var description: String { message }
}

/// The words of a duration or a time of day read for an option, refused with the option's name.
public enum PlanText {
    /// A duration (`250ms`, `30s`, `1m30s`, `2h`).
    public static func duration(_ text: String, for what: String) throws(PlanRefusal) -> Duration {
        do throws(DurationTextError) {
            return try readDuration(text)
        } catch .tooLong {
            throw PlanRefusal("\(what): '\(text)' is too long to be counted in milliseconds; write a duration like 30s, 1m30s or 2h",
                              code: "invalidDuration")
        } catch {
            throw PlanRefusal("\(what): '\(text)' is not a duration; write it like 250ms, 30s, 1m30s or 2h", code: "invalidDuration")
        }
    }

    /// A duration in whole milliseconds, longer than 0 (or 0 when `allowZero`), and at most
    /// `atMost` when given (`limit` says what the limit is, for the message).
    public static func milliseconds(_ text: String, for option: String, allowZero: Bool = false, atMost: Duration? = nil,
                                    limit: String = "") throws(PlanRefusal) -> Int64 {
        let duration = try duration(text, for: option)
        let value = duration.wholeMilliseconds
        guard value > 0 || (allowZero && value == 0) else { throw PlanRefusal("\(option): the duration must be longer than 0") }
        if let atMost, duration > atMost { throw PlanRefusal("\(option): \(text) is too long; \(limit)") }
        return value
    }

    /// An interval between slots (`--interval`, `--every`, `--night-interval`, a clip's
    /// length): longer than 0 and at most a day.
    public static func interval(_ text: String, for option: String) throws(PlanRefusal) -> Int64 {
        try milliseconds(text, for: option, atMost: .seconds(86_400), limit: "it can be at most a day (24h)")
    }

    /// The next local time of day `text` (`06:30`, `18:30:15`) names after `moment`.
    public static func localTime(_ text: String, for option: String, after moment: Date,
                                 clock: LocalClock = .system) throws(PlanRefusal) -> LocalTime.Resolved {
        do throws(LocalTime.Failure) {
            return try LocalTime.next(text, after: moment, clock: clock)
        } catch {
            switch error {
            case .notATime:
                throw PlanRefusal("\(option): '\(text)' is not a time of day; write it like 06:30 or 18:30:15")
            case .skipped:
                throw PlanRefusal("\(option) \(error.skippedReason(text) ?? text)", code: "skippedTime")
            }
        }
    }
}

/// A time of day (`--start-at`, `--until`) that may surprise: it falls on a later day than
/// today (it has passed today, or comes after the run's start), or the clock reads it twice that
/// night (the clocks go back). Told so that no one is surprised by a run that starts or stops a
/// day, or an hour, other than they meant.
public struct PlanNotice: Hashable, Sendable {
    public let option: String
    public let text: String
    public let moment: Date
    /// `today`, `tomorrow`, or the date.
    public let day: String
    /// 1 or 2 when the time comes twice that day: which of the two this is.
    public let occurrence: Int?
    /// The clock's offset from UTC at the moment, in seconds.
    public let offset: Int

    /// Nil when `resolved` is today and comes once.
    init?(_ option: String, _ text: String, _ resolved: LocalTime.Resolved, now: Date, clock: LocalClock = .system) {
        let laterDay = LocalTime.daysAhead(of: resolved.instant, from: now, clock: clock) > 0
        guard laterDay || resolved.occurrence != nil else { return nil }
        (self.option, self.text, self.moment) = (option, text, resolved.instant)
        (occurrence, offset) = (resolved.occurrence, resolved.offset)
        day = LocalTime.day(of: resolved.instant, from: now, clock: clock)
    }

    /// The code scripts go by: `repeatedTime` when the time comes twice, else `laterDay`.
    public var code: String { occurrence == nil ? "laterDay" : "repeatedTime" }

    /// `{"code", "option", "time", "day", "message", "at", "occurrence"}`, as `--json` tells it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "code": .string(code), "option": .string(option), "time": .string(text), "day": .string(day), "message": .string(message),
            "at": .string(LocalTime.timestamp(UInt64(max(moment.timeIntervalSince1970 * 1000, 0)))),
        ]
        if let occurrence { members["occurrence"] = .integer(Int64(occurrence)) }
        return .object(members)
    }

    public var message: String {
        let when = day == "today" ? "today" : day == "tomorrow" ? day : "on \(day)"
        if let occurrence {
            let which = occurrence == 1 ? "the first" : "the second"
            return "\(option) \(text) comes twice \(when) (the clocks go back): "
                + (option == "--start-at" ? "the run starts at \(which)" : "the run stops at \(which)")
                + ", \(text) \(LocalTime.offsetText(offset))"
        }
        return option == "--start-at"
            ? "\(option) \(text) is \(when): \(text) has passed today, so the run starts \(when) at \(text)"
            : "\(option) \(text) is \(when): the run stops at the first \(text) after it starts, \(when)"
    }
}

/// A plan read from a command line, the wait for its first slot, and what to tell about it.
public struct PlannedRun: Hashable, Sendable {
    public var plan: RunPlan
    public var delay: Duration
    public var notices: [PlanNotice]
}

/// When a run's first slot comes, as written: after a delay (`--start-in`) or at a local time
/// (`--start-at`).
public struct StartRequest: Hashable, Sendable {
    public var startIn: String?
    public var startAt: String?

    /// The longest wait for slot 1 that `--start-in` takes.
    public static let longestDelay = Duration.seconds(365 * 86_400)

    public init(startIn: String? = nil, startAt: String? = nil) {
        (self.startIn, self.startAt) = (startIn, startAt)
    }

    /// How long to wait before slot 1, and the notice when `--start-at` is not today.
    public func start(now: Date) throws(PlanRefusal) -> (delay: Duration, notice: PlanNotice?) {
        guard startIn == nil || startAt == nil else { throw PlanRefusal("choose --start-in or --start-at, not both") }
        if let startIn {
            let delay = try PlanText.milliseconds(startIn, for: "--start-in", allowZero: true, atMost: Self.longestDelay,
                                                  limit: "a run starts within a year (8760h)")
            return (.milliseconds(delay), nil)
        }
        if let startAt {
            let resolved = try PlanText.localTime(startAt, for: "--start-at", after: now)
            let seconds = resolved.instant.timeIntervalSince(now)
            return (.milliseconds(Int64(max(seconds, 0) * 1000)), PlanNotice("--start-at", startAt, resolved, now: now))
        }
        return (.zero, nil)
    }

    /// `video record LENGTH`: one clip, journalled as a one-slot run.
    public func recording(_ length: String, now: Date) throws(PlanRefusal) -> PlannedRun {
        let clipMs = try PlanText.interval(length, for: "video record")
        let (delay, notice) = try start(now: now)
        return PlannedRun(plan: RunPlan(intervalMs: clipMs, stop: .frames(1), exposure: .video(milliseconds: clipMs)),
                          delay: delay, notices: [notice].compactMap { $0 })
    }
}

/// When a scheduled run stops and how it treats its slots, as written: what `timelapse` and
/// `video clips` share.
public struct ScheduleRequest: Hashable, Sendable {
    public var frames: Int?
    public var duration: String?
    public var until: String?
    public var start = StartRequest()
    public var overrun = OverrunPolicy.skip.rawValue
    public var gap: String?
    public var hook: String?
    public var hookTimeout: String?

    public init(frames: Int? = nil, duration: String? = nil, until: String? = nil, start: StartRequest = StartRequest(),
                overrun: String = OverrunPolicy.skip.rawValue, gap: String? = nil, hook: String? = nil, hookTimeout: String? = nil) {
        (self.frames, self.duration, self.until, self.start) = (frames, duration, until, start)
        (self.overrun, self.gap, self.hook, self.hookTimeout) = (overrun, gap, hook, hookTimeout)
    }

    /// The first option given that would change a stored plan (refused on `--resume`).
    public var givenOption: String? {
        let given: [(String, Bool)] = [
            ("--frames", frames != nil), ("--duration", duration != nil), ("--until", until != nil),
            ("--start-in", start.startIn != nil), ("--start-at", start.startAt != nil), ("--gap", gap != nil), ("--hook", hook != nil),
            ("--hook-timeout", hookTimeout != nil), ("--overrun", overrun != OverrunPolicy.skip.rawValue),
        ]
        return given.first(where: \.1)?.0
    }

    /// The plan for slots `intervalMs` apart, each doing `exposure`. `--until` is the first such
    /// time after the run starts. The numbers themselves are checked by ``RunPlan/validate()``
    /// when the run begins.
    public func plan(intervalMs: Int64, exposure: ExposurePlan, now: Date) throws(PlanRefusal) -> PlannedRun {
        guard let policy = OverrunPolicy(rawValue: overrun) else {
            throw PlanRefusal("--overrun: '\(overrun)' is not a policy; choose skip, defer or burst")
        }
        let (delay, startNotice) = try start.start(now: now)
        let startMoment = now.addingTimeInterval(Double(delay.wholeMilliseconds) / 1000)
        let (stop, stopNotice) = try stop(intervalMs: intervalMs, startingAt: startMoment, now: now)
        let gapMs = try gap.map { text throws(PlanRefusal) in try PlanText.milliseconds(text, for: "--gap", allowZero: true) } ?? 0
        let hookTimeoutMs = try hookTimeout.map { text throws(PlanRefusal) in try PlanText.milliseconds(text, for: "--hook-timeout") }
        if hookTimeoutMs != nil, hook == nil { throw PlanRefusal("--hook-timeout is the time limit of --hook; give the hook too") }
        let plan = RunPlan(intervalMs: intervalMs, stop: stop, exposure: exposure, overrun: policy, minimumGapMs: gapMs,
                           hook: try hook.map { program throws(PlanRefusal) in try Self.checkedHook(program) },
                           hookTimeoutMs: hookTimeoutMs)
        return PlannedRun(plan: plan, delay: delay, notices: [startNotice, stopNotice].compactMap { $0 })
    }

    /// `video clips LENGTH --every INTERVAL`: a clip of LENGTH in every slot.
    public func clips(_ length: String, every: String, now: Date) throws(PlanRefusal) -> PlannedRun {
        let clipMs = try PlanText.interval(length, for: "video clips")
        return try plan(intervalMs: try PlanText.interval(every, for: "--every"), exposure: .video(milliseconds: clipMs), now: now)
    }

    private func stop(intervalMs: Int64, startingAt start: Date, now: Date) throws(PlanRefusal) -> (StopCondition, PlanNotice?) {
        guard [frames != nil, duration != nil, until != nil].count(where: { $0 }) == 1 else {
            throw PlanRefusal("say when to stop with one of --frames N, --duration 2h or --until 06:30")
        }
        if let frames {
            guard frames >= 1 else { throw PlanRefusal("--frames: a run needs at least 1 slot") }
            guard !Int64(frames).multipliedReportingOverflow(by: intervalMs).overflow else {
                throw PlanRefusal("--frames: \(frames) slots \(Duration.milliseconds(intervalMs).compactText) apart are too long "
                    + "a run to be counted; use fewer, or --duration")
            }
            return (.frames(frames), nil)
        }
        if let duration { return (.duration(milliseconds: try PlanText.milliseconds(duration, for: "--duration")), nil) }
        let text = until ?? ""
        let end = try PlanText.localTime(text, for: "--until", after: start)
        return (.until(unixMilliseconds: Int64(end.instant.timeIntervalSince1970 * 1000)), PlanNotice("--until", text, end, now: now))
    }

    /// An absolute path to an executable hook, so that a resumed run finds it from anywhere.
    private static func checkedHook(_ program: String) throws(PlanRefusal) -> String {
        let path = URL(fileURLWithPath: program).standardizedFileURL.path
        if let problem = HookRunner.problem(with: path) { throw PlanRefusal("--hook: \(problem)") }
        return path
    }
}

/// A `timelapse` as written: the interval, what each slot does (the camera's exposure, a bulb
/// exposure, a bracket or a ramp), and the schedule.
public struct PlanRequest: Hashable, Sendable {
    public var interval: String?
    public var bulb: String?
    public var bracket: String?
    /// `["auto"]` or `["program", FILE]`; empty for no ramp.
    public var ramp: [String] = []
    public var minISO: UInt32?
    public var maxISO: UInt32?
    public var rampApertures: [String] = []
    public var rampGap: String?
    public var nightInterval: String?
    public var schedule = ScheduleRequest()

    public init(interval: String? = nil, bulb: String? = nil, bracket: String? = nil, ramp: [String] = [], minISO: UInt32? = nil,
                maxISO: UInt32? = nil, rampApertures: [String] = [], rampGap: String? = nil, nightInterval: String? = nil,
                schedule: ScheduleRequest = ScheduleRequest()) {
        (self.interval, self.bulb, self.bracket, self.ramp, self.minISO, self.maxISO) = (interval, bulb, bracket, ramp, minISO, maxISO)
        (self.rampApertures, self.rampGap, self.nightInterval, self.schedule) = (rampApertures, rampGap, nightInterval, schedule)
    }

    /// The plan, reading a ramp program's file with `read`.
    public func plan(now: Date, read: (URL) throws -> Data = { try Data(contentsOf: $0) }) throws(PlanRefusal) -> PlannedRun {
        guard let interval else { throw PlanRefusal("say how often to shoot: --interval 5s (or --resume ID to continue a run)") }
        let intervalMs = try PlanText.interval(interval, for: "--interval")
        guard [bulb != nil, bracket != nil, !ramp.isEmpty].filter({ $0 }).count <= 1 else {
            throw PlanRefusal("choose one of --bulb, --bracket and --ramp")
        }
        var exposure = ExposurePlan.camera
        if !ramp.isEmpty { exposure = .ramp(plan: try rampPlan(intervalMs: intervalMs, read: read)) }
        let rampOnly = [("--night-interval", nightInterval != nil), ("--max-iso", maxISO != nil), ("--min-iso", minISO != nil),
                        ("--ramp-aperture", !rampApertures.isEmpty), ("--ramp-gap", rampGap != nil)]
        if ramp.isEmpty, let given = rampOnly.first(where: \.1)?.0 { throw PlanRefusal("\(given) goes with --ramp") }
        if let bulb { exposure = .bulb(milliseconds: try PlanText.milliseconds(bulb, for: "--bulb")) }
        if let bracket {
            guard let parsed = Self.bracket(bracket) else {
                throw PlanRefusal("--bracket: '\(bracket)' is not a bracket; write COUNTxSTEP with an odd count of 3 or more "
                    + "and a step in thirds of a stop, like 3x1ev, 5x2/3ev or 3x1/3ev")
            }
            exposure = parsed
        }
        return try schedule.plan(intervalMs: intervalMs, exposure: exposure, now: now)
    }

    /// The first option given that `--resume` refuses: the run continues with its stored plan.
    public var resumeConflict: PlanRefusal? {
        let planOptions = [("--interval", interval != nil), ("--bulb", bulb != nil), ("--bracket", bracket != nil), ("--ramp", !ramp.isEmpty),
                           ("--night-interval", nightInterval != nil)]
        return (planOptions.first(where: \.1)?.0 ?? schedule.givenOption).map {
            PlanRefusal("\($0) cannot be changed on --resume: the run continues with the plan it was started with")
        }
    }

    /// `3x1ev` → 3 pictures 3/3 stop apart; `5x2/3ev`, `3x1/3ev`, `3x2ev`.
    public static func bracket(_ text: String) -> ExposurePlan? {
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

    /// The ramp's limits.
    private func rampPlan(intervalMs: Int64, read: (URL) throws -> Data) throws(PlanRefusal) -> RampPlan {
        var plan = RampPlan()
        switch ramp.count {
        case 1 where ramp[0] == "auto":
            break
        case 2 where ramp[0] == "program":
            plan.program = try program(ramp[1], intervalMs: intervalMs, read: read)
        default:
            throw PlanRefusal("--ramp: '\(ramp.joined(separator: " "))' is not a ramp; write --ramp auto or --ramp program FILE")
        }
        if let minISO { plan.minISO = minISO }
        if let maxISO { plan.maxISO = maxISO }
        guard plan.minISO <= plan.maxISO else { throw PlanRefusal("--min-iso \(plan.minISO) is above --max-iso \(plan.maxISO)") }
        plan.apertures = rampApertures
        if let rampGap { plan.gapMs = try PlanText.milliseconds(rampGap, for: "--ramp-gap") }
        if let nightInterval { plan.nightIntervalMs = try PlanText.interval(nightInterval, for: "--night-interval") }
        return plan
    }

    /// The keyframes of a program file.
    private func program(_ path: String, intervalMs: Int64, read: (URL) throws -> Data) throws(PlanRefusal) -> RampProgram {
        let data: Data
        do {
            data = try read(URL(fileURLWithPath: path))
        } catch {
            throw PlanRefusal("--ramp program: cannot read \(path): \(error.localizedDescription)", code: "programFile")
        }
        do {
            return try RampProgram(json: data, intervalMs: intervalMs)
        } catch {
            throw PlanRefusal("--ramp program \(path): \(error)", code: "programFile")
        }
    }
}
