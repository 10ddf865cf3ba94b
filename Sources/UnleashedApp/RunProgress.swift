public import Intervalometer

/// Where a run stands, from its journalled `t0` and the records that have arrived: counts,
/// lateness and spread so far, the slot under way and how much is left. Time is passed in, so
/// the live display only prints what this computes.
public struct RunProgress: Sendable {
    public let plan: RunPlan
    /// Monotonic instant of `t0`: from the journalled run once it has begun, else estimated
    /// from the first record that arrives.
    public private(set) var t0: ContinuousClock.Instant?
    public private(set) var t0UnixMs: Int64?
    /// The record of the latest slot.
    public private(set) var last: FrameRecord?
    public private(set) var taken = 0, failed = 0, skipped = 0
    public private(set) var lastLatenessMicros: Int64?, maxLatenessMicros: Int64?
    /// A rig's command spread: the last slot's and the largest.
    public private(set) var lastSpreadMicros: Int64?, maxSpreadMicros: Int64?

    public init(plan: RunPlan) {
        self.plan = plan
    }

    /// Takes `t0` from the run as journalled (`wallMs` is the wall clock at `now`), unless known.
    public mutating func learn(t0UnixMs: Int64, now: ContinuousClock.Instant, wallMs: Int64) {
        guard t0 == nil else { return }
        t0 = now + .milliseconds(t0UnixMs - wallMs)
        self.t0UnixMs = t0UnixMs
    }

    /// Counts `record`, which arrived at `now` (`wallMs` on the wall clock).
    public mutating func note(_ record: FrameRecord, now: ContinuousClock.Instant, wallMs: Int64) {
        // The record is journalled as soon as its work ends: that moment is `t0 + end`.
        let end = Duration.milliseconds(record.completedMs ?? record.sentMs ?? record.scheduledMs)
        if t0 == nil {
            t0 = now - end
            t0UnixMs = wallMs - end.wholeMilliseconds
        }
        if record.frame >= last?.frame ?? 0 { last = record }
        switch record.outcome {
        case .taken: taken += 1
        case .failed: failed += 1
        case .skipped: skipped += 1
        }
        if let lateness = record.latenessMicros {
            lastLatenessMicros = lateness
            maxLatenessMicros = max(maxLatenessMicros ?? lateness, lateness)
        }
        if let spread = record.commandSpreadMicros {
            lastSpreadMicros = spread
            maxSpreadMicros = max(maxSpreadMicros ?? spread, spread)
        }
    }

    /// How many slots the run has, when its stop condition says.
    public var totalSlots: Int? {
        let interval = plan.intervalMs
        switch plan.stop {
        case .frames(let count): return count
        case .duration(let milliseconds): return Int((milliseconds + interval - 1) / interval)
        case .until(let unix):
            guard let t0UnixMs else { return nil }
            return Int(max(unix - t0UnixMs + interval - 1, 0) / interval)
        case .never: return nil
        }
    }

    /// When the slot after the latest one is due, after `t0`.
    public var nextDue: Duration {
        last.map { .milliseconds($0.scheduledMs) + .milliseconds(plan.intervalMs) } ?? .zero
    }

    /// How far `elapsed` is from the latest slot to the next, from 0 to 1.
    public func fractionOfInterval(at elapsed: Duration) -> Double {
        guard let last else { return 0 }
        return min(max((elapsed - .milliseconds(last.scheduledMs)) / .milliseconds(plan.intervalMs), 0), 1)
    }

    /// The time left until the last slot, when the run has a known number of them.
    public func remaining(at elapsed: Duration) -> Duration? {
        guard let total = totalSlots, let last else { return nil }
        let end = Duration.milliseconds(last.scheduledMs) + .milliseconds(plan.intervalMs) * max(total - last.frame, 0)
        return max(end - elapsed, .zero)
    }
}
