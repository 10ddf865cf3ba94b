import Testing
import UnleashedApp
import UnleashedKit
import UnleashedTestSupport

@Suite struct KeepOpeningTests {
    struct Refused: Error {}

    /// The waits between attempts are the reconnect policy's, doubling up to its maximum.
    @Test func waitsAsThePolicySaysUntilTheAttemptSucceeds() async throws {
        let clock = RunClock()
        let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(5))
        var attempts = 0
        var waits: [Duration?] = []
        let value = try await clock.flowing {
            await keepOpening(policy: policy, clock: clock, unit: { 0.5 }) { () async throws(Refused) -> Int in
                attempts += 1
                guard attempts == 5 else { throw Refused() }
                return attempts
            } failed: { _, wait in
                waits.append(wait)
            }
        }
        #expect(value == 5)
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(5)])
    }

    /// `giveUpAfter` ends the attempts before a wait that would pass it, measured on the clock.
    @Test func givesUpBeforeAWaitThatWouldPassTheLimit() async throws {
        let clock = RunClock()
        let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30))
        var waits: [Duration?] = []
        let value: Int? = try await clock.flowing {
            await keepOpening(policy: policy, giveUpAfter: .seconds(10), clock: clock, unit: { 0.5 }) {
                () async throws(Refused) -> Int in throw Refused()
            } failed: { _, wait in
                waits.append(wait)
            }
        }
        #expect(value == nil)
        // 1 + 2 + 4 = 7 s waited; the next 8 s would end at 15 s.
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), nil])
    }

    @Test func stopsAfterThePolicysAttempts() async throws {
        let clock = RunClock()
        let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumAttempts: 3)
        var attempts = 0
        let value: Int? = try await clock.flowing {
            await keepOpening(policy: policy, clock: clock, unit: { 0.5 }) { () async throws(Refused) -> Int in
                attempts += 1
                throw Refused()
            } failed: { _, _ in }
        }
        #expect(value == nil)
        #expect(attempts == 3)
    }
}
