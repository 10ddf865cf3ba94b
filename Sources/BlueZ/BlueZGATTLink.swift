import DBus
import Foundation
public import GATT
import Glibc
public import UnleashedKit
import Synchronization

/// A device's GATT client over BlueZ, for modules and cameras alike: `WriteValue`, `ReadValue`
/// and `StartNotify` on the characteristics found by service and UUID, values and the link's end
/// read from this client's own signals.
///
/// Signals are read where they arrive, on the D-Bus connection's thread, rather than through
/// the client's object mirror: a notification costs one decode and one filter, and goes straight
/// to ``events``. A burst sent with ``send(_:to:)`` of one value (every module request but the
/// largest) is handed to the connection without waiting for BlueZ's reply, as an ATT Write
/// Command has no answer either: the caller goes on at once, a successful reply wakes nobody,
/// and a failed write arrives later as ``GATTLinkEvent/writeFailed(_:_:)``.
///
/// For the characteristics it is asked to stream (a module's Command and Event), the link takes
/// their sockets where BlueZ offers them (`WriteAcquired` and `NotifyAcquired` present):
/// `AcquireWrite` when it is made, `AcquireNotify` on ``subscribe(_:)``. A packet is then one
/// `send` on a socket, and a notification one `read` on the reading thread, with no D-Bus
/// message, no marshalling and no trip through the bus daemon either way. Where BlueZ refuses
/// them, it falls back to messages.
public final class BlueZGATTLink: DirectGATTLink {
    public let events: AsyncStream<GATTLinkEvent>
    public let mtu: Int

    /// How notifications and writes without response travel, for tests and benchmarks to tell.
    public enum Path: Sendable, Hashable {
        /// `AcquireWrite` and `AcquireNotify` sockets.
        case sockets
        /// `WriteValue` calls and `PropertiesChanged` signals.
        case messages
        /// Notifications on a socket, writes as `WriteValue` (or the other way round).
        case mixed
    }

    /// The way this link's streamed values travel.
    public var path: Path {
        switch (notifiesOnSocket.isSet, writesOnSocket) {
        case (true, true): .sockets
        case (false, false): .messages
        default: .mixed
        }
    }

    /// What a link to one device is given by its provider.
    struct Options: Sendable {
        /// What the device is called in messages ("module", "camera").
        var deviceWord: String
        /// How calls BlueZ refuses as busy are tried again.
        var inProgress = InProgressRetry()
        /// The characteristics whose sockets the link takes where BlueZ offers them.
        var streamed: Set<GATTCharacteristicID> = []
        /// The thread that reads notification sockets (the session's own, so that a notification
        /// wakes one thread and is handled there); nil for the bus connection's.
        var readingThread: ExecutorThread?
        /// Whether `AcquireNotify` is to be left alone: an earlier socket ended at once.
        var avoidNotifySockets = false
        /// Called when an `AcquireNotify` socket ends before it has delivered a notification,
        /// which on some devices it does at once although the link is up: the provider can take
        /// notifications as messages on the next link.
        var notifySocketEndedEarly: @Sendable () -> Void = {}
    }

    private let client: BlueZClient
    private let connection: DBusConnection
    private let clock: any Clock<Duration>
    private let devicePath: String
    private let paths: [GATTCharacteristicID: String]
    private let options: Options
    private let sink: AsyncStream<GATTLinkEvent>.Continuation
    private let watch: SignalWatch
    /// The `AcquireNotify` sockets' watches, on the bus connection's thread or the reading thread.
    private let notifyWatches = Mutex<[NotifyWatch]>([])
    /// Where each streamed characteristic's notifications go instead of ``events``, once given.
    private let directReceivers = Mutex<[GATTCharacteristicID: DirectReceiver]>([:])
    /// The `AcquireWrite` socket while the link is open; nil without one or once closed.
    private let writeSocket: Mutex<WriteSocket?>
    /// Whether the link took a write socket, and a notification socket.
    private let writesOnSocket: Bool
    private let notifiesOnSocket = SeenFlag()

    private struct WriteSocket {
        let characteristic: GATTCharacteristicID
        let descriptor: Int32
    }

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

    /// The thread that reads a notification socket, when it is not the bus connection's.
    public var readingThread: ExecutorThread? {
        notifiesOnSocket.isSet ? options.readingThread : nil
    }

    /// Starts reporting the device's values and the link's end, and takes the write socket of a
    /// streamed characteristic where BlueZ offers it.
    init(client: BlueZClient, devicePath: String, options: Options) async {
        self.client = client
        connection = client.connection
        clock = client.clock
        self.devicePath = devicePath
        self.options = options
        let tree = await client.tree
        let paths = tree.characteristics(of: devicePath)
        self.paths = paths
        let (events, sink) = AsyncStream.makeStream(of: GATTLinkEvent.self, bufferingPolicy: .bufferingNewest(65_536))
        self.events = events
        self.sink = sink
        let identifiers = Dictionary(paths.map { ($0.value, $0.key) }) { first, _ in first }
        let watched = Set(paths.values)
        let deviceWord = options.deviceWord
        watch = connection.watchSignals({ message in
            switch BlueZLinkSignal.read(message, devicePath: devicePath, characteristicPaths: watched, deviceWord: deviceWord) {
            case .value(let path, let value)?:
                if let id = identifiers[path] { sink.yield(.value(id, value)) }
            case .lost(let reason)?:
                sink.yield(.disconnected(reason: reason))
                sink.finish()
            case nil: break
            }
        }, ended: {
            sink.yield(.disconnected(reason: "the link to bluetoothd closed"))
            sink.finish()
        })
        // BlueZ negotiates the MTU itself (ExchangeMTU=517) and reports it per characteristic;
        // 23 is the ATT default until the exchange is done.
        let mtu = max(23, paths.values.compactMap { tree.properties($0, BlueZName.characteristic)?["MTU"]?.intValue }.max() ?? 23)
        // A BlueZ that can hand out a characteristic's socket shows the property saying whether it has.
        let writable = paths.first { id, path in
            options.streamed.contains(id) && tree.properties(path, BlueZName.characteristic)?["WriteAcquired"] != nil
        }
        if let (id, path) = writable, let (socket, socketMTU) = await Self.acquire("AcquireWrite", path, client) {
            writeSocket = Mutex(WriteSocket(characteristic: id, descriptor: socket))
            writesOnSocket = true
            // The socket's MTU is the one its writes are held to, and BlueZ reads a socket's write
            // into 512 bytes (sock_read in gatt-client.c), an ATT value's most: a longer one is cut.
            self.mtu = min(max(23, socketMTU), Self.socketValueLimit + 3)
        } else {
            writeSocket = Mutex(nil)
            writesOnSocket = false
            self.mtu = mtu
        }
    }

    public func offers(_ characteristic: GATTCharacteristicID) async -> Bool {
        paths[characteristic] != nil
    }

    private func path(_ characteristic: GATTCharacteristicID) throws(GATTError) -> String {
        guard let path = paths[characteristic] else { throw .missing(characteristic) }
        return path
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError) {
        let path = try path(characteristic)
        let options = DBusValue.properties(["type": .string(withResponse ? "request" : "command")])
        try await retryingInProgress { () async throws(BlueZError) in
            try await client.call(path, BlueZName.characteristic, "WriteValue", [.bytes(value), options], timeout: Self.writeTimeout)
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) async throws(GATTError) -> [UInt8] {
        let path = try path(characteristic)
        var reply: [DBusValue] = []
        try await retryingInProgress { () async throws(BlueZError) in
            reply = try await client.call(path, BlueZName.characteristic, "ReadValue", [.properties([:])], timeout: Self.writeTimeout)
        }
        guard let bytes = reply.first?.bytesValue else { throw .failed("BlueZ answered ReadValue without a value") }
        return bytes
    }

    /// Turns notifications on: on the characteristic's socket where it is streamed and BlueZ
    /// offers one, with `StartNotify` otherwise.
    public func subscribe(_ characteristic: GATTCharacteristicID) async throws(GATTError) {
        let path = try path(characteristic)
        if options.streamed.contains(characteristic), !options.avoidNotifySockets,
           await client.tree.properties(path, BlueZName.characteristic)?["NotifyAcquired"] != nil,
           let (socket, _) = await Self.acquire("AcquireNotify", path, client) {
            return watchNotifications(on: socket, of: characteristic)
        }
        try await retryingInProgress { () async throws(BlueZError) in
            try await client.call(path, BlueZName.characteristic, "StartNotify", timeout: .seconds(10))
        }
    }

    /// Reads `characteristic`'s notifications from its `AcquireNotify` socket from now on.
    private func watchNotifications(on socket: Int32, of characteristic: GATTCharacteristicID) {
        let (sink, deviceWord, endedEarly) = (sink, options.deviceWord, options.notifySocketEndedEarly)
        let direct = receiver(for: characteristic)
        let delivered = SeenFlag()
        let readable: @Sendable () -> Bool = {
            let open = Self.readNotification(socket, of: characteristic, into: sink, direct: direct, delivered: delivered,
                                             deviceWord: deviceWord)
            if !open && !delivered.isSet { endedEarly() }
            return open
        }
        let watch: NotifyWatch = if let thread = options.readingThread {
            .thread(thread, thread.watch(descriptor: socket, readable: readable))
        } else {
            .bus(connection.watchDescriptor(socket, readable: readable, ended: {}))
        }
        notifyWatches.withLock { $0.append(watch) }
        notifiesOnSocket.set()
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

    /// Reads one notification from an `AcquireNotify` socket (one `read`, one ATT notification)
    /// into `sink`; false once BlueZ has closed it, which it does when the link goes. One per
    /// wake-up: the poll is level-triggered, so another waiting is read on the next turn, and a
    /// lone notification (a request's answer) costs no second `read` to learn there is no more.
    /// An empty read is an empty notification unless the socket has hung up.
    private static func readNotification(_ socket: Int32, of characteristic: GATTCharacteristicID,
                                         into sink: AsyncStream<GATTLinkEvent>.Continuation, direct: DirectReceiver,
                                         delivered: SeenFlag, deviceWord: String) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: notificationLimit) { buffer in
            while true {
                let count = Glibc.read(socket, buffer.baseAddress, buffer.count)
                if count > 0 || (count == 0 && !hungUp(socket)) {
                    delivered.set()
                    let value = Array(buffer[..<count])
                    if let receive = direct.receive { receive(value) } else { sink.yield(.value(characteristic, value)) }
                    return true
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && errno == EAGAIN { return true }
                sink.yield(.disconnected(reason: "BlueZ closed the \(deviceWord)'s notification socket"))
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

    public func deliverValues(of characteristic: GATTCharacteristicID, to receive: @escaping @Sendable ([UInt8]) -> Void) {
        receiver(for: characteristic).receive = receive
    }

    private func receiver(for characteristic: GATTCharacteristicID) -> DirectReceiver {
        directReceivers.withLock { receivers in
            if let receiver = receivers[characteristic] { return receiver }
            let receiver = DirectReceiver()
            receivers[characteristic] = receiver
            return receiver
        }
    }

    /// Set once, before the values it is for are read, and read for each value on the reading
    /// thread; behind a mutex all the same, as it is set from elsewhere. Boxed: a bare closure
    /// read out of a mutex is written back through a reabstraction thunk, and the thunks pile up,
    /// one more per value, until each value walks thousands of them.
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

    public nonisolated(nonsending) func send(_ values: [[UInt8]], to characteristic: GATTCharacteristicID) async throws(GATTError) {
        guard connection.isConnected else { throw .notConnected("the link to bluetoothd closed") }
        if writeSocket.withLock({ $0?.characteristic == characteristic }) { return try await sendOnSocket(values) }
        let path = try path(characteristic)
        if values.count == 1 { return post(values[0], to: characteristic, path: path, attempt: 1) }
        var unsent = values[...]
        do throws(DBusError) {
            try await options.inProgress.run(on: clock, isInProgress: { $0.name == BlueZName.Error.inProgress }) { _ async throws(DBusError) in
                guard let (failed, error) = await write(unsent, path: path) else { return }
                // Another client's write is in flight on the characteristic (BlueZ allows one):
                // send again from the first value that failed. Values after it that did get
                // through arrive twice, which the module's reassembler ignores (PROTOCOL.md §3.2).
                unsent = unsent.dropFirst(failed)
                throw error
            }
        } catch {
            throw failure(error)
        }
    }

    /// A full `AcquireWrite` socket: BlueZ has not yet passed on what is queued.
    private struct SocketFull: Error {}

    /// Sends each value as one write on the `AcquireWrite` socket. A full socket is tried
    /// again as `InProgress` is.
    private nonisolated(nonsending) func sendOnSocket(_ values: [[UInt8]]) async throws(GATTError) {
        // BlueZ stops reading a socket after an empty read: an empty value would end the link.
        if values.contains(where: \.isEmpty) { throw .failed("an empty packet cannot be written to the \(options.deviceWord)") }
        for value in values {
            do throws(any Error) {
                try await options.inProgress.run(on: clock, isInProgress: { $0 is SocketFull }) { _ async throws(any Error) in
                    try writeOnSocket(value)
                }
            } catch let error as GATTError {
                throw error
            } catch {
                throw .failed("writing to the \(options.deviceWord) failed: \(String(cString: strerror(EAGAIN)))")
            }
        }
    }

    /// One write of `value` on the socket, tried again at once when a signal interrupts it.
    private func writeOnSocket(_ value: [UInt8]) throws(any Error) {
        while true {
            let error = writeSocket.withLock { socket -> Int32 in
                guard let socket else { return EBADF }
                let sent = value.withUnsafeBytes { Glibc.send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                return sent == value.count ? 0 : errno
            }
            switch error {
            case 0: return
            case EINTR: continue
            case EAGAIN: throw SocketFull()
            case EPIPE, ECONNRESET, ENOTCONN, EBADF: throw GATTError.notConnected("BlueZ closed the \(options.deviceWord)'s write socket")
            default: throw GATTError.failed("writing to the \(options.deviceWord) failed: \(String(cString: strerror(error)))")
            }
        }
    }

    /// Writes one value without waiting; a refusal comes back on the connection's thread and is
    /// tried again (`InProgress`) or reported on ``events``.
    private func post(_ value: [UInt8], to characteristic: GATTCharacteristicID, path: String, attempt: Int) {
        connection.post(BlueZName.service, path: path, interface: BlueZName.characteristic, member: "WriteValue",
                        [.bytes(value), Self.withoutResponse], timeout: Self.writeTimeout) { [weak self] error in
            guard let self else { return }
            if error.name == BlueZName.Error.inProgress && options.inProgress.allowsAnother(after: attempt) {
                Task {
                    guard await self.options.inProgress.pauseBeforeNext(on: self.clock) else {
                        self.sink.yield(.writeFailed(characteristic, self.failure(error)))
                        return
                    }
                    self.post(value, to: characteristic, path: path, attempt: attempt + 1)
                }
            } else {
                sink.yield(.writeFailed(characteristic, failure(error)))
            }
        }
    }

    /// What a refused write without response means.
    private func failure(_ error: DBusError) -> GATTError {
        if !connection.isConnected || error.name == DBusError.disconnectedName || error.message == "Not connected"
            || error.name == BlueZName.Error.notConnected || error.name == DBusError.unknownObjectName
            || error.name == DBusError.serviceUnknownName {
            return .notConnected(error.message.isEmpty ? error.name : error.message)
        }
        return .failed("writing to the \(options.deviceWord) failed: \(error)")
    }

    /// Writes `values` in order; the first failure, if any, with the index of its value.
    private func write(_ values: ArraySlice<[UInt8]>, path: String) async -> (index: Int, error: DBusError)? {
        let calls = values.map {
            DBusConnection.Call(path: path, interface: BlueZName.characteristic, member: "WriteValue", [.bytes($0), Self.withoutResponse])
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

    /// Runs `operation`, tried again while BlueZ answers `InProgress` (one read and one write
    /// in flight per characteristic), as the provider's policy says, on the client's clock.
    private func retryingInProgress(_ operation: () async throws(BlueZError) -> Void) async throws(GATTError) {
        do throws(BlueZError) {
            try await options.inProgress.run(on: clock, isInProgress: InProgressRetry.isInProgress) { _ async throws(BlueZError) in
                try await operation()
            }
        } catch {
            throw GATTError(error)
        }
    }

    deinit {
        releaseSockets()
    }

    /// Lets go of the sockets and disconnects; ``events`` end as the client's bus connection does.
    public func close() async {
        releaseSockets()
        await client.disconnect(devicePath)
        await client.close()
    }

    /// Lets go of the sockets: BlueZ then releases the characteristics' locks.
    private func releaseSockets() {
        for watch in notifyWatches.withLock({ watches in
            defer { watches = [] }
            return watches
        }) {
            watch.cancel()
        }
        writeSocket.withLock { socket in
            if let socket { Glibc.close(socket.descriptor) }
            socket = nil
        }
    }
}

extension GATTError {
    /// BlueZ's answer to a GATT call as the device's refusal or the link's state. BlueZ reports
    /// an ATT error it has no D-Bus name for as `Failed` "Operation failed with ATT error: 0xNN",
    /// and the authentication errors as `NotPermitted` "Not paired" (src/gatt-client.c).
    init(_ error: BlueZError) {
        guard case .dbus(let failure) = error else {
            self = .failed(error.description)
            return
        }
        let message = failure.message
        switch failure.name {
        case BlueZName.Error.failed:
            if let range = message.range(of: "ATT error: 0x"),
               let code = UInt8(message[range.upperBound...].prefix(2), radix: 16) {
                self = .refused(ATTError(code))
            } else if message == "Not connected" {
                self = .notConnected(message)
            } else {
                self = .failed(message)
            }
        case BlueZName.Error.notPermitted:
            self = message.contains("Not paired") ? .notPaired : .refused(.writeNotPermitted)
        case BlueZName.Error.notSupported:
            self = .refused(.requestNotSupported)
        case BlueZName.Error.notConnected, DBusError.unknownObjectName, DBusError.serviceUnknownName, DBusError.disconnectedName:
            self = .notConnected(message.isEmpty ? failure.name : message)
        case DBusError.noReplyName:
            self = .timedOut("the camera")
        default:
            self = .failed(message.isEmpty ? failure.name : message)
        }
    }
}
