import Dispatch
import Glibc
import Synchronization

/// Signals handled by Swift closures instead of by their default action, until disarmed.
///
/// Watching has begun when `init` returns: a program may say it is ready (print its first line,
/// its address) right after, and a signal sent on reading that is handled, never lost. Each
/// watch's handlers run on one serial queue, in the order the signals came. Several watches of
/// one signal all see it; the default action comes back when the last is disarmed.
///
/// Why not dispatch's signal sources: one starts watching only once dispatch's own thread has
/// registered it, some time after `resume()`, and a signal sent in between was ignored (a
/// command went on after its SIGTERM); and dispatch installs its handler for a signal once per
/// process, so a second watch after the first was disarmed got the default action. Not to be
/// mixed in one process with other watchers of the same signal that install their own handler.
public final class SignalWatch: Sendable {
    private let id: Int
    private let numbers: [Int32]

    public init(_ handlers: [Int32: @Sendable () -> Void]) {
        numbers = Array(handlers.keys)
        id = SignalRelay.shared.add(handlers)
    }

    /// Gives the signals their default actions back, unless another watch still has them.
    public func disarm() {
        SignalRelay.shared.remove(id, numbers: numbers)
    }
}

/// Where the process's watched signals go: a handler that writes each signal's number to a
/// pipe (`write` is safe in a signal handler; nothing else here is), and a dispatch source that
/// reads the pipe and runs the watches' closures. A signal caught before that source runs waits
/// in the pipe.
private final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private struct State {
        var watches: [Int: [Int32: @Sendable () -> Void]] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())
    /// Kept for the life of the process, as the relay is.
    private let reader: Mutex<any DispatchSourceRead>

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fatalError("no pipe for signals: \(String(cString: strerror(errno)))") }
        for end in ends {
            // A full pipe (thousands of signals unread) drops the newest rather than blocking a handler.
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        signalRelayWriteEnd = ends[1]
        let readEnd = ends[0]
        let reader = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: DispatchQueue(label: "unleashed.signals"))
        reader.setEventHandler {
            var numbers = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(readEnd, &numbers, numbers.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                for number in numbers[..<count] { SignalRelay.shared.deliver(Int32(number)) }
            }
        }
        reader.resume()
        self.reader = Mutex(reader)
    }

    func add(_ handlers: [Int32: @Sendable () -> Void]) -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.watches[id] = handlers
            for number in handlers.keys {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = relaySignal
                sigemptyset(&action.sa_mask)
                // Calls the handler interrupts are restarted where the kernel can, as with dispatch's handler.
                action.sa_flags = SA_RESTART
                sigaction(number, &action, nil)
            }
            return id
        }
    }

    func remove(_ id: Int, numbers: [Int32]) {
        state.withLock { state in
            guard state.watches.removeValue(forKey: id) != nil else { return }
            for number in numbers where !state.watches.values.contains(where: { $0[number] != nil }) {
                signal(number, SIG_DFL)
            }
        }
    }

    private func deliver(_ number: Int32) {
        let handlers = state.withLock { state in
            state.watches.keys.sorted().compactMap { state.watches[$0]?[number] }
        }
        for handler in handlers { handler() }
    }
}

/// The pipe's writing end, for the signal handler: set once, before any handler is installed.
private nonisolated(unsafe) var signalRelayWriteEnd: Int32 = -1

/// The signal handler: the signal's number into the pipe, errno left as it was.
private func relaySignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalRelayWriteEnd, &byte, 1)
    errno = saved
}
