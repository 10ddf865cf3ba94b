import Testing
import UnleashedKit

@Suite("Taking a client's clock for the host's")
struct ClockCorrectionTests {
    /// One row of the decision: whether a time service keeps the host's clock, the client's
    /// reading less the host's in milliseconds, and what becomes of the reading.
    struct Row: Sendable, CustomTestStringConvertible {
        let synchronised: Bool
        let differenceMs: Int64
        let verdict: ClockCorrection.Verdict

        var testDescription: String { "\(synchronised ? "synchronised" : "not synchronised"), \(differenceMs) ms → \(verdict)" }
    }

    /// Every rule of the decision, and its edges: "more than 1 s" either way.
    static let rows: [Row] = [
        Row(synchronised: false, differenceMs: 0, verdict: .hostNotSynchronised),
        Row(synchronised: false, differenceMs: 3, verdict: .hostNotSynchronised),
        Row(synchronised: false, differenceMs: -900, verdict: .hostNotSynchronised),
        Row(synchronised: false, differenceMs: 7_200_000, verdict: .hostNotSynchronised),
        Row(synchronised: false, differenceMs: -1_000_000_000_000, verdict: .hostNotSynchronised),
        Row(synchronised: true, differenceMs: 0, verdict: .hostAgrees),
        Row(synchronised: true, differenceMs: 250, verdict: .hostAgrees),
        Row(synchronised: true, differenceMs: 1000, verdict: .hostAgrees),
        Row(synchronised: true, differenceMs: -1000, verdict: .hostAgrees),
        Row(synchronised: true, differenceMs: 1001, verdict: .hostDiffers),
        Row(synchronised: true, differenceMs: -1001, verdict: .hostDiffers),
        Row(synchronised: true, differenceMs: 7_200_000, verdict: .hostDiffers),
        Row(synchronised: true, differenceMs: -7_200_000, verdict: .hostDiffers),
    ]

    /// The host's clock at 2026-11-29T12:00:00Z.
    static let hostUnixMs: Int64 = 1_764_417_600_000

    @Test("the verdict on a reading", arguments: rows)
    func verdict(_ row: Row) {
        let verdict = ClockCorrection.verdict(clientUnixMs: Self.hostUnixMs + row.differenceMs, hostUnixMs: Self.hostUnixMs,
                                              hostSynchronised: row.synchronised)
        #expect(verdict == row.verdict)
        #expect(verdict.takes == (row.verdict != .hostAgrees))
    }

    @Test("readings as far apart as Int64 goes are taken, not trapped on")
    func extremes() {
        #expect(ClockCorrection.verdict(clientUnixMs: .max, hostUnixMs: .min, hostSynchronised: true) == .hostDiffers)
        #expect(ClockCorrection.verdict(clientUnixMs: .min, hostUnixMs: .max, hostSynchronised: true) == .hostDiffers)
    }

    @Test("a correction is the client's reading less the host's, and follows the host's clock on")
    func correctedTime() {
        let taken = ClockCorrection.HostReading(wallClockMs: Self.hostUnixMs, monotonic: .seconds(50))
        let correction = ClockCorrection(clientUnixMs: Self.hostUnixMs + 7_200_000, at: taken)
        #expect(correction.offsetMs == 7_200_000)
        let later = ClockCorrection.HostReading(wallClockMs: Self.hostUnixMs + 60_000, monotonic: .seconds(110))
        #expect(correction.unixMs(at: later) == Self.hostUnixMs + 7_260_000)
    }

    @Test("a distance is told to the millisecond under a minute, to the second from a minute on")
    func distanceText() {
        let told: [(Int64, String)] = [(0, "0s"), (400, "400ms"), (-3250, "3s250ms"), (59_999, "59s999ms"), (60_000, "1m"),
                                       (7_199_975, "2h"), (-7_203_499, "2h3s"), (7_203_500, "2h4s")]
        #expect(told.map { ClockCorrection.distanceText($0.0) } == told.map(\.1))
    }

    /// One row of whether a correction still holds: how far the host's wall clock moved and how
    /// far its monotonic clock did, since the correction was taken.
    struct StepRow: Sendable, CustomTestStringConvertible {
        let wallMovedMs: Int64
        let monotonicMoved: Duration
        let holds: Bool

        var testDescription: String { "wall +\(wallMovedMs) ms, monotonic +\(monotonicMoved) → \(holds ? "holds" : "ends")" }
    }

    static let steps: [StepRow] = [
        StepRow(wallMovedMs: 0, monotonicMoved: .zero, holds: true),
        StepRow(wallMovedMs: 3_600_000, monotonicMoved: .seconds(3600), holds: true),
        // A slewed or drifting clock stays within the tolerance.
        StepRow(wallMovedMs: 3_601_000, monotonicMoved: .seconds(3600), holds: true),
        StepRow(wallMovedMs: 3_599_000, monotonicMoved: .seconds(3600), holds: true),
        // Something set the wall clock: a time service that found the network, `date`.
        StepRow(wallMovedMs: 3_601_001, monotonicMoved: .seconds(3600), holds: false),
        StepRow(wallMovedMs: 7_260_000, monotonicMoved: .seconds(60), holds: false),
        StepRow(wallMovedMs: -5000, monotonicMoved: .seconds(60), holds: false),
    ]

    @Test("a correction ends once the host's clock was set", arguments: steps)
    func holds(_ row: StepRow) {
        let taken = ClockCorrection.HostReading(wallClockMs: Self.hostUnixMs, monotonic: .seconds(50))
        let correction = ClockCorrection(clientUnixMs: Self.hostUnixMs + 7_200_000, at: taken)
        let now = ClockCorrection.HostReading(wallClockMs: Self.hostUnixMs + row.wallMovedMs, monotonic: .seconds(50) + row.monotonicMoved)
        #expect(correction.holds(at: now) == row.holds)
        #expect(correction.hostClockStep(at: now) == row.wallMovedMs - row.monotonicMoved.components.seconds * 1000)
    }
}
