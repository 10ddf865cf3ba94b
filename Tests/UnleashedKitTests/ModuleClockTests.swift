import Testing
import UnleashedKit
import UnleashedTestSupport

/// Reading a module's timer from keep-alive round trips (PROTOCOL.md §9.6), on a test clock's
/// instants: the host's side of every round trip is exactly what the test says.
@Suite struct ModuleClockTests {
    typealias HostClock = RunClock
    typealias Estimator = ModuleClock<HostClock>

    /// A module whose timer read `offset` µs at `origin` and runs `ppm` fast.
    struct Module {
        let origin = HostClock().now
        let offset: Double = 5_000_000
        let ppm: Double

        func micros(at instant: HostClock.Instant) -> UInt64 {
            UInt64((offset + Double(origin.duration(to: instant).wholeMicroseconds) * (1 + ppm / 1e6)).rounded())
        }

        /// A round trip starting `start` after the origin, its reading taken `outbound` after sending.
        func sample(at start: Duration, outbound: Duration, inbound: Duration) -> Estimator.Sample {
            let sent = origin.advanced(by: start)
            return Estimator.Sample(sent: sent, received: sent.advanced(by: outbound + inbound),
                                    moduleMicros: micros(at: sent.advanced(by: outbound)))
        }
    }

    @Test("the shortest round trip wins: a queued sample does not pull the estimate")
    func shortestRoundTrip() throws {
        let module = Module(ppm: 0)
        var clock = Estimator()
        #expect(clock.estimate(at: module.origin) == nil)
        clock.add(module.sample(at: .milliseconds(100), outbound: .milliseconds(9), inbound: .milliseconds(1)))
        clock.add(module.sample(at: .milliseconds(200), outbound: .microseconds(300), inbound: .microseconds(300)))
        clock.add(module.sample(at: .milliseconds(300), outbound: .milliseconds(1), inbound: .milliseconds(12)))
        let instant = module.origin.advanced(by: .milliseconds(450))
        let estimate = try #require(clock.estimate(at: instant))
        let error = abs(Int64(estimate.moduleMicros) - Int64(module.micros(at: instant)))
        #expect(error <= 2, "off by \(error) µs")
        // Half the best round trip, and a drift allowance for the 250 ms since it.
        #expect(estimate.uncertainty >= .microseconds(300) && estimate.uncertainty < .microseconds(330))
    }

    @Test("a drifting timer: the rate between old and new samples keeps a later estimate on it")
    func drift() throws {
        let module = Module(ppm: 80)
        var clock = Estimator()
        for second in 0..<20 {
            // Alternate good and queued round trips, as a busy bus gives.
            let queued = second % 3 == 0 ? Duration.milliseconds(4) : .microseconds(200)
            clock.add(module.sample(at: .seconds(second), outbound: queued, inbound: .microseconds(200)))
        }
        let rate = try #require(clock.rate)
        #expect(abs(rate - 1.000_080) < 2e-6)
        // 30 s after the last sample: uncorrected, 80 ppm would be 2.4 ms off (plus 39 s since the best).
        let instant = module.origin.advanced(by: .seconds(50))
        let estimate = try #require(clock.estimate(at: instant))
        let error = abs(Int64(estimate.moduleMicros) - Int64(module.micros(at: instant)))
        #expect(error < 100, "off by \(error) µs")
    }

    @Test("a timer that goes back (the module restarted) drops what was learned before")
    func restart() throws {
        let module = Module(ppm: 0)
        var clock = Estimator()
        clock.add(module.sample(at: .seconds(1), outbound: .microseconds(100), inbound: .microseconds(100)))
        let sent = module.origin.advanced(by: .seconds(2))
        clock.add(Estimator.Sample(sent: sent, received: sent.advanced(by: .milliseconds(1)), moduleMicros: 1_000))
        #expect(clock.samples.count == 1)
        let estimate = try #require(clock.estimate(at: sent.advanced(by: .microseconds(500) + .seconds(1))))
        #expect(abs(Int64(estimate.moduleMicros) - 1_001_000) <= 1)
        clock.reset()
        #expect(clock.estimate(at: sent) == nil)
    }
}
