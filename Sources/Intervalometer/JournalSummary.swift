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
        taken = frames.count { $0.outcome == .taken }
        failed = frames.count { $0.outcome == .failed }
        skipped = frames.count { $0.outcome == .skipped }
        firstMs = frames.map(\.scheduledMs).min()
        lastMs = frames.map { $0.completedMs ?? $0.sentMs ?? $0.scheduledMs }.max()
        let lateness = frames.compactMap(\.latenessMicros).sorted()
        maxLatenessMicros = lateness.last
        p50LatenessMicros = Self.percentile(50, of: lateness)
        p99LatenessMicros = Self.percentile(99, of: lateness)
        let commands = Self.perSlot(frames, \.commandSpreadMicros)
        p50CommandSpreadMicros = Self.percentile(50, of: commands)
        p99CommandSpreadMicros = Self.percentile(99, of: commands)
        maxCommandSpreadMicros = commands.last
        let completions = Self.perSlot(frames, \.completionSpreadMicros)
        p99CompletionSpreadMicros = Self.percentile(99, of: completions)
        maxCompletionSpreadMicros = completions.last
    }

    /// A slot's value, which each camera's record of the slot repeats, once per slot, sorted.
    private static func perSlot(_ frames: [FrameRecord], _ value: KeyPath<FrameRecord, Int64?>) -> [Int64] {
        var seen: Set<Int> = []
        return frames.filter { $0.part == 1 }.compactMap { record in
            guard let value = record[keyPath: value], seen.insert(record.frame).inserted else { return nil }
            return value
        }.sorted()
    }

    /// Nearest rank: the smallest value with at least `percent`% of the values at or below it,
    /// always one that was measured. `sorted` must be in ascending order.
    public static func percentile(_ percent: Int, of sorted: [Int64]) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        let rank = (percent * sorted.count + 99) / 100
        return sorted[max(rank, 1) - 1]
    }
}
