import Foundation
import UnleashedKit
import Synchronization
import Testing
import UnleashedTestSupport

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
        try #require(await eventually(every: .milliseconds(5)) { self.fired.withLock { $0.count } >= count }, "the timers never fired")
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
        // Timers fire in deadline order: had the cancelled one fired, it would be first.
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

    @Test func aTaskPreferringTheThreadRunsThereBeforeAndAfterItWaits() async {
        let thread = ExecutorThread(name: "test")
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let task = Task(executorPreference: thread) { () async -> [Bool] in
            let before = thread.isCurrent
            await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            return [before, thread.isCurrent]
        }
        while gate.withLock({ $0 == nil }) { await Task.yield() }
        // Resumed from elsewhere, as a run's release at a deadline does.
        gate.withLock { $0 }?.resume()
        #expect(await task.value == [true, true])
    }

    /// A connected pair of datagram sockets, both non-blocking: one end for the thread to watch.
    private static func socketPair() throws -> (watched: Int32, other: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        return (ends[0], ends[1])
    }

    /// The socket `descriptor` names now (its inode), nil once closed. Compared rather than
    /// checked for being open: tests running beside this one reuse a closed number at once.
    private static func inode(_ descriptor: Int32) -> UInt? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt(status.st_ino) : nil
    }

    /// Waits until `thread` sleeps in its `ppoll`, as the kernel reports it
    /// (`/proc/self/task/TID/wchan`): the thread has done all it was given and waits for more.
    private static func waitUntilPolling(_ thread: ExecutorThread) async throws {
        // "PID/task/TID", read on the thread.
        let task = try #require(await thread.perform { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") })
        try #require(await eventually(every: .milliseconds(1)) {
            (try? String(contentsOfFile: "/proc/\(task)/wchan", encoding: .utf8))?.contains("poll") == true
        }, "the thread never went back to its poll")
    }

    @Test func aWatchedDescriptorIsReadOnTheThreadOnePacketAtATimeInOrder() async throws {
        let thread = ExecutorThread(name: "test")
        let (watched, other) = try Self.socketPair()
        defer { close(other) }
        let read = Mutex<[(UInt8, Bool)]>([])
        _ = thread.watch(descriptor: watched) {
            var byte: UInt8 = 0
            if Glibc.read(watched, &byte, 1) == 1 { read.withLock { $0.append((byte, thread.isCurrent)) } }
            return true
        }
        for byte: UInt8 in 1...20 {
            var value = byte
            #expect(send(other, &value, 1, 0) == 1)
        }
        try #require(await eventually(every: .milliseconds(2)) { read.withLock { $0.count } >= 20 }, "the thread never read the packets")
        #expect(read.withLock { $0.map(\.0) } == Array(1...20))
        #expect(read.withLock { $0.allSatisfy(\.1) }, "read off the thread")
    }

    @Test func aWatchEndsAndClosesItsDescriptorWhenItsCallbackSaysSoOrWhenUnwatched() async throws {
        let thread = ExecutorThread(name: "test")
        // The callback says it is done once the other end hangs up.
        let (first, firstPeer) = try Self.socketPair()
        let firstSocket = Self.inode(first)
        let calls = Mutex(0)
        _ = thread.watch(descriptor: first) {
            calls.withLock { $0 += 1 }
            var byte: UInt8 = 0
            return Glibc.read(first, &byte, 1) > 0
        }
        close(firstPeer)
        // Unwatched while the thread waits in its poll.
        let (second, secondPeer) = try Self.socketPair()
        let secondSocket = Self.inode(second)
        defer { close(secondPeer) }
        let unwatched = thread.watch(descriptor: second) { Issue.record("an idle descriptor was reported readable"); return true }
        try await Self.waitUntilPolling(thread)
        thread.unwatch(unwatched)
        try #require(await eventually(every: .milliseconds(2)) { Self.inode(first) != firstSocket && Self.inode(second) != secondSocket },
                     "a watch that ended left its descriptor open")
        // Back in its poll, with nothing left to call.
        try await Self.waitUntilPolling(thread)
        #expect(calls.withLock { $0 } == 1, "a watch went on being called after it ended")
        // The thread goes on with its other work.
        #expect(await thread.perform { thread.isCurrent })
    }

    @Test func workQueuedFromElsewhereWakesTheThreadFromItsPoll() async throws {
        let thread = ExecutorThread(name: "test")
        let (watched, other) = try Self.socketPair()
        defer { close(other) }
        _ = thread.watch(descriptor: watched) { true }
        // The thread sleeps in its poll with nothing due; each of these must wake it.
        for _ in 0..<50 {
            try await Self.waitUntilPolling(thread)
            #expect(await thread.perform { thread.isCurrent })
        }
        let firings = Firings()
        try await Self.waitUntilPolling(thread)
        _ = thread.schedule(at: .now + .milliseconds(5)) { firings.record("timer") }
        try await firings.wait(for: 1)
    }

    @Test func aThreadAskingForNothingReportsItsPriorityUnchanged() {
        #expect(ExecutorThread(name: "test").scheduling == .unchanged)
    }

    /// The calling thread's policy, real-time priority and nice value, as the kernel has them.
    private static func observedScheduling() -> (policy: Int32, priority: Int32, niceness: Int32) {
        var policy: Int32 = 0
        var parameters = sched_param()
        pthread_getschedparam(pthread_self(), &policy, &parameters)
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        let id = link.split(separator: "/").last.flatMap { id_t($0) } ?? 0
        return (policy, parameters.sched_priority, getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id))
    }

    @Test func aRealTimeRequestReportsWhatTheKernelGranted() async {
        let thread = ExecutorThread(name: "test", priority: ExecutorThread.Priority(realTime: 10, niceness: -5))
        let observed = await thread.perform { Self.observedScheduling() }
        switch thread.scheduling {
        case .realTime(let priority):
            #expect(priority == 10)
            #expect(observed.policy == SCHED_FIFO && observed.priority == 10)
        case .nice(let niceness):
            #expect(niceness == -5)
            #expect(observed.policy == SCHED_OTHER && observed.niceness == -5)
        case .unchanged:
            #expect(observed.policy == SCHED_OTHER)
        }
        // The caller's own thread is left as it was.
        #expect(Self.observedScheduling().policy == SCHED_OTHER)
    }

    @Test func aRefusedRealTimeRequestFallsBackToTheNiceValue() async {
        // No kernel grants SCHED_FIFO 1000 (the range is 1 to 99): the request is refused as
        // one without the privilege is, and the thread asks for its nice value instead.
        let thread = ExecutorThread(name: "test", priority: ExecutorThread.Priority(realTime: 1000, niceness: 5))
        #expect(thread.scheduling == .nice(5))
        let observed = await thread.perform { Self.observedScheduling() }
        #expect(observed.policy == SCHED_OTHER && observed.niceness == 5)
    }
}
