/// Something that happened on a link, in the order it happened.
public enum TransportEvent: Sendable, Hashable {
    /// A packet from the module (one notification on the Event characteristic).
    case packet([UInt8])
    /// The link went down; no more packets will arrive on this transport.
    case disconnected(reason: String)
    /// A write that ``Transport/send(_:)`` had already handed on was refused afterwards: the
    /// module did not get it. For links that learn a write's outcome later (BlueZ's reply to a
    /// write without response); the others throw from `send`.
    case sendFailed(TransportError)
}

/// Why a packet could not be sent.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    case notConnected
    case packetTooLarge(size: Int, limit: Int)
    case failed(String)

    public var description: String {
        switch self {
        case .notConnected: "the link to the module is down"
        case .packetTooLarge(let size, let limit): "packet of \(size) bytes exceeds the link's limit of \(limit)"
        case .failed(let reason): reason
        }
    }
}

/// A packet link to one module: BlueZ GATT on a real system, an in-memory link in demo mode and
/// tests. Packets are opaque here; the ``Dialect`` gives them meaning.
public protocol Transport: Sendable {
    /// The link's ATT MTU; packets are at most `mtu - 3` bytes.
    var mtu: Int { get }
    /// Writes the packets of one message to the module's Command characteristic, in order, with
    /// no packet of another message between them. A link may return once the packets are on
    /// their way and report a refusal later, as ``TransportEvent/sendFailed(_:)``. It runs on
    /// the caller's executor (the session's), so that a send is no hand-over to another thread.
    nonisolated(nonsending) func send(_ packets: [[UInt8]]) async throws(TransportError)
    /// Packets and link changes from the module. There is one consumer: the session.
    var events: AsyncStream<TransportEvent> { get }
    /// Takes the link down; idempotent.
    nonisolated(nonsending) func close() async
}

/// A link that reads its packets on a thread of its own and can hand them straight to a receiver
/// there, with no stream and no task between: for a session that runs on that same thread.
public protocol DirectTransport: Transport {
    /// The thread the link reads its packets on; nil when it reads them elsewhere.
    var readingThread: ExecutorThread? { get }
    /// From now on packets go to `receive`, called on ``readingThread`` as each is read, instead
    /// of to ``Transport/events``; everything else still comes on ``Transport/events``.
    func deliverPackets(to receive: @escaping @Sendable ([UInt8]) -> Void)
}
