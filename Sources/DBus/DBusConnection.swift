internal import CDBus
import Glibc
import Synchronization

/// A private connection to a message bus, with an async API: method calls with timeouts,
/// signals as an `AsyncStream`, and a handler for calls to objects this process serves.
///
/// Each connection has its own loop thread (see ``DBusLoop``). Open one per BLE session, as bleak
/// does: BlueZ ties notification and discovery sessions to the connection, so a fresh connection
/// starts clean and a closed one cleans up after itself.
public final class DBusConnection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Hashable, CustomStringConvertible {
        /// The system bus: `$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`.
        case system
        /// The session bus: `$DBUS_SESSION_BUS_ADDRESS`.
        case session
        /// A bus at this address, such as `unix:path=/tmp/bus.sock`.
        case address(String)

        public var description: String {
            switch self {
            case .system: "the system bus"
            case .session: "the session bus"
            case .address(let address): "the bus at \(address)"
            }
        }
    }

    /// The default timeout of a call, as libdbus's own default.
    public static let defaultTimeout: Duration = .seconds(25)

    /// This connection's unique name on the bus (`:1.42`).
    public let uniqueName: String
    private let loop: DBusLoop

    private init(loop: DBusLoop, uniqueName: String) {
        self.loop = loop
        self.uniqueName = uniqueName
    }

    deinit {
        loop.shutdown()
    }

    /// Connects and registers on `bus`.
    ///
    /// - Throws: ``DBusError`` when there is no bus there or it refuses the connection; the
    ///   message is libdbus's, which names the socket it tried.
    public static func open(_ bus: Bus) async throws(DBusError) -> DBusConnection {
        let loop = DBusLoop()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, DBusError>, Never>) in
            loop.start(open: { connect(to: bus) }, opened: { continuation.resume(returning: $0) })
        }
        return DBusConnection(loop: loop, uniqueName: try result.get())
    }

    private static func connect(to bus: Bus) -> Result<OpaquePointer, DBusError> {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let connection: OpaquePointer?
        switch bus {
        case .system: connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let address):
            connection = dbus_connection_open_private(address, &error)
            if let connection {
                // Nothing else has the connection yet: registering (Hello) can block here.
                dbus_connection_set_exit_on_disconnect(connection, 0)
                if dbus_bus_register(connection, &error) == 0 {
                    dbus_connection_close(connection)
                    dbus_connection_unref(connection)
                    return .failure(Self.error(error, fallback: "could not register on \(bus)"))
                }
            }
        }
        guard let connection else { return .failure(Self.error(error, fallback: "could not connect to \(bus)")) }
        return .success(connection)
    }

    private static func error(_ error: CDBus.DBusError, fallback: String) -> DBusError {
        guard let name = error.name else { return DBusError(name: DBusError.failedName, message: fallback) }
        return DBusError(name: String(cString: name),
                         message: error.message.map { String(cString: $0) } ?? fallback)
    }

    /// False once the bus has gone away or ``close()`` was called; a closed connection stays closed.
    public var isConnected: Bool { loop.isConnected }

    /// Calls a method and returns the reply's body.
    ///
    /// - Parameter timeout: when to give up with `org.freedesktop.DBus.Error.NoReply`. Never
    ///   unbounded: BlueZ calls can hang.
    /// - Throws: the error reply, `NoReply`, or `Disconnected`.
    public func call(
        _ destination: String?, path: String, interface: String?, member: String,
        _ body: [DBusValue] = [], timeout: Duration = DBusConnection.defaultTimeout
    ) async throws(DBusError) -> [DBusValue] {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>) in
            loop.perform { connection in
                DBusLoop.call(connection, destination: destination, path: path, interface: interface, member: member,
                              body: body, timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
        return try result.get()
    }

    /// Sends a method call without waiting for its reply: a return is dropped on the
    /// connection's own thread, waking nobody, and only an error reply (or no reply within
    /// `timeout`, or the connection's end) reaches `onFailure`, on that thread.
    ///
    /// For calls whose success needs no answer, such as a write without response: the caller
    /// goes on at once, and a successful reply costs no task switch.
    public func post(
        _ destination: String?, path: String, interface: String?, member: String,
        _ body: [DBusValue] = [], timeout: Duration = DBusConnection.defaultTimeout,
        onFailure: @escaping @Sendable (DBusError) -> Void
    ) {
        loop.perform { connection in
            DBusLoop.call(connection, destination: destination, path: path, interface: interface, member: member,
                          body: body, timeout: timeout) { result in
                if case .failure(let error) = result { onFailure(error) }
            }
        }
    }

    /// Emits a signal from `path`.
    public func emit(path: String, interface: String, member: String, _ body: [DBusValue] = []) {
        guard DBusMessage.isValidObjectPath(path), DBusMessage.isValidInterface(interface), DBusMessage.isValidMember(member) else { return }
        loop.perform { connection in
            _ = DBusLoop.send(connection, build: { dbus_message_new_signal(path, interface, member) }, body: body)
        }
    }

    /// Every signal routed to this connection, from now on. The bus routes only the signals a
    /// match rule asks for (``addMatch(_:)``), plus those addressed to this connection. The
    /// stream ends when the connection does, after a local
    /// `org.freedesktop.DBus.Local.Disconnected` signal if the bus went away.
    public func signals() -> AsyncStream<DBusMessage> {
        signals { $0 }
    }

    /// The signals routed to this connection as `transform` reads them, from now on; when the
    /// connection ends, `ending` (if given) and then the end of the stream.
    ///
    /// `transform` runs on the connection's own thread for every signal, before any task is
    /// woken: a signal it maps to nil costs the consumer nothing. Keep it short and
    /// non-blocking, since the connection waits for it.
    public func signals<Element: Sendable>(
        ending: Element? = nil, _ transform: @escaping @Sendable (DBusMessage) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, sink) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(65_536))
        let id = loop.subscribe(deliver: { message in
            if let element = transform(message) { sink.yield(element) }
        }, finish: {
            if let ending { sink.yield(ending) }
            sink.finish()
        })
        sink.onTermination = { [weak loop] _ in loop?.unsubscribe(id) }
        return stream
    }

    /// Calls `handler` on the connection's own thread for every signal routed here, from now on,
    /// and `ended` once when the connection ends; until ``SignalWatch/cancel()``.
    ///
    /// For a consumer that keeps a stream of its own: it reads each signal where it arrives and
    /// yields what it means, with no task in between. Keep both short and non-blocking.
    public func watchSignals(_ handler: @escaping @Sendable (DBusMessage) -> Void,
                             ended: @escaping @Sendable () -> Void) -> SignalWatch {
        SignalWatch(loop: loop, id: loop.subscribe(deliver: handler, finish: ended))
    }

    /// Polls `descriptor` on the connection's own thread, beside the bus, and calls `readable` there
    /// whenever it has data or has hung up, until `readable` returns false or the watch is
    /// cancelled; `ended` is called instead if the connection ends first.
    ///
    /// For a socket BlueZ hands out (`AcquireNotify`): its packets are read where the bus's
    /// messages are, with no thread of their own. The watch owns `descriptor` and closes it when
    /// it ends. `readable` should read until the descriptor would block, and not block itself.
    public func watchDescriptor(_ descriptor: Int32, readable: @escaping @Sendable () -> Bool,
                                ended: @escaping @Sendable () -> Void) -> DescriptorWatch {
        DescriptorWatch(loop: loop, id: loop.watch(descriptor: descriptor, readable: readable, ended: ended))
    }

    /// Asks the bus to route the signals matching `rule` here; subscribe with ``signals()`` first
    /// so that none is missed.
    public func addMatch(_ rule: String) async throws(DBusError) {
        _ = try await busCall("AddMatch", [.string(rule)])
    }

    /// Undoes ``addMatch(_:)``.
    public func removeMatch(_ rule: String) async throws(DBusError) {
        _ = try await busCall("RemoveMatch", [.string(rule)])
    }

    /// Asks for a well-known name; true when this connection now owns it.
    public func requestName(_ name: String, replaceExisting: Bool = false) async throws(DBusError) -> Bool {
        let flags = UInt32(CDBUS_NAME_FLAG_DO_NOT_QUEUE) | (replaceExisting ? UInt32(CDBUS_NAME_FLAG_REPLACE_EXISTING) : 0)
        let reply = try await busCall("RequestName", [.string(name), .uint32(flags)])
        // 1: primary owner, 4: already the owner.
        return [1, 4].contains(reply.first?.intValue)
    }

    /// Gives a well-known name up.
    public func releaseName(_ name: String) async throws(DBusError) {
        _ = try await busCall("ReleaseName", [.string(name)])
    }

    /// The unique name that owns `name`, or nil when nobody does.
    public func nameOwner(_ name: String) async throws(DBusError) -> String? {
        do {
            return try await busCall("GetNameOwner", [.string(name)]).first?.stringValue
        } catch where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    private func busCall(_ member: String, _ body: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                       member: member, body, timeout: .seconds(10))
    }

    /// Hands every method call addressed to this connection to `handler`, which must answer each
    /// one exactly once (an unanswered call is answered with an error when it is released).
    /// Without a handler, libdbus answers `UnknownMethod`.
    public func handleMethodCalls(_ handler: (@Sendable (DBusIncomingCall) -> Void)?) {
        loop.setMethodHandler(handler)
    }

    /// Closes the connection. Pending calls fail with `Disconnected`; the signal streams end. The
    /// bus releases this connection's names and BlueZ ends its sessions.
    public func close() {
        loop.shutdown()
    }
}

/// A subscription made by ``DBusConnection/watchSignals(_:ended:)``.
public struct SignalWatch: Sendable {
    fileprivate let loop: DBusLoop
    fileprivate let id: Int

    /// Stops the calls; a call under way on the connection's thread still completes.
    public func cancel() {
        loop.unsubscribe(id)
    }
}

/// A descriptor polled by ``DBusConnection/watchDescriptor(_:readable:ended:)``.
public struct DescriptorWatch: Sendable {
    fileprivate let loop: DBusLoop
    fileprivate let id: Int

    /// Stops polling and closes the descriptor, on the connection's thread; a call of `readable`
    /// under way there completes first.
    public func cancel() {
        loop.unwatch(id)
    }
}

/// A method call to an object this process serves, waiting for its answer.
public final class DBusIncomingCall: Sendable {
    /// The call: path, interface, member, sender and arguments.
    public let message: DBusMessage
    /// When the call was taken off the bus (CLOCK_MONOTONIC nanoseconds, the clock every process
    /// on the machine shares): for measuring when a request crossed the D-Bus boundary.
    public let receivedNanoseconds: UInt64
    private let pointer: MessagePointer
    private let loop: DBusLoop
    private let answered = Atomic<Bool>(false)

    /// An owned libdbus message reference, released on the loop thread.
    ///
    /// `@unchecked Sendable`: the pointer is only dereferenced in jobs on the loop thread.
    private struct MessagePointer: @unchecked Sendable {
        let raw: OpaquePointer
    }

    init(message: DBusMessage, retaining raw: OpaquePointer, loop: DBusLoop, received: UInt64) {
        self.message = message
        receivedNanoseconds = received
        pointer = MessagePointer(raw: dbus_message_ref(raw))
        self.loop = loop
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    deinit {
        let pointer = self.pointer
        let unanswered = !answered.load(ordering: .acquiring)
        let member = message.member ?? ""
        loop.perform { [loop] connection in
            if connection != nil, unanswered {
                loop.reply(to: pointer.raw, error: DBusError(name: DBusError.failedName, message: "\(member) was not answered"))
            }
            dbus_message_unref(pointer.raw)
        }
    }

    /// Answers with a return value; later answers are ignored.
    ///
    /// libdbus copies a `.unixFD` when the reply is built, on the connection's loop. `encoded`
    /// runs there right after (or at once when nothing is sent), so that the caller can close
    /// its own copy then: a client that closes its end sees the hang-up from that moment.
    public func reply(_ body: [DBusValue] = [], encoded: (@Sendable () -> Void)? = nil) {
        guard claim() else {
            encoded?()
            return
        }
        let pointer = self.pointer
        loop.perform { [loop] connection in
            if connection != nil { loop.reply(to: pointer.raw, body: body) }
            encoded?()
        }
    }

    /// Answers with an error; later answers are ignored.
    public func fail(_ error: DBusError) {
        guard claim() else { return }
        let pointer = self.pointer
        loop.perform { [loop] connection in
            if connection != nil { loop.reply(to: pointer.raw, error: error) }
        }
    }

    /// Answers with an error named `name`.
    public func fail(_ name: String, _ message: String = "") {
        fail(DBusError(name: name, message: message))
    }

    private func claim() -> Bool {
        !answered.exchange(true, ordering: .acquiringAndReleasing)
    }
}

extension DBusConnection {
    /// One method call in a batch (see ``callAll(_:_:timeout:)``).
    public struct Call: Sendable {
        public var path: String
        public var interface: String
        public var member: String
        public var body: [DBusValue]

        public init(path: String, interface: String, member: String, _ body: [DBusValue] = []) {
            self.path = path
            self.interface = interface
            self.member = member
            self.body = body
        }
    }

    /// Sends several calls back to back, in order, with no other message of this connection
    /// between them, and returns every outcome in the same order. The peer sees them in order;
    /// their replies are awaited together, so a batch costs about one round trip.
    public func callAll(_ destination: String, _ calls: [Call], timeout: Duration = DBusConnection.defaultTimeout)
        async -> [Result<[DBusValue], DBusError>]
    {
        guard !calls.isEmpty else { return [] }
        let outcomes = Mutex<[Result<[DBusValue], DBusError>?]>(Array(repeating: nil, count: calls.count))
        return await withCheckedContinuation { (continuation: CheckedContinuation<[Result<[DBusValue], DBusError>], Never>) in
            let remaining = Atomic<Int>(calls.count)
            loop.perform { connection in
                for (index, call) in calls.enumerated() {
                    DBusLoop.call(connection, destination: destination, path: call.path, interface: call.interface,
                                  member: call.member, body: call.body, timeout: timeout) { result in
                        outcomes.withLock { $0[index] = result }
                        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                            continuation.resume(returning: outcomes.withLock { $0.map { $0! } })
                        }
                    }
                }
            }
        }
    }
}
