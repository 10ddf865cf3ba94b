import GATT
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

@Suite("The module's packets over a GATT link")
struct ModuleTransportTests {
    @Test("a device without the module's Command and Event characteristics is not a module")
    func notAModule() async throws {
        let other = GATTLayout(service: "0000fff0", command: "0000fff1", event: "0000fff2", info: "0000fff3")
        let link = InMemoryLink(gatt: other)
        await #expect(throws: GATTError.missing(UnleashedV1.gattLayout.commandCharacteristic)) {
            _ = try await ModuleTransport.open(over: link.central)
        }
        #expect(try await ModuleTransport.open(over: link.central, gatt: other).event == other.eventCharacteristic)
    }

    @Test("packets go to Command, only Event's values are packets, and a later refusal is a send failure")
    func packets() async throws {
        let link = InMemoryLink(mtu: 23)
        let transport = try await ModuleTransport.open(over: link.central)
        await #expect(throws: TransportError.packetTooLarge(size: 21, limit: 20)) {
            try await transport.send([Array(repeating: 0, count: 21)])
        }
        try await transport.send([[0x01], [0x02]])
        var writes = link.peripheral.writes.makeAsyncIterator()
        #expect(await writes.next() == .packet([0x01]))
        #expect(await writes.next() == .packet([0x02]))

        #expect(transport.event(from: .value(transport.event, [7])) == .packet([7]))
        #expect(transport.event(from: .value(transport.command, [7])) == nil)
        #expect(transport.event(from: .writeFailed(transport.command, .notConnected("gone"))) == .sendFailed(.notConnected))
        #expect(transport.event(from: .disconnected(reason: "gone")) == .disconnected(reason: "gone"))

        link.sever()
        await #expect(throws: TransportError.notConnected) { try await transport.send([[0x03]]) }
    }
}
