import BlueZ
import FakeBlueZ
import Testing
import UnleashedKit
import UnleashedTestSupport

/// What one request costs on the BlueZ path, counted where it crosses the bus: the fake
/// bluetoothd's counters of method calls it took, signals it sent, and values that reached the
/// module and came back. These counts do not depend on the machine's speed or on the build,
/// so they gate here, in the debug build; the instructions and allocations per request, which
/// need a release build under callgrind, are checked by `make check-long` (`make counts`).
/// A request the session sent again (its answer late on a loaded machine) is one more packet
/// with its own answer: the counts are per packet sent, and the resends are counted too.
@Suite("Messages and packets per request")
struct RequestCountsTests {
    static let requests = 40

    /// The fake's counters across `requests` status reads on a link that has said hello and
    /// made a few requests already (so that setting up the link is not counted).
    static func counted(acquireSockets: Bool) async throws -> (path: BlueZGATTLink.Path, counts: [String: Int], sent: Int) {
        let (bus, fake) = try await BlueZSocketTests.fake()
        defer { Task { await fake.stop() } }
        let provider = BlueZLinkProvider(bus: .address(bus.address), module: BlueZSocketTests.module, acquireSockets: acquireSockets)
        let (link, session) = try await BlueZSocketTests.linked(provider)
        for _ in 0..<5 { _ = try await session.request(.getStatus) }
        let before = await fake.statistics
        let resentBefore = await session.retransmissions
        for _ in 0..<requests { _ = try await session.request(.getStatus) }
        // A resent request's second answer may still be on its way when the first has come.
        var after = await fake.statistics
        _ = await eventually {
            after = await fake.statistics
            return after["notifications", default: 0] - before["notifications", default: 0] >= after["writes", default: 0] - before["writes", default: 0]
        }
        let resent = await session.retransmissions - resentBefore
        await session.close()
        return (link.path, after.merging(before) { $0 - $1 }, requests + resent)
    }

    @Test("over the acquired sockets, a request is one packet each way and no D-Bus message")
    func sockets() async throws {
        let (path, counts, sent) = try await Self.counted(acquireSockets: true)
        #expect(path == .sockets)
        #expect(counts["writes"] == sent, "\(counts), \(sent) packets sent")
        #expect(counts["notifications"] == sent, "\(counts), \(sent) packets sent")
        #expect(counts["bluezCalls"] == 0, "\(counts)")
        #expect(counts["signals"] == 0, "\(counts)")
    }

    @Test("over D-Bus messages, a request is one WriteValue call and one PropertiesChanged signal")
    func messages() async throws {
        let (path, counts, sent) = try await Self.counted(acquireSockets: false)
        #expect(path == .messages)
        #expect(counts["writes"] == sent, "\(counts), \(sent) packets sent")
        #expect(counts["writeCalls"] == sent, "\(counts), \(sent) packets sent")
        #expect(counts["notifications"] == sent, "\(counts), \(sent) packets sent")
        #expect(counts["bluezCalls"] == sent, "no other call per request: \(counts), \(sent) packets sent")
        #expect(counts["signals"] == sent, "no other signal per request: \(counts), \(sent) packets sent")
    }
}
