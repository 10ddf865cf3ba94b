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
    /// few numbers per record, not the records): for a run that goes on for hours.
    public struct Tally: Sendable {
        private var taken = 0, failed = 0, skipped = 0
        private var firstMs: Int64?
        private var lastMs: Int64?
        private var lateness: [Int64] = []
        /// A slot's spreads, which each camera's record of the slot repeats, once per slot.
        private var commands: [Int64] = []
        private var completions: [Int64] = []
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
            if let micros = frame.latenessMicros { lateness.append(micros) }
            guard frame.part == 1 else { return }
            if let spread = frame.commandSpreadMicros, commandSlots.insert(frame.frame).inserted { commands.append(spread) }
            if let spread = frame.completionSpreadMicros, completionSlots.insert(frame.frame).inserted { completions.append(spread) }
        }

        public var summary: RunSummary {
            RunSummary(taken: taken, failed: failed, skipped: skipped, firstMs: firstMs, lastMs: lastMs,
                       lateness: lateness.sorted(), commands: commands.sorted(), completions: completions.sorted())
        }
    }

    private init(taken: Int, failed: Int, skipped: Int, firstMs: Int64?, lastMs: Int64?,
                 lateness: [Int64], commands: [Int64], completions: [Int64]) {
        self.taken = taken
        self.failed = failed
        self.skipped = skipped
        self.firstMs = firstMs
        self.lastMs = lastMs
        maxLatenessMicros = lateness.last
        p50LatenessMicros = Self.percentile(50, of: lateness)
        p99LatenessMicros = Self.percentile(99, of: lateness)
        p50CommandSpreadMicros = Self.percentile(50, of: commands)
        p99CommandSpreadMicros = Self.percentile(99, of: commands)
        maxCommandSpreadMicros = commands.last
        p99CompletionSpreadMicros = Self.percentile(99, of: completions)
        maxCompletionSpreadMicros = completions.last
    }

    /// Nearest rank: the smallest value with at least `percent`% of the values at or below it,
    /// always one that was measured. `sorted` must be in ascending order.
    public static func percentile(_ percent: Int, of sorted: [Int64]) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        let rank = (percent * sorted.count + 99) / 100
        return sorted[max(rank, 1) - 1]
    }
}
