internal import CLinux
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
/// It polls descriptors too (``watch(descriptor:readable:)``): a link whose packets arrive on a
/// socket reads them here, and the actors that wait for them run here as well, so that a packet
/// wakes one thread and nothing is handed on to another.
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

    /// Polls `descriptor` (which should be non-blocking) and calls `readable` on this thread
    /// whenever it can be read or has hung up, until `readable` returns false or ``unwatch(_:)``
    /// comes. The thread owns the descriptor from here on and closes it when the watch ends, on
    /// the thread, so that it is never polled after it is closed. Returns the watch's identifier.
    public func watch(descriptor: Int32, readable: @escaping @Sendable () -> Bool) -> Int {
        core.watch(descriptor: descriptor, readable: readable)
    }

    /// Ends a watch from ``watch(descriptor:readable:)`` and closes its descriptor; a watch
    /// that has ended is ignored.
    public func unwatch(_ watch: Int) {
        core.unwatch(watch)
    }
}

/// The thread's queue and timers under one mutex, and its loop. A class apart from
/// ``ExecutorThread`` so that the loop does not keep the executor alive.
private final class Core: @unchecked Sendable {
    private struct Timer {
        let id: Int
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    fileprivate struct Watch {
        let descriptor: Int32
        let readable: @Sendable () -> Bool
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Waiters for the thread's start (``waitForScheduling()``).
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Written to wake the thread from `ppoll` when work comes from another thread.
    private let wakeDescriptor: Int32
    /// The thread waits in `ppoll`: work queued from elsewhere must wake it.
    private var sleeping = false
    private var watches: [Int: Watch] = [:]
    private var nextWatch = 0
    private var queue: [Work] = []
    /// Work taken from ``queue`` in one go, run from `taken` on: an array's `removeFirst` moves
    /// everything behind it each time.
    private var batch: [Work] = []
    private var taken = 0
    /// What the thread polls, and the watch each entry after the first (the wake-up) is for:
    /// kept between turns so that a poll allocates nothing.
    private var descriptors: [pollfd] = []
    private var polled: [Int] = []
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
        pthread_cond_init(condition, nil)
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeDescriptor >= 0, "cannot make a run thread's eventfd: \(String(cString: strerror(errno)))")
    }

    deinit {
        close(wakeDescriptor)
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    var isCurrentThread: Bool {
        locked { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func enqueue(_ work: Work) {
        wakeIfSleeping(locked {
            queue.append(work)
            return sleeping
        })
    }

    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Int {
        let (id, wake) = locked {
            nextTimer += 1
            timers.append(Timer(id: nextTimer, deadline: deadline, action: action))
            return (nextTimer, sleeping)
        }
        wakeIfSleeping(wake)
        return id
    }

    func cancel(_ id: Int) {
        locked { timers.removeAll { $0.id == id } }
    }

    func watch(descriptor: Int32, readable: @escaping @Sendable () -> Bool) -> Int {
        let (id, wake) = locked {
            nextWatch += 1
            watches[nextWatch] = Watch(descriptor: descriptor, readable: readable)
            return (nextWatch, sleeping)
        }
        wakeIfSleeping(wake)
        return id
    }

    func unwatch(_ id: Int) {
        // Closed on the thread, after the poll it may be in has returned.
        let wake = locked {
            guard let watch = watches.removeValue(forKey: id) else { return false }
            queue.append(.closure { close(watch.descriptor) })
            return sleeping
        }
        wakeIfSleeping(wake)
    }

    func finish() {
        wakeIfSleeping(locked {
            finished = true
            return sleeping
        })
    }

    /// Wakes the thread from `ppoll`; the flag is read under the mutex by the caller, and the
    /// thread sets it there before it polls, so no wake-up is lost and none is spent on a thread
    /// that is awake (a job queued by a job on the thread costs no system call).
    private func wakeIfSleeping(_ sleeping: Bool) {
        guard sleeping else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
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
            case .readable(let ready): for (id, watch) in ready where !watch.readable() { endWatch(id) }
            }
        }
        for watch in locked({ () -> [Watch] in
            defer { watches.removeAll() }
            return Array(watches.values)
        }) {
            close(watch.descriptor)
        }
    }

    fileprivate enum Work {
        case job(UnownedJob, UnownedSerialExecutor, UnownedTaskExecutor)
        case closure(@Sendable () -> Void)
        case timers([@Sendable () -> Void])
        case readable([(Int, Watch)])
    }

    /// Ends a watch whose callback said so, unless ``unwatch(_:)`` already did.
    private func endWatch(_ id: Int) {
        if let watch = locked({ watches.removeValue(forKey: id) }) { close(watch.descriptor) }
    }

    private func nextWork() -> Work? {
        locked {
            while true {
                // Looked at only when there are timers: most turns have none, and cost no clock
                // read and no array.
                if !timers.isEmpty {
                    let now = ContinuousClock.now
                    if timers.contains(where: { $0.deadline <= now }) {
                        let due = timers.filter { $0.deadline <= now }
                        timers.removeAll { $0.deadline <= now }
                        return .timers(due.map(\.action))
                    }
                }
                if taken < batch.count {
                    defer { taken += 1 }
                    return batch[taken]
                }
                if !queue.isEmpty {
                    batch.removeAll(keepingCapacity: true)
                    swap(&batch, &queue)
                    taken = 1
                    return batch[0]
                }
                if finished { return nil }
                descriptors.removeAll(keepingCapacity: true)
                polled.removeAll(keepingCapacity: true)
                descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
                for (id, watch) in watches {
                    descriptors.append(pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0))
                    polled.append(id)
                }
                let wait = timers.lazy.map(\.deadline).min().map { Self.timespec(of: ContinuousClock.now.duration(to: $0)) }
                sleeping = true
                pthread_mutex_unlock(mutex)
                let ready = if var wait {
                    ppoll(&descriptors, nfds_t(descriptors.count), &wait, nil)
                } else {
                    ppoll(&descriptors, nfds_t(descriptors.count), nil, nil)
                }
                pthread_mutex_lock(mutex)
                sleeping = false
                guard ready > 0 else { continue }
                if descriptors[0].revents != 0 {
                    var count: UInt64 = 0
                    _ = read(wakeDescriptor, &count, 8)
                }
                // Looked up again: a watch ended while the thread polled is not called.
                let readable = zip(polled, descriptors.dropFirst()).compactMap { id, entry in
                    entry.revents != 0 ? watches[id].map { (id, $0) } : nil
                }
                if !readable.isEmpty { return .readable(readable) }
            }
        }
    }

    /// A wait as `ppoll` takes it. `ContinuousClock` may count time suspended as well, so a wait
    /// is checked against it again when it ends.
    private static func timespec(of delay: Duration) -> Glibc.timespec {
        let (seconds, attoseconds) = max(delay, .zero).components
        // A nanosecond more, so that the wait does not end just short of the deadline; carried,
        // as ppoll refuses a nanosecond count of a whole second.
        let nanoseconds = Int(attoseconds / 1_000_000_000) + 1
        return nanoseconds == 1_000_000_000
            ? Glibc.timespec(tv_sec: Int(seconds) + 1, tv_nsec: 0)
            : Glibc.timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)
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
