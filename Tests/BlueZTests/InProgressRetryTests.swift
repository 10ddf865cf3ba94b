@testable import BlueZ
import DBus
import Synchronization
import Testing
import UnleashedTestSupport

/// BlueZ's `InProgress` retried on an injected clock: attempts counted, pauses taken on the
/// test's clock, never a real sleep.
@Suite("InProgress retry")
struct InProgressRetryTests {
    static let busy = BlueZError.dbus(DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
    static let refused = BlueZError.dbus(DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted"))

    /// An operation refused as busy for its first `busyFor` attempts; then it fails with
    /// `failure`, or answers with its attempt's number.
    final class Flaky: Sendable {
        let busyFor: Int
        let failure: BlueZError?
        private let attempts = Mutex<[Int]>([])

        init(busyFor: Int, then failure: BlueZError? = nil) {
            self.busyFor = busyFor
            self.failure = failure
        }

        var made: [Int] { attempts.withLock { $0 } }

        func attempt(_ number: Int) throws(BlueZError) -> Int {
            let count = attempts.withLock { attempts in
                attempts.append(number)
                return attempts.count
            }
            if count <= busyFor { throw InProgressRetryTests.busy }
            if let failure { throw failure }
            return number
        }

        /// Runs ``attempt(_:)`` under `retry`, its pauses on `clock`.
        func run(_ retry: InProgressRetry, on clock: RunClock) async throws(BlueZError) -> Int {
            try await retry.run(on: clock, isInProgress: InProgressRetry.isInProgress) { number throws(BlueZError) in
                try attempt(number)
            }
        }
    }

    @Test("a busy refusal is tried again after the pause, on the clock given, until it succeeds")
    func retriesOnTheClock() async throws {
        let clock = RunClock()
        let start = clock.now
        let retry = InProgressRetry(attempts: 100, pause: .milliseconds(10))
        let flaky = Flaky(busyFor: 4)
        let answer = try await clock.flowing {
            try await flaky.run(retry, on: clock)
        }
        #expect(answer == 5)
        #expect(flaky.made == [1, 2, 3, 4, 5])
        #expect(start.duration(to: clock.now) == .milliseconds(40), "four pauses of 10 ms on the clock")
    }

    @Test("no attempt follows until the clock has moved past the pause")
    func waitsForTheClock() async throws {
        let clock = RunClock()
        let start = clock.now
        let retry = InProgressRetry(attempts: 3, pause: .milliseconds(10))
        let flaky = Flaky(busyFor: 1)
        let task = Task {
            try await flaky.run(retry, on: clock)
        }
        await clock.waitForSleep(until: start.advanced(by: .milliseconds(10)))
        #expect(flaky.made == [1], "the second attempt waits for the clock")
        await clock.advance(by: .milliseconds(10))
        #expect(try await task.value == 2)
        #expect(flaky.made == [1, 2])
    }

    @Test("after the policy's attempts the busy refusal is thrown")
    func givesUp() async throws {
        let clock = RunClock()
        let start = clock.now
        let retry = InProgressRetry(attempts: 100, pause: .milliseconds(10))
        let flaky = Flaky(busyFor: 1_000)
        var thrown: BlueZError?
        do {
            _ = try await clock.flowing {
                try await flaky.run(retry, on: clock)
            }
        } catch let error as BlueZError {
            thrown = error
        }
        #expect(thrown == Self.busy)
        #expect(flaky.made == Array(1...100))
        #expect(start.duration(to: clock.now) == .milliseconds(990))
    }

    @Test("a failure other than busy is thrown without another attempt")
    func otherFailures() async throws {
        let clock = RunClock()
        let start = clock.now
        let flaky = Flaky(busyFor: 1, then: Self.refused)
        await #expect(throws: BlueZError.self) {
            try await clock.flowing {
                try await flaky.run(InProgressRetry(), on: clock)
            }
        }
        #expect(flaky.made == [1, 2])
        #expect(start.duration(to: clock.now) == .milliseconds(10))
        #expect(!InProgressRetry.isInProgress(Self.refused))
        #expect(!InProgressRetry.isInProgress(.bluezNotRunning))
    }
}
