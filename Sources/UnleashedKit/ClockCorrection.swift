import CameraKit

/// A client's clock taken for the host's: how far true time is from the host's wall clock. A
/// Raspberry Pi has no battery-backed clock, and in the field no network sets it; the phone in
/// the photographer's hand has the right time.
///
/// Pure values: what to make of a client's reading (``verdict(clientUnixMs:hostUnixMs:hostSynchronised:)``)
/// and whether a correction still describes the host's clock (``holds(at:)``). The daemon keeps
/// the one in effect.
public struct ClockCorrection: Sendable, Hashable {
    /// The host's two clocks, read together.
    public struct HostReading: Sendable, Hashable {
        /// Unix milliseconds on the host's wall clock.
        public var wallClockMs: Int64
        /// The time since a fixed origin on the host's monotonic clock.
        public var monotonic: Duration

        public init(wallClockMs: Int64, monotonic: Duration) {
            self.wallClockMs = wallClockMs
            self.monotonic = monotonic
        }
    }

    /// What becomes of a client's reading, and why: its raw value is the API's word for it.
    public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
        /// No time service keeps the host's clock: the client's is taken, however close they are.
        case hostNotSynchronised
        /// The host's clock is synchronised yet more than ``ClockCorrection/tolerance`` from the
        /// client's: the client's is taken.
        case hostDiffers
        /// The host's clock is synchronised and within ``ClockCorrection/tolerance`` of the
        /// client's: the host keeps its own.
        case hostAgrees

        /// Whether the client's clock is taken.
        public var takes: Bool { self != .hostAgrees }
    }

    /// How far a synchronised host clock may be from a client's before the client's is taken, and
    /// how far the host's wall clock may move against its monotonic clock before it counts as set.
    /// A request's transit makes a reading a few milliseconds old, well inside it.
    public static let tolerance = Duration.seconds(1)

    /// True time less the host's wall clock, in milliseconds: positive when the host's is behind.
    public let offsetMs: Int64
    /// The host's clocks when the correction was taken.
    public let takenAt: HostReading

    /// The correction a client's reading gives, read against the host's clocks at `reading`.
    public init(clientUnixMs: Int64, at reading: HostReading) {
        offsetMs = clientUnixMs - reading.wallClockMs
        takenAt = reading
    }

    /// Whether to take a client's clock (`clientUnixMs`, its reading as it sent the request) for
    /// the host's (`hostUnixMs` when the request is read): always while no time service keeps
    /// the host's clock, and otherwise only when the two are more than ``tolerance`` apart.
    public static func verdict(clientUnixMs: Int64, hostUnixMs: Int64, hostSynchronised: Bool) -> Verdict {
        guard hostSynchronised else { return .hostNotSynchronised }
        let apart = clientUnixMs.subtractingReportingOverflow(hostUnixMs)
        return apart.overflow || apart.partialValue.magnitude > UInt64(tolerance.wholeMilliseconds) ? .hostDiffers : .hostAgrees
    }

    /// The corrected wall time when the host's clocks read `reading`, in Unix milliseconds.
    public func unixMs(at reading: HostReading) -> Int64 {
        reading.wallClockMs + offsetMs
    }

    /// How far the host's wall clock has moved against its monotonic clock since the correction
    /// was taken, in milliseconds: by far the most when something set it (a time service that
    /// found the network, `date`).
    public func hostClockStep(at reading: HostReading) -> Int64 {
        (reading.wallClockMs - takenAt.wallClockMs) - (reading.monotonic - takenAt.monotonic).wholeMilliseconds
    }

    /// How far apart two clocks are, for people: to the millisecond under a minute, to the
    /// second from a minute on, where a request's transit is noise (`400ms`, `3s250ms`, `2h3s`).
    public static func distanceText(_ offsetMs: Int64) -> String {
        let size = offsetMs.magnitude
        return Duration.milliseconds(size < 60_000 ? size : (size + 500) / 1000 * 1000).compactText
    }

    /// Whether the correction still describes the host's clock: not once the clock has moved more
    /// than ``tolerance`` against its monotonic clock, since whatever set it (a time service,
    /// someone with `date`) meant the host's own reading to stand.
    public func holds(at reading: HostReading) -> Bool {
        hostClockStep(at: reading).magnitude <= UInt64(Self.tolerance.wholeMilliseconds)
    }
}
