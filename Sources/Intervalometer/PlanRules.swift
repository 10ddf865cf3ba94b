import CameraKit
import UnleashedKit

/// The field of a plan a ``PlanProblem`` is about, by its path in a job document
/// (`exposure.count`), so that a client is told which of its fields to fix.
public enum PlanField: String, CaseIterable, Hashable, Sendable {
    case intervalMs, minimumGapMs, frames, durationMs
    case bracketCount = "exposure.count"
    case bracketStep = "exposure.stepThirds"
    case bulbLength = "exposure.ms"
    case clipLength = "exposure.clipMs"
    case rampISO = "exposure.maxISO"
    case rampGap = "exposure.gapMs"
    case rampRate = "exposure.maxRate"
    case rampNightInterval = "exposure.nightIntervalMs"
    case rampProgram = "exposure.program"

    /// The path's parts: `["exposure", "count"]`.
    public var path: [String] { rawValue.split(separator: ".").map(String.init) }
}

/// A plan that cannot work whatever camera runs it: a number out of range, or an interval too
/// short for the slot's fixed exposure. What depends on the camera (its shutter speed, bulb
/// mode, ladders) is checked by the run against the camera.
public enum PlanProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// `field` is out of range: `detail` says how ("must be longer than 0"); `subject` names it
    /// in a sentence of its own ("the interval"), or is nil when `detail` is one already.
    case outOfRange(PlanField, subject: String?, detail: String)
    /// The interval is shorter than a slot needs.
    case intervalTooShort(minimumMs: Int64, reason: String)

    /// The field to fix.
    public var field: PlanField {
        switch self {
        case .outOfRange(let field, _, _): field
        case .intervalTooShort: .intervalMs
        }
    }

    /// What is wrong, to follow the field's name (`intervalMs: must be longer than 0`).
    public var detail: String {
        switch self {
        case .outOfRange(_, _, let detail): detail
        case .intervalTooShort(let minimum, let reason): TimelapseError.intervalTooShort(minimumMs: minimum, reason: reason).description
        }
    }

    /// What is wrong, as a sentence of its own (`the interval must be longer than 0`).
    public var description: String {
        switch self {
        case .outOfRange(_, let subject, let detail): subject.map { "\($0) \(detail)" } ?? detail
        case .intervalTooShort: detail
        }
    }

    /// The run's error for it.
    public var timelapseError: TimelapseError {
        switch self {
        case .outOfRange: .invalidPlan(description)
        case .intervalTooShort(let minimum, let reason): .intervalTooShort(minimumMs: minimum, reason: reason)
        }
    }
}

extension RunPlan {
    /// Checks the plan's numbers, the one place their rules live: the engine checks them before
    /// a run, and the daemon before it looks for the camera (so that a client learns of its own
    /// mistakes first). Throws the first problem, in the order of the plan's fields.
    public func validate() throws(PlanProblem) {
        guard intervalMs > 0 else { throw .outOfRange(.intervalMs, subject: "the interval", detail: "must be longer than 0") }
        guard minimumGapMs >= 0 else { throw .outOfRange(.minimumGapMs, subject: "the minimum gap", detail: "cannot be negative") }
        switch stop {
        case .frames(let count) where count < 1: throw .outOfRange(.frames, subject: nil, detail: "a run needs at least 1 frame")
        case .duration(let milliseconds) where milliseconds <= 0:
            throw .outOfRange(.durationMs, subject: "the duration", detail: "must be longer than 0")
        default: break
        }
        switch exposure {
        case .camera: break
        case .bulb(let milliseconds): try checkTimedSlot(milliseconds, "bulb exposure", field: .bulbLength)
        case .video(let milliseconds): try checkTimedSlot(milliseconds, "clip", field: .clipLength)
        case .bracket(let count, let step):
            guard count >= 3, count % 2 == 1 else {
                throw .outOfRange(.bracketCount, subject: nil, detail: "a bracket has an odd number of frames, 3 or more")
            }
            guard step >= 1 else { throw .outOfRange(.bracketStep, subject: nil, detail: "a bracket steps by at least 1/3 stop") }
        case .ramp(let ramp): try check(ramp)
        }
    }

    /// A slot of fixed length (a bulb exposure, a clip) lasts at least 1 ms and fits the
    /// interval with the gap.
    private func checkTimedSlot(_ milliseconds: Int64, _ what: String, field: PlanField) throws(PlanProblem) {
        guard milliseconds >= 1 else { throw .outOfRange(field, subject: nil, detail: "\(English.withArticle(what)) lasts at least 1 ms") }
        let needed = milliseconds + minimumGapMs
        guard needed <= intervalMs else {
            throw .intervalTooShort(minimumMs: needed,
                                    reason: English.withArticle("\(Duration.milliseconds(milliseconds).compactText) \(what)") + gapText)
        }
    }

    /// ` plus a 300ms gap`, or nothing without a gap.
    var gapText: String {
        minimumGapMs > 0 ? " plus " + English.withArticle("\(Duration.milliseconds(minimumGapMs).compactText) gap") : ""
    }

    /// An exposure ramp's limits and intervals, each longer than the gap it leaves.
    private func check(_ ramp: RampPlan) throws(PlanProblem) {
        guard ramp.minISO <= ramp.maxISO else { throw .outOfRange(.rampISO, subject: nil, detail: "the ramp's lowest ISO is above its highest") }
        guard ramp.gapMs >= 0 else { throw .outOfRange(.rampGap, subject: "the ramp's gap", detail: "cannot be negative") }
        guard ramp.maxRate > 0 else { throw .outOfRange(.rampRate, subject: "the ramp's largest rate", detail: "must be above 0 stops an hour") }
        let gap = Duration.milliseconds(ramp.gapMs).compactText
        guard intervalMs > ramp.gapMs else {
            throw .intervalTooShort(minimumMs: ramp.gapMs + 1, reason: "the \(gap) gap the ramp leaves after each exposure")
        }
        if let night = ramp.nightIntervalMs, night <= ramp.gapMs {
            throw .outOfRange(.rampNightInterval, subject: "the night interval", detail: "must be longer than the \(gap) gap")
        }
        if let shortest = ramp.program?.intervalRange?.lowerBound, shortest <= .milliseconds(ramp.gapMs) {
            throw .outOfRange(.rampProgram, subject: "the program's \(shortest.compactText) interval", detail: "must be longer than the \(gap) gap")
        }
    }
}
