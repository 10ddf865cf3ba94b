import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// A stand-in module that answers with whatever a test scripts: for failures a well-behaved
/// simulator never produces (wrong versions, silence, reordered answers, odd event numbers).
struct ScriptedPeer {
    let link: InMemoryLink

    /// Answers each request with the messages `reply` returns for it (none for silence).
    init(mtu: Int = 185, reply: @escaping @Sendable (Message) -> [Message]) {
        link = InMemoryLink(mtu: mtu)
        let peripheral = link.peripheral
        Task {
            guard var receiver = try? UnleashedV1().makeReceiver(mtu: mtu) else { return }
            for await event in peripheral.writes {
                guard case .packet(let packet) = event, let request = receiver.receive(packet).message else { continue }
                for message in reply(request) {
                    try? peripheral.notify(UnleashedV1().packets(for: message, mtu: mtu))
                }
            }
        }
    }

    /// Sends a message to the client unprompted.
    func send(_ message: Message) throws {
        try link.peripheral.notify(UnleashedV1().packets(for: message, mtu: link.peripheral.mtu))
    }

    /// The `ok` answer a real module gives to `hello`.
    static func helloOK(_ request: Message) -> Message {
        Message(.response(.hello, .ok), id: request.id, fields: Fields {
            $0.protocolVersion = 1
            $0.firmwareVersion = "9.9.9"
            $0.capabilities = [.shoot]
        })
    }
}
