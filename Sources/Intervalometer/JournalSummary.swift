/// A run at a glance: how many slots were shot, failed or skipped, and how late the commands went
/// out, which is what tells whether a time-lapse kept its rhythm.
public struct RunSummary: Codable, Hashable, Sendable {
    /// Records (one per bracket picture) the camera reported.
    public var taken: Int
    /// Records whose command failed.
    public var failed: Int
    /// Records of slots that passed without a command.
    public var skipped: Int
    /// When the earliest recorded slot was due, milliseconds after `t0`; nil without frames.
    public var firstMs: Int64?
    /// When the last work ended (completed, else sent, else due), milliseconds after `t0`.
    public var lastMs: Int64?
    /// The greatest lateness of a command, in microseconds; nil when no command went out.
    public var maxLatenessMicros: Int64?
    /// The median lateness (nearest rank), in microseconds.
    public var p50LatenessMicros: Int64?
    /// The 99th percentile of lateness (nearest rank), in microseconds.
    public var p99LatenessMicros: Int64?
    /// In a rig: the median, 99th percentile and greatest spread between a slot's first and
    /// last command (one value per slot), in microseconds; nil for one camera.
    public var p50CommandSpreadMicros: Int64?
    public var p99CommandSpreadMicros: Int64?
    public var maxCommandSpreadMicros: Int64?
    /// In a rig: the 99th percentile and greatest spread between a slot's first and last
    /// reported picture.
    public var p99CompletionSpreadMicros: Int64?
    public var maxCompletionSpreadMicros: Int64?

    /// Summarises `frames`, the records of one run.
    public init(frames: [FrameRecord]) {
        var tally = Tally()
        for frame in frames { tally.add(frame) }
        self = tally.summary
    }

    /// A summary taken in one record at a time, keeping only what the summary is made of (a
    /// few numbers, not the records): for a run that goes on for days.
    public struct Tally: Sendable {
        private var taken = 0, failed = 0, skipped = 0
        private var firstMs: Int64?
        private var lastMs: Int64?
        private var lateness = Occurrences()
        /// A slot's spreads, which each camera's record of the slot repeats, once per slot.
        private var commands = Occurrences()
        private var completions = Occurrences()
        private var commandSlots: Set<Int> = []
        private var completionSlots: Set<Int> = []

        public init() {}

        public mutating func add(_ frame: FrameRecord) {
            switch frame.outcome {
            case .taken: taken += 1
            case .failed: failed += 1
            case .skipped: skipped += 1
            }
            firstMs = min(firstMs ?? frame.scheduledMs, frame.scheduledMs)
            let last = frame.completedMs ?? frame.sentMs ?? frame.scheduledMs
            lastMs = max(lastMs ?? last, last)
            if let micros = frame.latenessMicros { lateness.add(micros) }
            guard frame.part == 1 else { return }
            if let spread = frame.commandSpreadMicros, commandSlots.insert(frame.frame).inserted { commands.add(spread) }
            if let spread = frame.completionSpreadMicros, completionSlots.insert(frame.frame).inserted { completions.add(spread) }
        }

        public var summary: RunSummary {
            RunSummary(taken: taken, failed: failed, skipped: skipped, firstMs: firstMs, lastMs: lastMs,
                       lateness: lateness, commands: commands, completions: completions)
        }
    }

    /// Values with how often each came. The percentiles are those of every value, exactly, but
    /// the memory grows with the distinct values (a run's lateness in microseconds takes a few
    /// thousand) rather than with the slots, and a summary sorts those, not every slot's.
    struct Occurrences: Sendable {
        private var counts: [Int64: Int] = [:]
        private var total = 0

        mutating func add(_ value: Int64) {
            counts[value, default: 0] += 1
            total += 1
        }

        /// How many different values it holds: what its memory grows with.
        var distinct: Int { counts.count }

        /// The values at `percents` by nearest rank (``RunSummary/percentile(_:of:)``), then the
        /// largest, from one sort of the distinct values; nils when there are none.
        func percentiles(_ percents: Int...) -> (at: [Int64?], largest: Int64?) {
            let ordered = counts.sorted { $0.key < $1.key }
            let found = percents.map { percent -> Int64? in
                let wanted = RunSummary.rank(percent, of: total)
                var seen = 0
                return ordered.first { value in
                    seen += value.value
                    return seen >= wanted
                }?.key
            }
            return (found, ordered.last?.key)
        }
    }

    private init(taken: Int, failed: Int, skipped: Int, firstMs: Int64?, lastMs: Int64?,
                 lateness: Occurrences, commands: Occurrences, completions: Occurrences) {
        self.taken = taken
        self.failed = failed
        self.skipped = skipped
        self.firstMs = firstMs
        self.lastMs = lastMs
        let lateness = lateness.percentiles(50, 99), commands = commands.percentiles(50, 99)
        let completions = completions.percentiles(99)
        (p50LatenessMicros, p99LatenessMicros, maxLatenessMicros) = (lateness.at[0], lateness.at[1], lateness.largest)
        (p50CommandSpreadMicros, p99CommandSpreadMicros, maxCommandSpreadMicros) = (commands.at[0], commands.at[1], commands.largest)
        (p99CompletionSpreadMicros, maxCompletionSpreadMicros) = (completions.at[0], completions.largest)
    }

    /// The nearest rank's position (1-based) among `count` values: the smallest with at least
    /// `percent`% of them at or below it.
    static func rank(_ percent: Int, of count: Int) -> Int {
        max((percent * count + 99) / 100, 1)
    }

    /// Nearest rank: the smallest value with at least `percent`% of the values at or below it,
    /// always one that was measured. `sorted` must be in ascending order.
    public static func percentile(_ percent: Int, of sorted: [Int64]) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        return sorted[rank(percent, of: sorted.count) - 1]
    }
}
