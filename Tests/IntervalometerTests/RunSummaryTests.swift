@testable import Intervalometer
import Testing
import UnleashedTestSupport

struct RunSummaryTests {
    @Test("the summary's percentiles are every value's, by nearest rank, for any number of slots")
    func percentilesAreExact() throws {
        let seed = try TestSeed.forTest()
        var random = seed.generator()
        for count in [1, 2, 3, 99, 100, 101, 1000, 4321] {
            let lateness = (0..<count).map { _ in Int64.random(in: 0...3000, using: &random) }
            let frames = lateness.enumerated().map { index, micros in
                FrameRecord(frame: index + 1, scheduledMs: Int64(index) * 200, latenessMicros: micros, outcome: .taken)
            }
            let summary = RunSummary(frames: frames)
            let sorted = lateness.sorted()
            #expect(summary.p50LatenessMicros == RunSummary.percentile(50, of: sorted), "\(count) slots, \(seed)")
            #expect(summary.p99LatenessMicros == RunSummary.percentile(99, of: sorted), "\(count) slots, \(seed)")
            #expect(summary.maxLatenessMicros == sorted.last, "\(count) slots, \(seed)")
        }
    }

    @Test("a tally holds the distinct values, not one per slot: a day at 200 ms costs what its first hour did")
    func tallyDoesNotGrowWithSlots() throws {
        let seed = try TestSeed.forTest()
        var random = seed.generator()
        var values = RunSummary.Occurrences()
        var afterAnHour = 0
        for slot in 1...432_000 {
            // Lateness as a run sees it: mostly a few hundred microseconds, now and then a stall.
            values.add(slot % 1000 == 0 ? Int64.random(in: 0...50_000, using: &random) : Int64.random(in: 100...900, using: &random))
            if slot == 18_000 { afterAnHour = values.distinct }
        }
        #expect(values.distinct <= afterAnHour + 432, "\(afterAnHour) after an hour, \(values.distinct) after a day, \(seed)")
        #expect(values.distinct < 1_300, "\(seed)")
    }
}
