import UnleashedKit
import Synchronization
import Testing

/// An actor that runs on an ``ExecutorThread`` and reports where its code ran.
private actor Pinned {
    let thread: ExecutorThread
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
    private(set) var order: [Int] = []

    init(thread: ExecutorThread) { self.thread = thread }

    func note(_ number: Int) -> Bool {
        order.append(number)
        return thread.isIsolatingCurrentContext() == true
    }
}

/// Waits for `timer`-style callbacks: the instant each one fired, by name.
private final class Firings: Sendable {
    let fired = Mutex<[(String, ContinuousClock.Instant)]>([])

    func record(_ name: String) {
        fired.withLock { $0.append((name, .now)) }
    }

    func wait(for count: Int) async throws {
        let start = ContinuousClock.now
        while fired.withLock({ $0.count }) < count {
            try #require(ContinuousClock.now - start < .seconds(30), "the timers did not fire")
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

@Suite struct ExecutorThreadTests {
    @Test func anActorOnTheThreadRunsThereInTheOrderCalled() async {
        let thread = ExecutorThread(name: "test")
        let pinned = Pinned(thread: thread)
        for number in 1...200 {
            #expect(await pinned.note(number))
        }
        #expect(await pinned.order == Array(1...200))
        #expect(thread.isIsolatingCurrentContext() == false)
    }

    @Test func timersFireOnTheThreadAtTheirDeadlinesInDeadlineOrder() async throws {
        let thread = ExecutorThread(name: "test")
        let firings = Firings()
        let start = ContinuousClock.now
        let deadlines: [(String, Duration)] = [("third", .milliseconds(90)), ("first", .milliseconds(30)), ("second", .milliseconds(60))]
        for (name, offset) in deadlines {
            _ = thread.schedule(at: start + offset) { [thread] in
                firings.record(thread.isIsolatingCurrentContext() == true ? name : "\(name) off the thread")
            }
        }
        try await firings.wait(for: 3)
        let fired = firings.fired.withLock { $0 }
        #expect(fired.map(\.0) == ["first", "second", "third"])
        for (name, instant) in fired {
            let offset = try #require(deadlines.first { $0.0 == name }?.1)
            #expect(instant >= start + offset, "\(name) fired before its deadline")
        }
    }

    @Test func aCancelledTimerNeverFires() async throws {
        let thread = ExecutorThread(name: "test")
        let firings = Firings()
        let start = ContinuousClock.now
        let cancelled = thread.schedule(at: start + .milliseconds(20)) { firings.record("cancelled") }
        _ = thread.schedule(at: start + .milliseconds(80)) { firings.record("kept") }
        thread.cancel(cancelled)
        try await firings.wait(for: 1)
        try await Task.sleep(for: .milliseconds(50))
        #expect(firings.fired.withLock { $0.map(\.0) } == ["kept"])
    }

    @Test func aTimerDueAlreadyFiresAtOnce() async throws {
        let thread = ExecutorThread(name: "test")
        let firings = Firings()
        _ = thread.schedule(at: .now - .seconds(1)) { firings.record("late") }
        try await firings.wait(for: 1)
    }

    @Test func performReturnsOnTheThreadInOrderWithSubmittedWork() async {
        let thread = ExecutorThread(name: "test")
        let order = Mutex<[Int]>([])
        for number in 1...50 { thread.submit { order.withLock { $0.append(number) } } }
        let onThread = await thread.perform { thread.isCurrent }
        #expect(onThread)
        #expect(order.withLock { $0 } == Array(1...50))
        #expect(!thread.isCurrent)
    }
}
