/// How long to wait for a response before sending a request again, learned from the link's round
/// trips as TCP learns it (RFC 6298): a smoothed round trip (SRTT) and its variation (RTTVAR), and
/// a timeout of `SRTT + max(G, 4 · RTTVAR)`, held between ``Bounds/minimum`` and
/// ``Bounds/maximum``.
///
/// A plain value with no clock: the session times each request and hands the round trip over.
/// Round trips of requests that were sent more than once are never added (Karn's rule): the
/// response may answer any of the copies.
public struct RoundTripEstimator: Hashable, Sendable {
    /// The limits the timeout is kept within, and where it starts.
    public struct Bounds: Hashable, Sendable {
        /// The shortest timeout, whatever the round trips: it keeps a run of equal round trips
        /// (whose variation falls towards zero) from sending again before a slower answer is due.
        public var minimum: Duration
        /// The longest timeout, after any backing off: a lost request is sent again at least this often.
        public var maximum: Duration
        /// The timeout before the first round trip is known.
        public var initial: Duration
        /// The clock's granularity `G`: the least margin above the smoothed round trip.
        public var granularity: Duration

        public init(minimum: Duration, maximum: Duration, initial: Duration, granularity: Duration) {
            precondition(minimum > .zero && minimum <= initial && initial <= maximum, "the bounds must be 0 < minimum ≤ initial ≤ maximum")
            self.minimum = minimum
            self.maximum = maximum
            self.initial = initial
            self.granularity = granularity
        }

        /// A module's link. A BLE response comes back at the earliest one connection event after
        /// the request's write, often two: the shortest interval BLE allows is 7.5 ms, so 25 ms
        /// (three such intervals and some scheduling) is below no real round trip and still a
        /// small part of a time-lapse slot. 1 s caps the wait well inside a request's 3 s time
        /// limit (PROTOCOL.md §9.1), so even a backed-off request gets two more tries. Before
        /// any round trip is known the wait is RFC 6298's 1 s.
        public static let moduleLink = Bounds(
            minimum: .milliseconds(25), maximum: .seconds(1), initial: .seconds(1), granularity: .milliseconds(1))
    }

    public let bounds: Bounds
    /// The smoothed round trip (SRTT); nil until the first is added.
    public private(set) var smoothedRoundTrip: Duration?
    /// How much round trips vary about it (RTTVAR); nil until the first is added.
    public private(set) var roundTripVariation: Duration?
    /// How long to wait for a response now before sending again (RTO).
    public private(set) var timeout: Duration

    public init(bounds: Bounds = .moduleLink) {
        self.bounds = bounds
        timeout = bounds.initial
    }

    /// Takes in the round trip of a request that was sent once (RFC 6298 §2.2, §2.3): the first
    /// sets SRTT to it and RTTVAR to half of it; each later one moves SRTT an eighth and RTTVAR a
    /// quarter of the way towards it. A timeout backed off before is recomputed from them.
    public mutating func add(roundTrip: Duration) {
        let sample = max(roundTrip, .zero)
        if let smoothed = smoothedRoundTrip, let variation = roundTripVariation {
            let deviation = smoothed > sample ? smoothed - sample : sample - smoothed
            roundTripVariation = (variation * 3 + deviation) / 4
            smoothedRoundTrip = (smoothed * 7 + sample) / 8
        } else {
            smoothedRoundTrip = sample
            roundTripVariation = sample / 2
        }
        timeout = clamped(smoothedRoundTrip! + max(bounds.granularity, roundTripVariation! * 4))
    }

    /// A wait for a response ran out and the request goes again (RFC 6298 §5.5): the timeout
    /// doubles, up to the maximum, until a round trip is added again.
    public mutating func backOff() {
        timeout = backedOff(timeout)
    }

    /// The wait after `wait` ran out once more: twice as long, up to the maximum. A request sent
    /// again waits so for its own next answer.
    public func backedOff(_ wait: Duration) -> Duration {
        clamped(wait * 2)
    }

    private func clamped(_ wait: Duration) -> Duration {
        min(max(wait, bounds.minimum), bounds.maximum)
    }
}
