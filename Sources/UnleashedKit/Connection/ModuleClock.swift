/// Where a module's own timer stands against this host's clock, learned from `keepAlive` round
/// trips (PROTOCOL.md §9.6), so that a shot can be scheduled on the module's timer.
///
/// Each sample brackets one reading of the module's timer between the request leaving and the
/// response arriving; the reading is placed at the midpoint, within half the round trip. Queueing
/// on the way only ever adds delay, so of recent samples the one with the shortest round trip is
/// the truest, as in NTP's clock filter. Timers drift apart by tens of parts per million, so the
/// rate between the two clocks is taken from the best sample of the older and of the newer half
/// of the window, once they are far enough apart to measure it.
///
/// `C` is the host's clock the round trips are timed on: the real monotonic clock in a
/// connection, a test clock in tests.
public struct ModuleClock<C: Clock<Duration>>: Sendable {
    /// One reading of the module's timer.
    public struct Sample: Hashable, Sendable {
        public var sent: C.Instant
        public var received: C.Instant
        /// The timer in the response (`uptimeMicros`).
        public var moduleMicros: UInt64

        public init(sent: C.Instant, received: C.Instant, moduleMicros: UInt64) {
            self.sent = sent
            self.received = max(sent, received)
            self.moduleMicros = moduleMicros
        }

        var roundTrip: Duration { sent.duration(to: received) }
        var midpoint: C.Instant { sent.advanced(by: roundTrip / 2) }
    }

    /// The module's timer at an instant, and how far off that may be.
    public struct Estimate: Hashable, Sendable {
        public var moduleMicros: UInt64
        /// Half the best sample's round trip, plus what an unmeasured drift could add since.
        public var uncertainty: Duration
    }

    /// Samples older than this (behind the newest) are dropped.
    public static var window: Duration { .seconds(60) }
    static var capacity: Int { 64 }
    /// The two halves must be this far apart before a rate is measured.
    static var shortestRateBase: Duration { .seconds(5) }
    /// Rates further from 1 than this are not a crystal's error but a bad sample.
    static var largestDrift: Double { 500e-6 }
    /// What an unmeasured drift is assumed to be at most, for the uncertainty.
    static var assumedDrift: Double { 50e-6 }

    public private(set) var samples: [Sample] = []

    public init() {}

    /// Adds a sample. A timer that went backwards means the module restarted: what was learned
    /// of the earlier timer is dropped.
    public mutating func add(_ sample: Sample) {
        if let newest = samples.last, sample.moduleMicros < newest.moduleMicros || sample.sent < newest.sent {
            samples.removeAll()
        }
        samples.append(sample)
        samples.removeAll { $0.sent.duration(to: sample.sent) > Self.window }
        if samples.count > Self.capacity { samples.removeFirst(samples.count - Self.capacity) }
    }

    /// Forgets every sample: the link changed, and the module may have restarted meanwhile.
    public mutating func reset() {
        samples.removeAll()
    }

    /// The module's timer at `instant`; nil before the first sample.
    public func estimate(at instant: C.Instant) -> Estimate? {
        guard let best = Self.best(samples[...]) else { return nil }
        let rate = self.rate
        let sinceBest = Double(best.midpoint.duration(to: instant).wholeMicroseconds)
        let micros = Double(best.moduleMicros) + sinceBest * (rate ?? 1)
        let drift = rate == nil ? abs(sinceBest) * Self.assumedDrift : 0
        return Estimate(moduleMicros: UInt64(max(0, micros.rounded())),
                        uncertainty: best.roundTrip / 2 + .microseconds(Int64(drift.rounded(.up))))
    }

    /// Module microseconds per host microsecond, from the best samples of the older and newer
    /// halves; nil while they are too close together or disagree beyond any crystal.
    public var rate: Double? {
        guard samples.count >= 4 else { return nil }
        let middle = samples.count / 2
        guard let old = Self.best(samples[..<middle]), let new = Self.best(samples[middle...]),
              old.midpoint.duration(to: new.midpoint) >= Self.shortestRateBase else { return nil }
        let host = Double(old.midpoint.duration(to: new.midpoint).wholeMicroseconds)
        let module = Double(new.moduleMicros) - Double(old.moduleMicros)
        let rate = module / host
        return abs(rate - 1) <= Self.largestDrift ? rate : nil
    }

    private static func best(_ samples: ArraySlice<Sample>) -> Sample? {
        samples.min { $0.roundTrip < $1.roundTrip }
    }
}
