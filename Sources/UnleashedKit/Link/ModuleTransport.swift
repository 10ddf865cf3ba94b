public import GATT
public import UnleashedProtocol

/// Something that happened on a module's link, in the order it happened.
public enum TransportEvent: Sendable, Hashable {
    /// A packet from the module (one notification on the Event characteristic).
    case packet([UInt8])
    /// The link went down; no more packets will arrive on this transport.
    case disconnected(reason: String)
    /// A write that ``ModuleTransport/send(_:)`` had already handed on was refused afterwards:
    /// the module did not get it. For links that learn a write's outcome later (BlueZ's reply to
    /// a write without response); the others throw from `send`.
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

    /// A link's refusal in the module's terms.
    init(_ error: GATTError) {
        switch error {
        case .notConnected: self = .notConnected
        case .failed(let reason): self = .failed(reason)
        default: self = .failed(error.description)
        }
    }
}

/// The module's packets over a GATT link (PROTOCOL.md §1): each packet is one write without
/// response to the Command characteristic, each notification of the Event characteristic one
/// packet. Packets are opaque here; the ``Dialect`` gives them meaning.
///
/// Nothing of its own runs per packet: a send is the link's, on the caller's executor, and the
/// session reads the link's events itself, through ``event(from:)``.
public struct ModuleTransport: Sendable {
    /// The link to the module.
    public let link: any GATTLink
    /// Where packets go.
    public let command: GATTCharacteristicID
    /// Where packets come from.
    public let event: GATTCharacteristicID

    /// A transport over `link`, whose Event characteristic is already subscribed to (see
    /// ``open(over:gatt:)``).
    public init(link: any GATTLink, gatt: GATTLayout = UnleashedV1.gattLayout) {
        self.link = link
        command = gatt.commandCharacteristic
        event = gatt.eventCharacteristic
    }

    /// Why a device is not a module: it lacks the service or one of its characteristics.
    public static let notAModule = "the device has no Unleashed service with Command and Event characteristics"

    /// Finds the module's characteristics on `link` and subscribes to its events.
    ///
    /// - Throws: ``GATTError/missing(_:)`` when the device offers no Command or Event
    ///   characteristic (it is not a module); the link's error when subscribing fails.
    public static func open(over link: any GATTLink, gatt: GATTLayout = UnleashedV1.gattLayout) async throws(GATTError) -> ModuleTransport {
        let transport = ModuleTransport(link: link, gatt: gatt)
        for characteristic in [transport.command, transport.event] {
            guard await link.offers(characteristic) else { throw .missing(characteristic) }
        }
        try await link.subscribe(transport.event)
        return transport
    }

    /// The link's ATT MTU; packets are at most `mtu - 3` bytes.
    public var mtu: Int { link.mtu }

    /// Writes the packets of one message to the Command characteristic, in order, with no
    /// packet of another message between them. A link may return once the packets are on their
    /// way and report a refusal later, as ``TransportEvent/sendFailed(_:)``.
    public nonisolated(nonsending) func send(_ packets: [[UInt8]]) async throws(TransportError) {
        let limit = link.mtu - 3
        if let large = packets.first(where: { $0.count > limit }) {
            throw .packetTooLarge(size: large.count, limit: limit)
        }
        do throws(GATTError) {
            try await link.send(packets, to: command)
        } catch {
            throw TransportError(error)
        }
    }

    /// What one of the link's events means for the module's packets; nil for anything else.
    @inline(__always)
    public func event(from linkEvent: GATTLinkEvent) -> TransportEvent? {
        switch linkEvent {
        case .value(let characteristic, let packet): characteristic == event ? .packet(packet) : nil
        case .writeFailed(_, let error): .sendFailed(TransportError(error))
        case .disconnected(let reason): .disconnected(reason: reason)
        }
    }

    /// The thread the link reads packets on, when it can hand them over there directly.
    public var readingThread: ExecutorThread? {
        (link as? any DirectGATTLink)?.readingThread
    }

    /// From now on packets go to `receive`, on ``readingThread``, instead of the link's events.
    func deliverPackets(to receive: @escaping @Sendable ([UInt8]) -> Void) {
        (link as? any DirectGATTLink)?.deliverValues(of: event, to: receive)
    }

    /// Takes the link down; idempotent.
    public func close() async {
        await link.close()
    }
}

extension GATTLayout {
    /// The characteristic the module's requests are written to.
    public var commandCharacteristic: GATTCharacteristicID { GATTCharacteristicID(service: service, characteristic: command) }
    /// The characteristic the module notifies its answers and events on.
    public var eventCharacteristic: GATTCharacteristicID { GATTCharacteristicID(service: service, characteristic: event) }
}
