import Testing
import UnleashedKit

@Suite("Retransmission timeout from round trips (RFC 6298)")
struct RoundTripEstimatorTests {
    /// A module link's bounds: 25 ms to 1 s, 1 s before any round trip, G = 1 ms.
    let bounds = RoundTripEstimator.Bounds.moduleLink

    @Test("before any round trip the timeout is the initial 1 s")
    func initial() {
        let estimator = RoundTripEstimator(bounds: bounds)
        #expect(estimator.timeout == .seconds(1))
        #expect(estimator.smoothedRoundTrip == nil)
        #expect(estimator.roundTripVariation == nil)
    }

    @Test("golden sequence: SRTT and RTTVAR follow §2.2 and §2.3, RTO = SRTT + 4·RTTVAR, backing off doubles up to the cap")
    func golden() {
        var estimator = RoundTripEstimator(bounds: bounds)
        // §2.2: SRTT = R, RTTVAR = R/2.
        estimator.add(roundTrip: .milliseconds(100))
        #expect(estimator.smoothedRoundTrip == .milliseconds(100))
        #expect(estimator.roundTripVariation == .milliseconds(50))
        #expect(estimator.timeout == .milliseconds(300))
        // §2.3: RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
        estimator.add(roundTrip: .milliseconds(200))
        #expect(estimator.roundTripVariation == .microseconds(62_500))
        #expect(estimator.smoothedRoundTrip == .microseconds(112_500))
        #expect(estimator.timeout == .microseconds(362_500))
        // RTTVAR = 3/4·62.5 + 1/4·12.5 = 50; SRTT = 7/8·112.5 + 1/8·100 = 110.9375.
        estimator.add(roundTrip: .milliseconds(100))
        #expect(estimator.roundTripVariation == .milliseconds(50))
        #expect(estimator.smoothedRoundTrip == .nanoseconds(110_937_500))
        #expect(estimator.timeout == .nanoseconds(310_937_500))
        // §5.5: each expiry doubles the timeout, held at the 1 s cap.
        estimator.backOff()
        #expect(estimator.timeout == .nanoseconds(621_875_000))
        estimator.backOff()
        #expect(estimator.timeout == .seconds(1))
        estimator.backOff()
        #expect(estimator.timeout == .seconds(1))
        // §5.7: the next round trip recomputes it from SRTT and RTTVAR, which backing off left alone.
        // RTTVAR = 3/4·50 + 1/4·10.9375 = 40.234375; SRTT = 7/8·110.9375 + 1/8·100 = 109.5703125.
        estimator.add(roundTrip: .milliseconds(100))
        #expect(estimator.roundTripVariation == .milliseconds(2575) / 64)
        #expect(estimator.smoothedRoundTrip == .milliseconds(14025) / 128)
        #expect(estimator.timeout == .milliseconds(34625) / 128)
    }

    @Test("equal fast round trips: the variation falls towards zero and the timeout stays at the 25 ms floor")
    func floor() throws {
        var estimator = RoundTripEstimator(bounds: bounds)
        estimator.add(roundTrip: .milliseconds(2))
        // 2 + 4·1 = 6 ms, below the floor.
        #expect(estimator.timeout == .milliseconds(25))
        for _ in 0..<60 { estimator.add(roundTrip: .milliseconds(2)) }
        #expect(estimator.smoothedRoundTrip == .milliseconds(2))
        #expect(try #require(estimator.roundTripVariation) < .microseconds(1))
        #expect(estimator.timeout == .milliseconds(25))
        // One slow answer widens the margin at once.
        estimator.add(roundTrip: .milliseconds(40))
        // RTTVAR ≈ 38/4 = 9.5 ms, SRTT = 2 + 38/8 = 6.75 ms: RTO ≈ 44.75 ms.
        #expect(estimator.timeout > .milliseconds(44) && estimator.timeout < .milliseconds(45))
    }

    @Test("the clock granularity G is the least margin above SRTT when the variation is smaller")
    func granularity() {
        var estimator = RoundTripEstimator(bounds: .init(minimum: .milliseconds(1), maximum: .seconds(1), initial: .seconds(1),
                                                         granularity: .milliseconds(10)))
        for _ in 0..<60 { estimator.add(roundTrip: .milliseconds(50)) }
        #expect(estimator.timeout == .milliseconds(60))
    }

    @Test("a request's own waits double from the timeout it started with, up to the cap")
    func requestBackoff() {
        let estimator = RoundTripEstimator(bounds: bounds)
        var waits: [Duration] = [.milliseconds(25)]
        while waits.count < 8 { waits.append(estimator.backedOff(waits.last!)) }
        #expect(waits == [25, 50, 100, 200, 400, 800, 1000, 1000].map { .milliseconds($0) })
    }
}
