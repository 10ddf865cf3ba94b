import DBus
public import UnleashedKit

/// The module's packet link over BlueZ GATT: packets go out as write-without-response on the
/// Command characteristic and come in as `Value` changes of the Event characteristic after
/// `StartNotify`.
///
/// It watches its own D-Bus connection's signals rather than the client's object mirror, so a
/// notification costs one decode and one filter, not a tree update.
public final class BlueZTransport: Transport {
    public let mtu: Int
    public let events: AsyncStream<TransportEvent>

    private let connection: DBusConnection
    private let commandPath: String
    private let pump: Task<Void, Never>
    private let onClose: @Sendable () async -> Void

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
        let signals = connection.signals()
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .bufferingNewest(65_536))
        self.events = events
        pump = Task {
            var lost = TransportEvent.disconnected(reason: "the link to bluetoothd closed")
            for await message in signals {
                guard let event = Self.event(from: message, devicePath: devicePath, eventPath: eventPath) else { continue }
                if case .disconnected = event {
                    lost = event
                    break
                }
                sink.yield(event)
            }
            sink.yield(lost)
            sink.finish()
        }
        do {
            try await client.call(eventPath, BlueZName.characteristic, "StartNotify", timeout: .seconds(10))
        } catch {
            pump.cancel()
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
        let options = DBusValue.properties(["type": .string("command")])
        var unsent = packets[...]
        for attempt in 1...Self.inProgressAttempts {
            let calls = unsent.map {
                DBusConnection.Call(path: commandPath, interface: BlueZName.characteristic, member: "WriteValue", [.bytes($0), options])
            }
            let outcomes = await connection.callAll(BlueZName.service, calls, timeout: .seconds(5))
            guard let failed = outcomes.firstIndex(where: { if case .failure = $0 { true } else { false } }),
                  case .failure(let error) = outcomes[failed] else { return }
            // Another client's write is in flight on the characteristic (BlueZ allows one): wait
            // and send again from the first packet that failed. Packets after it that did get
            // through arrive twice, which the reassembler ignores (PROTOCOL.md §3.2).
            if error.name == BlueZName.Error.inProgress && attempt < Self.inProgressAttempts {
                unsent = unsent.dropFirst(failed)
                try? await Task.sleep(for: .milliseconds(10))
                continue
            }
            if !connection.isConnected || error.name == DBusError.disconnectedName || error.message == "Not connected"
                || error.name == BlueZName.Error.notConnected || error.name == DBusError.unknownObjectName
                || error.name == DBusError.serviceUnknownName {
                throw .notConnected
            }
            throw .failed("writing to the module failed: \(error)")
        }
    }

    /// How often a write refused with `InProgress` is tried, 10 ms apart.
    static let inProgressAttempts = 100

    public func close() async {
        pump.cancel()
        await onClose()
    }
}
