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
@Suite("Messages and packets per request")
struct RequestCountsTests {
    static let requests = 40

    /// The fake's counters across `requests` status reads on a link that has said hello and
    /// made a few requests already (so that setting up the link is not counted).
    static func counted(acquireSockets: Bool) async throws -> (path: BlueZTransport.Path, counts: [String: Int]) {
        let (bus, fake) = try await BlueZSocketTests.fake()
        defer { Task { await fake.stop() } }
        let provider = BlueZLinkProvider(bus: .address(bus.address), module: BlueZSocketTests.module, acquireSockets: acquireSockets)
        let (transport, session) = try await BlueZSocketTests.linked(provider)
        for _ in 0..<5 { _ = try await session.request(.getStatus) }
        let before = await fake.statistics
        for _ in 0..<requests { _ = try await session.request(.getStatus) }
        let after = await fake.statistics
        await session.close()
        return (transport.path, after.merging(before) { $0 - $1 })
    }

    @Test("over the acquired sockets, a request is one packet each way and no D-Bus message")
    func sockets() async throws {
        let (path, counts) = try await Self.counted(acquireSockets: true)
        #expect(path == .sockets)
        #expect(counts["writes"] == Self.requests, "\(counts)")
        #expect(counts["notifications"] == Self.requests, "\(counts)")
        #expect(counts["bluezCalls"] == 0, "\(counts)")
        #expect(counts["signals"] == 0, "\(counts)")
    }

    @Test("over D-Bus messages, a request is one WriteValue call and one PropertiesChanged signal")
    func messages() async throws {
        let (path, counts) = try await Self.counted(acquireSockets: false)
        #expect(path == .messages)
        #expect(counts["writes"] == Self.requests, "\(counts)")
        #expect(counts["writeCalls"] == Self.requests, "\(counts)")
        #expect(counts["notifications"] == Self.requests, "\(counts)")
        #expect(counts["bluezCalls"] == Self.requests, "no other call per request: \(counts)")
        #expect(counts["signals"] == Self.requests, "no other signal per request: \(counts)")
    }
}
