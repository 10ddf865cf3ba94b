import Testing
import UnleashedProtocol

@Suite("Packet counts (PROTOCOL.md §3.1)")
struct FragmentationTests {
    /// `1 + ceil(max(0, L + 2 − (P − 3)) / (P − 1))`, as §3.1 gives it.
    static func formula(length: Int, mtu: Int) -> Int {
        let p = mtu - 3
        let rest = max(0, length + 2 - (p - 3))
        return 1 + (rest + p - 2) / (p - 1)
    }

    @Test("the worked examples: an 8192-byte message takes 432 packets at MTU 23 and 34 at MTU 247", arguments: [
        (23, 432), (247, 34),
    ])
    func examples(mtu: Int, packets: Int) throws {
        let sent = try Fragmenter(mtu: mtu).packets(for: [UInt8](repeating: 0xA5, count: 8192))
        #expect(sent.count == packets)
        #expect(Self.formula(length: 8192, mtu: mtu) == packets)
        #expect(sent.dropLast().allSatisfy { $0.count == mtu - 3 }, "every packet but the last is full")
    }

    @Test("the fragmenter and the formula agree on every length", arguments: [23, 24, 185, 247, 517])
    func formulaAgrees(mtu: Int) throws {
        let fragmenter = try Fragmenter(mtu: mtu)
        for length in Array(1...1200) + [8000, 8190, 8191, 8192] {
            let count = try fragmenter.packets(for: [UInt8](repeating: 0, count: length)).count
            #expect(count == Self.formula(length: length, mtu: mtu), "L = \(length)")
        }
    }
}
