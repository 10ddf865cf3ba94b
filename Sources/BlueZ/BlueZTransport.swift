import DBus
import Glibc
public import UnleashedKit
import Synchronization

/// The module's packet link over BlueZ GATT: packets go out as write-without-response on the
/// Command characteristic and come in as notifications of the Event characteristic.
///
/// Where BlueZ offers them (`WriteAcquired` and `NotifyAcquired` present), the link takes the
/// characteristics' sockets (`AcquireWrite`, `AcquireNotify`): a packet is then one `send` on a
/// socket, and a notification one `read` on the D-Bus connection's thread, with no D-Bus message,
/// no marshalling and no trip through the bus daemon either way. Where BlueZ refuses them, it
/// writes with `WriteValue` and reads `Value` changes after `StartNotify`, as before.
///
/// It reads its own D-Bus connection's signals where they arrive, on the connection's thread,
/// rather than through the client's object mirror: a notification costs one decode and one
/// filter, and goes straight to the session's stream. A one-packet message (every request but
/// the largest) is handed to the connection without waiting for BlueZ's reply, as an ATT Write
/// Command has no answer either: the session goes on at once, a successful reply wakes nobody,
/// and a failed write arrives later as ``TransportEvent/sendFailed(_:)``.
public final class BlueZTransport: DirectTransport {
    public let mtu: Int
    public let events: AsyncStream<TransportEvent>

    /// How notifications and writes travel, for tests and benchmarks to tell.
    public enum Path: Sendable, Hashable {
        /// `AcquireWrite` and `AcquireNotify` sockets.
        case sockets
        /// `WriteValue` calls and `PropertiesChanged` signals.
        case messages
        /// Notifications on a socket, writes as `WriteValue` (or the other way round).
        case mixed
    }

    /// The way this link's packets travel.
    public let path: Path

    private let connection: DBusConnection
    /// How writes refused as busy are tried again, and the clock their pauses are taken on.
    private let inProgress: InProgressRetry
    private let clock: any Clock<Duration>
    private let commandPath: String
    private let onClose: @Sendable () async -> Void
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let watch: SignalWatch
    /// The `AcquireNotify` socket's watch, on the connection's thread or the session's.
    private let notifyWatch: NotifyWatch?

    private enum NotifyWatch {
        case bus(DescriptorWatch)
        case thread(ExecutorThread, Int)

        func cancel() {
            switch self {
            case .bus(let watch): watch.cancel()
            case .thread(let thread, let id): thread.unwatch(id)
            }
        }
    }
    /// Where notifications read from the socket go instead of ``events``, once given.
    private let directReceiver: DirectReceiver

    /// The thread that reads the notification socket, when it is not the bus connection's.
    public var readingThread: ExecutorThread? {
        if case .thread(let thread, _)? = notifyWatch { thread } else { nil }
    }

    /// The `AcquireWrite` socket while the link is open; nil without one or once closed.
    private let writeSocket: Mutex<Int32?>

    /// Subscribes to the Event characteristic and starts reporting packets.
    ///
    /// - Parameters:
    ///   - mtu: the ATT MTU (the characteristic's `MTU` property): packets are at most `mtu - 3`.
    ///   - sockets: which of the two characteristics offer `AcquireWrite` and `AcquireNotify` (their
    ///     `WriteAcquired` and `NotifyAcquired` properties are present); nil to use neither.
    ///   - inProgress: how a write BlueZ refuses as busy (`InProgress`, a full socket) is tried
    ///     again, on the client's clock.
    ///   - readingOn: the thread that reads the notification socket: the session's own, so that a
    ///     notification wakes one thread and is handled there; nil for the bus connection's.
    ///   - onClose: takes the link down (disconnect, close the bus connection).
    ///   - notifySocketEndedEarly: called when the `AcquireNotify` socket ends before it has
    ///     delivered a notification, which on some devices it does at once although the link is
    ///     up: the caller can take notifications as messages on the next link.
    init(client: BlueZClient, devicePath: String, commandPath: String, eventPath: String, mtu: Int,
         sockets: (write: Bool, notify: Bool)?, inProgress: InProgressRetry = InProgressRetry(),
         readingOn thread: ExecutorThread? = nil,
         notifySocketEndedEarly: @escaping @Sendable () -> Void = {},
         onClose: @escaping @Sendable () async -> Void) async throws(BlueZError) {
        let connection = client.connection
        self.connection = connection
        self.inProgress = inProgress
        clock = client.clock
        self.commandPath = commandPath
        self.onClose = onClose
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .bufferingNewest(65_536))
        self.events = events
        self.sink = sink
        let watch = connection.watchSignals({ message in
            if let event = Self.event(from: message, devicePath: devicePath, eventPath: eventPath) { sink.yield(event) }
        }, ended: {
            sink.yield(.disconnected(reason: "the link to bluetoothd closed"))
            sink.finish()
        })
        self.watch = watch
        var notifyWatch: NotifyWatch?
        let directReceiver = DirectReceiver()
        self.directReceiver = directReceiver
        do {
            if sockets?.notify == true, let (socket, _) = await Self.acquire("AcquireNotify", eventPath, client) {
                let delivered = SeenFlag()
                let readable: @Sendable () -> Bool = {
                    let open = Self.readNotifications(socket, into: sink, direct: directReceiver, delivered: delivered)
                    if !open && !delivered.isSet { notifySocketEndedEarly() }
                    return open
                }
                notifyWatch = if let thread {
                    .thread(thread, thread.watch(descriptor: socket, readable: readable))
                } else {
                    .bus(connection.watchDescriptor(socket, readable: readable, ended: {}))
                }
            } else {
                try await client.call(eventPath, BlueZName.characteristic, "StartNotify", timeout: .seconds(10))
            }
        } catch {
            watch.cancel()
            throw error
        }
        self.notifyWatch = notifyWatch
        let written = sockets?.write == true ? await Self.acquire("AcquireWrite", commandPath, client) : nil
        writeSocket = Mutex(written?.socket)
        // The socket's MTU is the one its writes are held to, and BlueZ reads a socket's write
        // into 512 bytes (sock_read in gatt-client.c), an ATT value's most: a longer one is cut.
        self.mtu = written.map { min(max(23, $0.mtu), Self.socketValueLimit + 3) } ?? mtu
        path = switch (notifyWatch != nil, written != nil) {
        case (true, true): .sockets
        case (false, false): .messages
        default: .mixed
        }
    }

    /// A characteristic's socket from `AcquireWrite` or `AcquireNotify`, or nil when BlueZ refuses
    /// it (another client holds it, or this BlueZ does not offer it): the link then uses messages.
    private static func acquire(_ method: String, _ path: String, _ client: BlueZClient) async -> (socket: Int32, mtu: Int)? {
        guard let reply = try? await client.call(path, BlueZName.characteristic, method, [.properties([:])], timeout: .seconds(10)),
              case .unixFD(let socket)? = reply.first, socket >= 0 else { return nil }
        // Reads on the D-Bus thread must never block it: made sure of here, not assumed of BlueZ.
        let flags = fcntl(socket, F_GETFL)
        guard reply.count == 2, let mtu = reply[1].intValue, flags >= 0, fcntl(socket, F_SETFL, flags | O_NONBLOCK) == 0 else {
            Glibc.close(socket)
            return nil
        }
        return (socket, mtu)
    }

    /// The longest value BlueZ takes from a socket in one write.
    static let socketValueLimit = 512

    /// Reads one notification from the `AcquireNotify` socket (one `read`, one ATT notification)
    /// into `sink`; false once BlueZ has closed it, which it does when the link goes. One per
    /// wake-up: the poll is level-triggered, so another waiting is read on the next turn, and a
    /// lone notification (a request's answer) costs no second `read` to learn there is no more.
    /// An empty read is an empty notification unless the socket has hung up.
    private static func readNotifications(_ socket: Int32, into sink: AsyncStream<TransportEvent>.Continuation,
                                          direct: DirectReceiver, delivered: SeenFlag) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: notificationLimit) { buffer in
            while true {
                let count = read(socket, buffer.baseAddress, buffer.count)
                if count > 0 || (count == 0 && !hungUp(socket)) {
                    delivered.set()
                    let packet = Array(buffer[..<count])
                    if let receive = direct.receive { receive(packet) } else { sink.yield(.packet(packet)) }
                    return true
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && errno == EAGAIN { return true }
                sink.yield(.disconnected(reason: "BlueZ closed the module's notification socket"))
                return false
            }
        }
    }

    /// Whether the peer of `socket` has closed it (a read of nothing is then its end).
    private static func hungUp(_ socket: Int32) -> Bool {
        // A hang-up is reported whatever events are asked for.
        var entry = pollfd(fd: socket, events: 0, revents: 0)
        return poll(&entry, 1, 0) != 0 && entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    /// Longer than any ATT value (an MTU is at most 517), so that no read is cut short.
    private static let notificationLimit = 1024

    public func deliverPackets(to receive: @escaping @Sendable ([UInt8]) -> Void) {
        directReceiver.receive = receive
    }

    /// Set once, before the packets it is for are read, and read for each packet on the reading
    /// thread; behind a mutex all the same, as it is set from elsewhere. Boxed: a bare closure
    /// read out of a mutex is written back through a reabstraction thunk, and the thunks pile up,
    /// one more per packet, until each packet walks thousands of them.
    private final class DirectReceiver: Sendable {
        private struct Box: Sendable {
            let receive: @Sendable ([UInt8]) -> Void
        }

        private let handler = Mutex<Box?>(nil)

        var receive: (@Sendable ([UInt8]) -> Void)? {
            get { handler.withLock { $0 }?.receive }
            set { handler.withLock { $0 = newValue.map(Box.init) } }
        }
    }

    /// What one signal means for this link, if anything.
    static func event(from message: DBusMessage, devicePath: String, eventPath: String) -> TransportEvent? {
        switch BlueZLinkSignal.read(message, devicePath: devicePath, characteristicPaths: [eventPath], deviceWord: "module") {
        case .value(_, let packet)?: .packet(packet)
        case .lost(let reason)?: .disconnected(reason: reason)
        case nil: nil
        }
    }

    public nonisolated(nonsending) func send(_ packets: [[UInt8]]) async throws(TransportError) {
        let limit = mtu - 3
        if let large = packets.first(where: { $0.count > limit }) {
            throw .packetTooLarge(size: large.count, limit: limit)
        }
        guard connection.isConnected else { throw .notConnected }
        if writeSocket.withLock({ $0 != nil }) { return try await sendOnSocket(packets) }
        if packets.count == 1 { return post(packets[0], attempt: 1) }
        var unsent = packets[...]
        do throws(DBusError) {
            try await inProgress.run(on: clock, isInProgress: { $0.name == BlueZName.Error.inProgress }) { _ async throws(DBusError) in
                guard let (failed, error) = await write(unsent) else { return }
                // Another client's write is in flight on the characteristic (BlueZ allows one):
                // send again from the first packet that failed. Packets after it that did get
                // through arrive twice, which the reassembler ignores (PROTOCOL.md §3.2).
                unsent = unsent.dropFirst(failed)
                throw error
            }
        } catch {
            throw failure(error)
        }
    }

    /// A full `AcquireWrite` socket: BlueZ has not yet passed on what is queued.
    private struct SocketFull: Error {}

    /// Sends each packet as one write on the `AcquireWrite` socket. A full socket is tried
    /// again as `InProgress` is.
    private nonisolated(nonsending) func sendOnSocket(_ packets: [[UInt8]]) async throws(TransportError) {
        // BlueZ stops reading a socket after an empty read: an empty packet would end the link.
        if packets.contains(where: \.isEmpty) { throw .failed("an empty packet cannot be written to the module") }
        for packet in packets {
            do throws(any Error) {
                try await inProgress.run(on: clock, isInProgress: { $0 is SocketFull }) { _ async throws(any Error) in
                    try writeOnSocket(packet)
                }
            } catch let error as TransportError {
                throw error
            } catch {
                throw .failed("writing to the module failed: \(String(cString: strerror(EAGAIN)))")
            }
        }
    }

    /// One write of `packet` on the socket, tried again at once when a signal interrupts it.
    private func writeOnSocket(_ packet: [UInt8]) throws(any Error) {
        while true {
            let error = writeSocket.withLock { socket -> Int32 in
                guard let socket else { return EBADF }
                let sent = packet.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                return sent == packet.count ? 0 : errno
            }
            switch error {
            case 0: return
            case EINTR: continue
            case EAGAIN: throw SocketFull()
            case EPIPE, ECONNRESET, ENOTCONN, EBADF: throw TransportError.notConnected
            default: throw TransportError.failed("writing to the module failed: \(String(cString: strerror(error)))")
            }
        }
    }

    /// Writes one packet without waiting; a refusal comes back on the connection's thread and is
    /// tried again (`InProgress`) or reported on ``events``.
    private func post(_ packet: [UInt8], attempt: Int) {
        connection.post(BlueZName.service, path: commandPath, interface: BlueZName.characteristic, member: "WriteValue",
                        [.bytes(packet), Self.withoutResponse], timeout: Self.writeTimeout) { [weak self] error in
            guard let self else { return }
            if error.name == BlueZName.Error.inProgress && inProgress.allowsAnother(after: attempt) {
                Task {
                    guard await self.inProgress.pauseBeforeNext(on: self.clock) else {
                        self.sink.yield(.sendFailed(self.failure(error)))
                        return
                    }
                    self.post(packet, attempt: attempt + 1)
                }
            } else {
                sink.yield(.sendFailed(failure(error)))
            }
        }
    }

    /// What a refused write means for the session.
    private func failure(_ error: DBusError) -> TransportError {
        if !connection.isConnected || error.name == DBusError.disconnectedName || error.message == "Not connected"
            || error.name == BlueZName.Error.notConnected || error.name == DBusError.unknownObjectName
            || error.name == DBusError.serviceUnknownName {
            return .notConnected
        }
        return .failed("writing to the module failed: \(error)")
    }

    /// Writes `packets` in order; the first failure, if any, with the index of its packet.
    private func write(_ packets: ArraySlice<[UInt8]>) async -> (index: Int, error: DBusError)? {
        let calls = packets.map {
            DBusConnection.Call(path: commandPath, interface: BlueZName.characteristic, member: "WriteValue", [.bytes($0), Self.withoutResponse])
        }
        let outcomes = await connection.callAll(BlueZName.service, calls, timeout: Self.writeTimeout)
        for (index, outcome) in outcomes.enumerated() {
            if case .failure(let error) = outcome { return (index, error) }
        }
        return nil
    }

    /// `WriteValue`'s options for a write without response (an ATT Write Command).
    private static let withoutResponse = DBusValue.properties(["type": .string("command")])
    private static let writeTimeout: Duration = .seconds(5)

    deinit {
        releaseSockets()
    }

    public nonisolated(nonsending) func close() async {
        releaseSockets()
        await onClose()
    }

    /// Lets go of both sockets: BlueZ then releases the characteristics' locks.
    private func releaseSockets() {
        notifyWatch?.cancel()
        writeSocket.withLock { socket in
            if let socket { Glibc.close(socket) }
            socket = nil
        }
    }
}
