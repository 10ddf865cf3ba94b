import Foundation

/// A serial executor on a thread of its own, with deadline timers that the thread waits for
/// itself.
///
/// Two kinds of work want a thread apart from Swift's cooperative pool:
/// - **Timing.** A run's lateness is the time from a slot's deadline to its command going out.
///   On the shared pool that time would include every job queued ahead of the wake-up (in a
///   daemon: the API's requests, event streams, metrics). A run's actor executes here instead,
///   and ``schedule(at:_:)`` wakes it: the thread sleeps until the deadline and the actor
///   continues on the same thread at once, waiting for nothing but the kernel's scheduler.
/// - **Blocking calls** (libgphoto2, a disk sync) that would otherwise hold a pool thread, and
///   that must stay in order: ``perform(_:)`` and ``submit(_:)``.
///
/// It is a task executor too: a task that prefers it (a run's parked shot commands) runs its
/// nonisolated code here, so that a command released at a deadline goes out at the thread's
/// priority instead of waiting for a pool thread on a busy machine.
///
/// The thread ends when the executor is released.
public final class ExecutorThread: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let core: Core

    /// How the thread asked the kernel to schedule it, and what it got.
    public let scheduling: Scheduling

    /// Starts the thread, named `name` (up to 15 bytes) in `top` and debuggers.
    ///
    /// - Parameter niceness: A nice value to ask the kernel for, for this thread alone, so that
    ///   it gets a CPU first when it wakes on a busy machine. Raising a thread's priority needs
    ///   `CAP_SYS_NICE` or a `RLIMIT_NICE` that allows it (systemd's `LimitNICE=`); without
    ///   them the thread keeps the process's priority.
    public convenience init(name: String, niceness: Int32? = nil) {
        self.init(name: name, priority: Priority(realTime: nil, niceness: niceness))
    }

    /// Starts the thread, named `name` (up to 15 bytes), with the priority it asks for; returns
    /// once the thread runs and knows what it was granted (``scheduling``).
    public init(name: String, priority: Priority) {
        let core = Core(name: name, priority: priority)
        self.core = core
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(core).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { context in
            let core = Unmanaged<Core>.fromOpaque(context!).takeRetainedValue()
            core.run()
            return nil
        }, context)
        precondition(status == 0, "cannot start a run thread: \(String(cString: strerror(status)))")
        scheduling = core.waitForScheduling()
    }

    /// The priority a thread asks for: a real-time one first, where the system allows it, then a
    /// nice value. Either may be refused; the thread then runs as the process does.
    public struct Priority: Sendable, Hashable {
        /// A `SCHED_FIFO` priority (1 to 99): the thread runs as soon as it wakes, ahead of every
        /// thread of the normal policy. Granted to root (`CAP_SYS_NICE`) and to a process whose
        /// `RLIMIT_RTPRIO` reaches it (systemd's `LimitRTPRIO=`).
        public var realTime: Int32?
        /// The nice value to ask for when there is no real-time priority or it is refused.
        public var niceness: Int32?

        public init(realTime: Int32?, niceness: Int32?) {
            self.realTime = realTime
            self.niceness = niceness
        }

        /// The process's own priority, asked for nothing.
        public static let normal = Priority(realTime: nil, niceness: nil)
    }

    /// What the kernel granted the thread.
    public enum Scheduling: Sendable, Hashable, CustomStringConvertible {
        /// `SCHED_FIFO` at this priority.
        case realTime(Int32)
        /// The normal policy at this nice value.
        case nice(Int32)
        /// The process's priority: nothing asked for, or everything asked for refused.
        case unchanged

        /// As a log line or a benchmark names it: `SCHED_FIFO 10`, `nice -10`, `normal`.
        public var description: String {
            switch self {
            case .realTime(let priority): "SCHED_FIFO \(priority)"
            case .nice(let niceness): "nice \(niceness)"
            case .unchanged: "normal"
            }
        }
    }

    deinit {
        core.finish()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        core.enqueue(.job(UnownedJob(job), asUnownedSerialExecutor(), asUnownedTaskExecutor()))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(core.isCurrentThread, "not on the executor's thread")
    }

    public func isIsolatingCurrentContext() -> Bool? {
        core.isCurrentThread
    }

    /// Calls `action` on this thread once `ContinuousClock.now` has reached `deadline`, unless
    /// ``cancel(_:)`` comes first. Returns the timer's identifier for ``cancel(_:)``.
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Int {
        core.schedule(at: deadline, action)
    }

    /// Drops a timer that has not fired; a timer that has fired or was dropped is ignored.
    public func cancel(_ timer: Int) {
        core.cancel(timer)
    }

    /// Runs `work` on this thread after everything queued before it, without waiting for it.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        core.enqueue(.closure(work))
    }

    /// Runs `work` on this thread after everything queued before it, and returns its result.
    public func perform<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: work()) }
        }
    }

    /// Whether the caller runs on this thread.
    public var isCurrent: Bool { core.isCurrentThread }
}

/// The thread's queue and timers under one mutex, and its loop. A class apart from
/// ``ExecutorThread`` so that the loop does not keep the executor alive.
private final class Core: @unchecked Sendable {
    private struct Timer {
        let id: Int
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Work] = []
    private var timers: [Timer] = []
    private var nextTimer = 0
    private var finished = false
    private var thread: pthread_t?
    private let name: String
    private let priority: ExecutorThread.Priority
    private var scheduling: ExecutorThread.Scheduling?

    init(name: String, priority: ExecutorThread.Priority) {
        self.name = name
        self.priority = priority
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines are monotonic; a wall-clock step must not move them.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    var isCurrentThread: Bool {
        locked { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func enqueue(_ work: Work) {
        locked {
            queue.append(work)
            pthread_cond_signal(condition)
        }
    }

    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Int {
        locked {
            nextTimer += 1
            timers.append(Timer(id: nextTimer, deadline: deadline, action: action))
            pthread_cond_signal(condition)
            return nextTimer
        }
    }

    func cancel(_ id: Int) {
        locked { timers.removeAll { $0.id == id } }
    }

    func finish() {
        locked {
            finished = true
            pthread_cond_signal(condition)
        }
    }

    /// Runs the queued work in the order it came and fires timers when due, until finished
    /// with nothing queued. Timers left at the end are dropped.
    func run() {
        Thread.current.name = name
        let granted = Self.applyPriority(priority)
        locked {
            thread = pthread_self()
            scheduling = granted
            pthread_cond_broadcast(condition)
        }
        while let work = nextWork() {
            switch work {
            case .job(let job, let serial, let task): job.runSynchronously(isolatedTo: serial, taskExecutor: task)
            case .closure(let work): work()
            case .timers(let actions): for action in actions { action() }
            }
        }
    }

    enum Work {
        case job(UnownedJob, UnownedSerialExecutor, UnownedTaskExecutor)
        case closure(@Sendable () -> Void)
        case timers([@Sendable () -> Void])
    }

    private func nextWork() -> Work? {
        locked {
            while true {
                let now = ContinuousClock.now
                let due = timers.filter { $0.deadline <= now }
                if !due.isEmpty {
                    timers.removeAll { $0.deadline <= now }
                    return .timers(due.map(\.action))
                }
                if !queue.isEmpty { return queue.removeFirst() }
                if finished { return nil }
                if let earliest = timers.map(\.deadline).min() {
                    var wake = Self.monotonicNow(after: now.duration(to: earliest))
                    pthread_cond_timedwait(condition, mutex, &wake)
                } else {
                    pthread_cond_wait(condition, mutex)
                }
            }
        }
    }

    /// CLOCK_MONOTONIC now plus `delay`: the condition's clock. `ContinuousClock` may count
    /// time suspended as well, so a wait is checked against it again when it ends.
    private static func monotonicNow(after delay: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = delay.components
        var nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000 + 1
        var wholeSeconds = Int64(now.tv_sec) + seconds
        wholeSeconds += nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        return timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds))
    }

    /// Waits until the thread has asked for its priority, and answers what it got.
    func waitForScheduling() -> ExecutorThread.Scheduling {
        locked {
            while scheduling == nil { pthread_cond_wait(condition, mutex) }
            return scheduling ?? .unchanged
        }
    }

    /// Asks for `priority` for the calling thread: `SCHED_FIFO` first, the nice value when that
    /// is refused (EPERM without the privilege or the rlimit) or not asked for.
    private static func applyPriority(_ priority: ExecutorThread.Priority) -> ExecutorThread.Scheduling {
        #if os(Linux)
        if let realTime = priority.realTime {
            var parameters = sched_param()
            parameters.sched_priority = realTime
            if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 { return .realTime(realTime) }
        }
        if let niceness = priority.niceness, setNiceness(niceness) { return .nice(niceness) }
        #endif
        return .unchanged
    }

    /// Sets the calling thread's nice value: on Linux `setpriority` with a thread id acts on that
    /// thread only. False when refused (no privilege), which leaves it as it was.
    private static func setNiceness(_ niceness: Int32) -> Bool {
        #if os(Linux)
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
              let thread = link.split(separator: "/").last.flatMap({ id_t($0) }) else { return false }
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, niceness) == 0
        #else
        return false
        #endif
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
