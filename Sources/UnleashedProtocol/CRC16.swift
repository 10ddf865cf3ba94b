/// CRC-16/CCITT-FALSE, the frame checksum of protocol version 1 (PROTOCOL.md §3.1).
///
/// Polynomial `0x1021`, initial value `0xFFFF`, no reflection, no final XOR. Table-driven,
/// because every byte that crosses the radio passes through it.
public enum CRC16 {
    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
