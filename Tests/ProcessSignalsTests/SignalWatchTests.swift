import ProcessSignals
import Glibc
import Synchronization
import Testing

/// Signals are the process's own: these tests use SIGURG, which no other test watches and whose
/// default action is to ignore it, so a stray one harms nothing.
@Suite("signals watched from the moment a watch is made", .serialized)
struct SignalWatchTests {
    @Test("a signal sent the moment a watch returns is handled, watch after watch")
    func noWindow() async throws {
        for round in 0..<200 {
            let (handled, continuation) = AsyncStream<Void>.makeStream()
            let watch = SignalWatch([SIGURG: { continuation.yield() }])
            kill(getpid(), SIGURG)
            let seen = try await firstWithin(.seconds(10), handled)
            watch.disarm()
            #expect(seen, "round \(round): the signal was not handled")
            if !seen { return }
        }
    }

    @Test("two watches of one signal both see it; the default action comes back with the last disarmed")
    func twoWatches() async throws {
        let counts = Mutex([0, 0])
        let (handled, continuation) = AsyncStream<Void>.makeStream()
        let first = SignalWatch([SIGURG: { counts.withLock { $0[0] += 1 }; continuation.yield() }])
        let second = SignalWatch([SIGURG: { counts.withLock { $0[1] += 1 }; continuation.yield() }])
        kill(getpid(), SIGURG)
        #expect(try await firstWithin(.seconds(10), handled))
        #expect(try await firstWithin(.seconds(10), handled))
        #expect(counts.withLock { $0 } == [1, 1])
        first.disarm()
        #expect(handlerIsDefault(SIGURG) == false)
        kill(getpid(), SIGURG)
        #expect(try await firstWithin(.seconds(10), handled))
        #expect(counts.withLock { $0 } == [1, 2])
        second.disarm()
        #expect(handlerIsDefault(SIGURG))
    }

    private func handlerIsDefault(_ number: Int32) -> Bool {
        var current = sigaction()
        sigaction(number, nil, &current)
        return current.__sigaction_handler.sa_handler == nil
    }

    /// Whether `stream` yields within `limit` (one element taken).
    private func firstWithin(_ limit: Duration, _ stream: AsyncStream<Void>) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream { return true }
                return false
            }
            group.addTask {
                // The hang guard: no event stands in for "the signal never arrived".
                try await Task.sleep(for: limit)
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
