import Foundation

/// The one thread that makes every libgphoto2 call.
///
/// libgphoto2 is not thread-safe (its port and abilities lists, its loaded drivers and each
/// camera handle are shared state) and its calls block, so they all run here, one at a time:
/// every ``GPhoto2Camera`` uses this as its actor executor, and code outside the actors hands
/// work over with ``perform(_:)``. Blocking this thread blocks no Swift concurrency pool thread.
final class OwnerThread: SerialExecutor, @unchecked Sendable {
    static let shared = OwnerThread()

    private enum Work {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
    }

    private let condition = NSCondition()
    private var queue: [Work] = []
    private var head = 0
    /// Set once by the thread itself before it takes any work.
    private var owner: pthread_t?

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "libgphoto2"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        push(.job(UnownedJob(job)))
    }

    /// Runs `body` on the owner thread and returns its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            push(.block { continuation.resume(returning: body()) })
        }
    }

    /// Runs `body` on the owner thread later, without waiting (clean-up from a `deinit`).
    func submit(_ body: @escaping @Sendable () -> Void) {
        push(.block(body))
    }

    private func push(_ work: Work) {
        condition.lock()
        queue.append(work)
        condition.signal()
        condition.unlock()
    }

    /// Whether the caller runs on the owner thread; libgphoto2 wrappers assert it.
    var isCurrent: Bool {
        owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    private func run() {
        owner = pthread_self()
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let work = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            switch work {
            case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
            case .block(let body): body()
            }
        }
    }
}
