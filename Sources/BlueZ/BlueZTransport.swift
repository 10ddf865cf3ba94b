import DBus
public import UnleashedKit

/// The module's packet link over BlueZ GATT: packets go out as write-without-response on the
/// Command characteristic and come in as `Value` changes of the Event characteristic after
/// `StartNotify`.
///
/// It reads its own D-Bus connection's signals where they arrive, on the connection's thread,
/// rather than through the client's object mirror: a notification costs one decode and one
/// filter, and goes straight to the session's stream. A one-packet message (every request but
/// the largest) is handed to the connection without waiting for BlueZ's reply, as an ATT Write
/// Command has no answer either: the session goes on at once, a successful reply wakes nobody,
/// and a failed write arrives later as ``TransportEvent/sendFailed(_:)``.
public final class BlueZTransport: Transport {
    public let mtu: Int
    public let events: AsyncStream<TransportEvent>

    private let connection: DBusConnection
    private let commandPath: String
    private let onClose: @Sendable () async -> Void
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let watch: SignalWatch

    /// Subscribes to the Event characteristic and starts reporting packets.
    ///
    /// - Parameters:
    ///   - mtu: the ATT MTU (the characteristic's `MTU` property): packets are at most `mtu - 3`.
    ///   - onClose: takes the link down (disconnect, close the bus connection).
    init(client: BlueZClient, devicePath: String, commandPath: String, eventPath: String, mtu: Int,
         onClose: @escaping @Sendable () async -> Void) async throws(BlueZError) {
        connection = client.connection
        self.commandPath = commandPath
        self.mtu = mtu
        self.onClose = onClose
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .bufferingNewest(65_536))
        self.events = events
        self.sink = sink
        watch = connection.watchSignals({ message in
            if let event = Self.event(from: message, devicePath: devicePath, eventPath: eventPath) { sink.yield(event) }
        }, ended: {
            sink.yield(.disconnected(reason: "the link to bluetoothd closed"))
            sink.finish()
        })
        do {
            try await client.call(eventPath, BlueZName.characteristic, "StartNotify", timeout: .seconds(10))
        } catch {
            watch.cancel()
            throw error
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

    public func send(_ packets: [[UInt8]]) async throws(TransportError) {
        let limit = mtu - 3
        if let large = packets.first(where: { $0.count > limit }) {
            throw .packetTooLarge(size: large.count, limit: limit)
        }
        guard connection.isConnected else { throw .notConnected }
        if packets.count == 1 { return post(packets[0], attempt: 1) }
        var unsent = packets[...]
        for attempt in 1...Self.inProgressAttempts {
            guard let (failed, error) = await write(unsent) else { return }
            // Another client's write is in flight on the characteristic (BlueZ allows one): wait
            // and send again from the first packet that failed. Packets after it that did get
            // through arrive twice, which the reassembler ignores (PROTOCOL.md §3.2).
            if error.name == BlueZName.Error.inProgress && attempt < Self.inProgressAttempts {
                unsent = unsent.dropFirst(failed)
                try? await Task.sleep(for: .milliseconds(10))
                continue
            }
            throw failure(error)
        }
    }

    /// Writes one packet without waiting; a refusal comes back on the connection's thread and is
    /// tried again (`InProgress`) or reported on ``events``.
    private func post(_ packet: [UInt8], attempt: Int) {
        connection.post(BlueZName.service, path: commandPath, interface: BlueZName.characteristic, member: "WriteValue",
                        [.bytes(packet), Self.withoutResponse], timeout: Self.writeTimeout) { [weak self] error in
            guard let self else { return }
            if error.name == BlueZName.Error.inProgress && attempt < Self.inProgressAttempts {
                Task {
                    try? await Task.sleep(for: .milliseconds(10))
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

    /// How often a write refused with `InProgress` is tried, 10 ms apart.
    static let inProgressAttempts = 100

    public func close() async {
        await onClose()
    }
}
