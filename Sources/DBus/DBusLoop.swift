internal import CDBus
import Foundation
import Synchronization

/// The one thread that owns a libdbus connection and makes every libdbus call on it.
///
/// libdbus is not built for async callers: a thread blocked in `read_write_dispatch` keeps other
/// threads' messages from being written, and pending-call timeouts only fire when something drives
/// the connection's `DBusTimeout`s. So this thread drives the connection's watches and timeouts
/// with `poll(2)`, and everyone else hands it closures through ``perform(_:)``, which wakes it
/// through an eventfd.
///
/// `@unchecked Sendable`: the mutable state below the "loop thread only" mark is touched only on
/// the loop thread (from ``run()`` and from libdbus callbacks that run inside it); the rest is
/// behind mutexes or immutable.
final class DBusLoop: @unchecked Sendable {
    typealias Job = @Sendable (OpaquePointer?) -> Void

    private let wakeFD: Int32
    private let queue = Mutex<(jobs: [Job], accepting: Bool)>(([], true))
    private let subscribers = Mutex<(next: Int, sinks: [Int: Subscriber])>((0, [:]))
    /// Boxed: a bare closure read with `withLock { $0 }` is written back through a
    /// reabstraction thunk, and the thunks pile up, one pair per incoming call, until each
    /// call walks thousands of them (and the stack runs out).
    private let methodHandler = Mutex<MethodHandler?>(nil)
    private let connected = Atomic<Bool>(false)
    private let descriptorIDs = Atomic<Int>(0)

    // Loop thread only.
    private var connection: OpaquePointer?
    private var watches: [OpaquePointer] = []
    private var descriptors: [Int: DescriptorWatch] = [:]
    private var timeouts: [(timeout: OpaquePointer, deadline: ContinuousClock.Instant?)] = []

    init() {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    }

    // Closed here, not when the thread ends: a perform() that queued its job just before the loop
    // stopped still writes to the fd after the thread is gone, and by then the number could
    // belong to another connection's socket.
    deinit {
        close(wakeFD)
    }

    var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// Starts the thread, which opens the connection with `open` (blocking, on the thread) and
    /// reports the outcome before it starts looping.
    func start(open: @escaping @Sendable () -> Result<OpaquePointer, DBusError>,
               opened: @escaping @Sendable (Result<String, DBusError>) -> Void) {
        let thread = Thread { [self] in
            // Named for ps -L, top -H and gdb. (Foundation's Thread.name does not reliably reach
            // the kernel on Linux.)
            cdbus_name_this_thread("dbus-loop")
            switch open() {
            case .failure(let error):
                stopAccepting()
                opened(.failure(error))
            case .success(let connection):
                install(connection)
                let unique = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
                opened(.success(unique))
                run()
            }
        }
        thread.start()
    }

    /// Runs `job` on the loop thread with the connection, or at once with `nil` once the loop
    /// has ended, so that a caller waiting on the job's outcome always hears back.
    func perform(_ job: @escaping Job) {
        let queued = queue.withLock { state in
            guard state.accepting else { return false }
            state.jobs.append(job)
            return true
        }
        if queued { wake() } else { job(nil) }
    }

    /// Closes the connection; pending calls fail with `Disconnected`.
    func shutdown() {
        perform { [self] connection in
            guard let connection else { return }
            dbus_connection_close(connection)
            finish(connection)
        }
    }

    // MARK: - Signals and incoming calls

    /// Calls `deliver` on the loop thread for every signal the bus routes to this connection
    /// (see `AddMatch`), plus a local `org.freedesktop.DBus.Local.Disconnected` when the bus goes
    /// away; then `finish` once, when the connection ends (at once if it already has). Returns
    /// the subscription's id for ``unsubscribe(_:)``.
    ///
    /// Both run on the loop thread, before any task is woken: a subscriber that wants one
    /// object's signals filters them there, and the rest cost it no task switch.
    @discardableResult
    func subscribe(deliver: @escaping @Sendable (DBusMessage) -> Void, finish: @escaping @Sendable () -> Void) -> Int {
        let subscriber = Subscriber(deliver: deliver, finish: finish)
        let id = subscribers.withLock { state in
            state.next += 1
            state.sinks[state.next] = subscriber
            return state.next
        }
        if !isConnected && !queue.withLock({ $0.accepting }) {
            unsubscribe(id)
            finish()
        }
        return id
    }

    func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.sinks.removeValue(forKey: id) }
    }

    /// One signal subscription, called on the loop thread.
    private struct Subscriber: Sendable {
        let deliver: @Sendable (DBusMessage) -> Void
        let finish: @Sendable () -> Void
    }

    func setMethodHandler(_ handler: (@Sendable (DBusIncomingCall) -> Void)?) {
        methodHandler.withLock { $0 = handler.map(MethodHandler.init) }
    }

    private struct MethodHandler: Sendable {
        let handle: @Sendable (DBusIncomingCall) -> Void
    }

    // MARK: - Descriptors beside the connection's

    /// Polls `descriptor` with the connection's own, and calls `readable` on the loop thread
    /// whenever it can be read (or has hung up) until `readable` returns false; `ended` is called
    /// instead if the connection ends first. The loop owns `descriptor` from here on and closes it
    /// when the watch ends. Returns the watch's id for ``unwatch(_:)``.
    func watch(descriptor: Int32, readable: @escaping @Sendable () -> Bool, ended: @escaping @Sendable () -> Void) -> Int {
        let id = descriptorIDs.add(1, ordering: .relaxed).newValue
        perform { [self] connection in
            // After the loop has ended the table is no longer the loop thread's: leave it alone.
            guard connection != nil else {
                close(descriptor)
                return ended()
            }
            descriptors[id] = DescriptorWatch(descriptor: descriptor, readable: readable, ended: ended)
        }
        return id
    }

    /// Stops polling a descriptor given to ``watch(descriptor:readable:ended:)`` and closes it,
    /// on the loop thread, so that it is never polled after it is closed.
    func unwatch(_ id: Int) {
        perform { [self] connection in
            guard connection != nil, let watch = descriptors.removeValue(forKey: id) else { return }
            close(watch.descriptor)
        }
    }

    private struct DescriptorWatch {
        let descriptor: Int32
        let readable: @Sendable () -> Bool
        let ended: @Sendable () -> Void
    }

    // MARK: - The loop (loop thread only)

    private func install(_ connection: OpaquePointer) {
        self.connection = connection
        connected.store(true, ordering: .releasing)
        dbus_connection_set_exit_on_disconnect(connection, 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(connection, { watch, data in
            DBusLoop.from(data).watches.append(watch!)
            return 1
        }, { watch, data in
            DBusLoop.from(data).watches.removeAll { $0 == watch }
        }, { _, _ in
            // Enabled state and flags are read afresh on every turn of the loop.
        }, context, nil)
        dbus_connection_set_timeout_functions(connection, { timeout, data in
            DBusLoop.from(data).rearm(timeout!)
            return 1
        }, { timeout, data in
            DBusLoop.from(data).timeouts.removeAll { $0.timeout == timeout }
        }, { timeout, data in
            DBusLoop.from(data).rearm(timeout!)
        }, context, nil)
        dbus_connection_set_wakeup_main_function(connection, { data in
            DBusLoop.from(data).wake()
        }, context, nil)
        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            if status == DBUS_DISPATCH_DATA_REMAINS { DBusLoop.from(data).wake() }
        }, context, nil)
        dbus_connection_add_filter(connection, { _, message, data in
            DBusLoop.from(data).filter(message!)
        }, context, nil)
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> DBusLoop {
        Unmanaged<DBusLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    private func rearm(_ timeout: OpaquePointer) {
        let deadline: ContinuousClock.Instant? = dbus_timeout_get_enabled(timeout) != 0
            ? .now + .milliseconds(Int(dbus_timeout_get_interval(timeout))) : nil
        if let index = timeouts.firstIndex(where: { $0.timeout == timeout }) {
            timeouts[index].deadline = deadline
        } else {
            timeouts.append((timeout, deadline))
        }
    }

    private func run() {
        while let connection {
            runJobs()
            guard self.connection != nil else { break }
            while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
            if dbus_connection_get_is_connected(connection) == 0 {
                finish(connection)
                break
            }
            waitForActivity()
        }
        stopAccepting()
        // Taken out of the queue, not copied: a job left there would keep what it captures (the
        // loop itself, for a shutdown job) alive for good.
        for job in takeJobs() { job(nil) }
    }

    private func runJobs() {
        // Once a job has closed the connection, the rest run with nil, as every job does after
        // the loop has ended: a caller waiting on one still hears back, and a job that releases
        // something (a message reference) still does.
        for job in takeJobs() { job(self.connection) }
    }

    private func takeJobs() -> [Job] {
        queue.withLock { state in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
    }

    /// Polls the enabled watches and the wake-up fd until something happens or the nearest
    /// timeout is due, then lets libdbus handle what happened.
    private func waitForActivity() {
        var descriptors = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var polled: [OpaquePointer] = []
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
            descriptors.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
            polled.append(watch)
        }
        let others = Array(self.descriptors)
        for (_, watch) in others {
            descriptors.append(pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0))
        }
        let now = ContinuousClock.now
        let nearest = timeouts.compactMap(\.deadline).min()
        let wait: Int32 = nearest.map { deadline in
            let remaining = now.duration(to: deadline)
            return remaining <= .zero ? 0 : Int32(clamping: remaining.millisecondsRoundedUp)
        } ?? -1
        let ready = poll(&descriptors, nfds_t(descriptors.count), wait)
        if ready > 0 {
            if descriptors[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeFD, &counter, 8)
            }
            for (index, watch) in polled.enumerated() {
                let revents = descriptors[index + 1].revents
                // A callback can remove watches: only handle those still registered.
                guard revents != 0, watches.contains(watch) else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                dbus_watch_handle(watch, flags)
            }
            for (index, (id, _)) in others.enumerated() where descriptors[polled.count + 1 + index].revents != 0 {
                // Looked up again: only this loop removes watches, but a job may have since.
                guard let watch = self.descriptors[id], !watch.readable() else { continue }
                self.descriptors.removeValue(forKey: id)
                close(watch.descriptor)
            }
        }
        let after = ContinuousClock.now
        for entry in timeouts {
            guard let deadline = entry.deadline, deadline <= after,
                  timeouts.contains(where: { $0.timeout == entry.timeout }) else { continue }
            rearm(entry.timeout)
            dbus_timeout_handle(entry.timeout)
        }
    }

    /// Lets the disconnection be dispatched (it completes the pending calls with an error and
    /// tells the subscribers), then drops the connection.
    private func finish(_ connection: OpaquePointer) {
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        connected.store(false, ordering: .releasing)
        self.connection = nil
        watches.removeAll()
        timeouts.removeAll()
        dbus_connection_unref(connection)
        let watched = descriptors.values
        descriptors.removeAll()
        for watch in watched {
            close(watch.descriptor)
            watch.ended()
        }
        let sinks = subscribers.withLock { state in
            defer { state.sinks.removeAll() }
            return Array(state.sinks.values)
        }
        // A call that a handler still holds keeps the loop alive, and the loop its handler: let
        // go of the handler, so that such a call (and its message) is freed when its holder lets go.
        methodHandler.withLock { $0 = nil }
        for sink in sinks { sink.finish() }
    }

    private func stopAccepting() {
        connected.store(false, ordering: .releasing)
        queue.withLock { $0.accepting = false }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func filter(_ pointer: OpaquePointer) -> DBusHandlerResult {
        switch dbus_message_get_type(pointer) {
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            guard let message = try? DBusMessage(pointer) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            if message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
                connected.store(false, ordering: .releasing)
            }
            let sinks = subscribers.withLock { Array($0.sinks.values) }
            for sink in sinks { sink.deliver(message) }
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            guard let handler = methodHandler.withLock({ $0 }) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            let call: DBusIncomingCall
            let received = DBusIncomingCall.monotonicNanoseconds()
            do {
                call = DBusIncomingCall(message: try DBusMessage(pointer), retaining: pointer, loop: self, received: received)
            } catch {
                reply(to: pointer, error: error)
                return DBUS_HANDLER_RESULT_HANDLED
            }
            handler.handle(call)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    // MARK: - Building and sending messages (loop thread only)

    /// Sends a method call and completes with its reply body or error; `complete` runs exactly
    /// once, on the loop thread.
    static func call(_ connection: OpaquePointer?, destination: String?, path: String, interface: String?, member: String,
                     body: [DBusValue], timeout: Duration,
                     complete: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) {
        guard let connection else { return complete(.failure(.disconnected())) }
        guard DBusMessage.isValidObjectPath(path) else {
            return complete(.failure(DBusError(name: DBusError.invalidArgsName, message: "'\(path)' is not a D-Bus object path")))
        }
        // libdbus aborts the process on an invalid name: check each first.
        guard destination.map(DBusMessage.isValidBusName) ?? true, interface.map(DBusMessage.isValidInterface) ?? true,
              DBusMessage.isValidMember(member) else {
            let names = [destination, interface, member].compactMap { $0 }.joined(separator: " ")
            return complete(.failure(DBusError(name: DBusError.invalidArgsName, message: "invalid D-Bus name among '\(names)'")))
        }
        guard let message = dbus_message_new_method_call(destination, path, interface, member) else {
            return complete(.failure(DBusError(name: DBusError.failedName, message: "out of memory")))
        }
        defer { dbus_message_unref(message) }
        guard DBusMessage.encode(body, into: message) else {
            let signature = body.map(\.signature).joined()
            return complete(.failure(DBusError(name: DBusError.invalidArgsName, message: "could not encode arguments (\(signature))")))
        }
        let milliseconds = Int32(clamping: timeout.millisecondsRoundedUp)
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message, &pending, max(1, milliseconds)) != 0 else {
            return complete(.failure(DBusError(name: DBusError.failedName, message: "out of memory")))
        }
        // NULL with TRUE: the connection is already gone.
        guard let pending else { return complete(.failure(.disconnected())) }
        let box = Unmanaged.passRetained(PendingReply(complete)).toOpaque()
        let notified = dbus_pending_call_set_notify(pending, { pending, data in
            let box = Unmanaged<PendingReply>.fromOpaque(data!).takeUnretainedValue()
            guard let reply = dbus_pending_call_steal_reply(pending) else {
                return box.finish(.failure(DBusError(name: DBusError.noReplyName, message: "no reply")))
            }
            defer { dbus_message_unref(reply) }
            box.finish(PendingReply.result(of: reply))
        }, box, { data in
            // Freed without a notification: the call never completed (connection dropped).
            Unmanaged<PendingReply>.fromOpaque(data!).takeRetainedValue().finish(.failure(.disconnected()))
        })
        if notified == 0 {
            Unmanaged<PendingReply>.fromOpaque(box).release()
            dbus_pending_call_cancel(pending)
            complete(.failure(DBusError(name: DBusError.failedName, message: "out of memory")))
        }
        dbus_pending_call_unref(pending)
    }

    /// Sends a message that expects no reply (a signal).
    static func send(_ connection: OpaquePointer?, build: () -> OpaquePointer?, body: [DBusValue]) -> Bool {
        guard let connection, let message = build() else { return false }
        defer { dbus_message_unref(message) }
        guard DBusMessage.encode(body, into: message) else { return false }
        return dbus_connection_send(connection, message, nil) != 0
    }

    /// Answers a method call with an error.
    func reply(to call: OpaquePointer, error: DBusError) {
        guard let connection, dbus_message_get_no_reply(call) == 0 else { return }
        let name = error.name.withCString { dbus_validate_error_name($0, nil) != 0 } ? error.name : DBusError.failedName
        guard let reply = dbus_message_new_error(call, name, error.message) else { return }
        dbus_connection_send(connection, reply, nil)
        dbus_message_unref(reply)
    }

    /// Answers a method call with a body; a body that does not encode becomes an error reply.
    func reply(to call: OpaquePointer, body: [DBusValue]) {
        guard let connection, dbus_message_get_no_reply(call) == 0 else { return }
        guard let reply = dbus_message_new_method_return(call) else { return }
        defer { dbus_message_unref(reply) }
        guard DBusMessage.encode(body, into: reply) else {
            let signature = body.map(\.signature).joined()
            return self.reply(to: call, error: DBusError(name: DBusError.failedName, message: "could not encode the reply (\(signature))"))
        }
        dbus_connection_send(connection, reply, nil)
    }
}

/// The Swift side of one pending call: completes once, whichever of reply, timeout or
/// disconnection comes first.
private final class PendingReply: Sendable {
    private let complete: Mutex<(@Sendable (Result<[DBusValue], DBusError>) -> Void)?>

    init(_ complete: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) {
        self.complete = Mutex(complete)
    }

    func finish(_ result: Result<[DBusValue], DBusError>) {
        let complete = self.complete.withLock { slot in
            defer { slot = nil }
            return slot
        }
        complete?(result)
    }

    static func result(of reply: OpaquePointer) -> Result<[DBusValue], DBusError> {
        do {
            let message = try DBusMessage(reply)
            guard message.kind == .error else { return .success(message.body) }
            return .failure(DBusError(name: message.errorName ?? DBusError.failedName,
                                      message: message.body.first?.stringValue ?? ""))
        } catch {
            return .failure(error)
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a wait never ends early.
    var millisecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return seconds.multipliedReportingOverflow(by: 1000).overflow ? .max
            : seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond
    }
}
