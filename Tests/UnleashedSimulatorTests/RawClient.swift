import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// Talks to a module message by message, with ids of its choosing: for testing what a module does
/// with repeated, early or malformed requests, which a ``ModuleSession`` never sends.
actor RawClient {
    let link: InMemoryLink
    /// The module's packets over the link.
    let transport: ModuleTransport
    private var incoming: AsyncStream<GATTLinkEvent>.AsyncIterator
    private var receiver: any PacketReceiver
    /// Events passed over while waiting for a response.
    private var skipped: [Message] = []

    init(_ module: VirtualModule, mtu: Int = 185) async {
        link = InMemoryLink(mtu: mtu)
        await module.serve(link.peripheral)
        transport = ModuleTransport(link: link.central)
        incoming = link.central.events.makeAsyncIterator()
        receiver = try! UnleashedV1().makeReceiver(mtu: mtu)
    }

    func send(_ message: Message) async throws {
        try await transport.send(UnleashedV1().packets(for: message, mtu: transport.mtu))
    }

    func sendRaw(_ messageBytes: [UInt8]) async throws {
        try await transport.send(Fragmenter(mtu: transport.mtu).packets(for: messageBytes))
    }

    /// The next message from the module.
    func next() async throws -> Message {
        while true {
            var iterator = incoming
            let event = await iterator.next(isolation: #isolation)
            incoming = iterator
            guard case .value(_, let packet)? = event else { throw TransportError.notConnected }
            let received = receiver.receive(packet)
            if let error = received.errors.first { throw error }
            if let message = received.message { return message }
        }
    }

    /// The next response, skipping events.
    func response() async throws -> Message {
        while true {
            let message = try await next()
            if case .response = message.kind { return message }
            skipped.append(message)
        }
    }

    /// The events passed over by ``response()`` since the last call, in order.
    func takeEvents() -> [Message] {
        defer { skipped = [] }
        return skipped
    }

    func request(_ opcode: Opcode, id: UInt16, _ fields: Fields = Fields()) async throws -> Message {
        try await send(Message(.request(opcode), id: id, fields: fields))
        return try await response()
    }

    func hello() async throws {
        _ = try await request(.hello, id: 1, Fields {
            $0.minProtocolVersion = 1
            $0.maxProtocolVersion = 1
        })
    }
}
