import NIOCore

/// One PTP/IP packet: the 8-byte header (length, type) is implied, the payload follows it.
struct PTPIPPacket: Sendable {
    var type: PTPIPPacketType
    var payload: ByteBuffer

    static let headerSize = 8

    /// A packet whose payload `fill` writes.
    static func make(_ type: PTPIPPacketType, _ fill: (inout ByteBuffer) -> Void = { _ in }) -> PTPIPPacket {
        var payload = ByteBuffer()
        fill(&payload)
        return PTPIPPacket(type: type, payload: payload)
    }
}

/// Why a client's bytes could not be read as PTP/IP; the connection is closed for it.
struct PTPIPProtocolError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Cuts the byte stream into packets, refusing lengths that cannot be a header or exceed
/// `maximumPacketSize` (a client cannot make the simulator buffer without bound).
struct PTPIPPacketDecoder: ByteToMessageDecoder {
    typealias InboundOut = PTPIPPacket

    let maximumPacketSize: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .little, as: UInt32.self),
              let rawType = buffer.getInteger(at: buffer.readerIndex + 4, endianness: .little, as: UInt32.self)
        else { return .needMoreData }
        guard length >= PTPIPPacket.headerSize else { throw PTPIPProtocolError("packet length \(length) is shorter than its header") }
        guard length <= maximumPacketSize else {
            throw PTPIPProtocolError("packet length \(length) exceeds the limit of \(maximumPacketSize) bytes")
        }
        guard let type = PTPIPPacketType(rawValue: rawType) else { throw PTPIPProtocolError("unknown packet type \(rawType)") }
        guard buffer.readableBytes >= Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: PTPIPPacket.headerSize)
        let payload = buffer.readSlice(length: Int(length) - PTPIPPacket.headerSize) ?? ByteBuffer()
        context.fireChannelRead(wrapInboundOut(PTPIPPacket(type: type, payload: payload)))
        return .continue
    }
}

/// Writes packets as bytes.
struct PTPIPPacketEncoder: MessageToByteEncoder {
    typealias OutboundIn = PTPIPPacket

    func encode(data: PTPIPPacket, out: inout ByteBuffer) throws {
        out.writeInteger(UInt32(PTPIPPacket.headerSize + data.payload.readableBytes), endianness: .little)
        out.writeInteger(data.type.rawValue, endianness: .little)
        out.writeImmutableBuffer(data.payload)
    }
}

/// The PTP dataset primitives (little-endian integers, counted UTF-16 strings, counted arrays).
extension ByteBuffer {
    mutating func writeLE<T: FixedWidthInteger>(_ value: T) {
        writeInteger(value, endianness: .little)
    }

    mutating func readLE<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        readInteger(endianness: .little, as: T.self)
    }

    /// A PTP string: a count of UTF-16 units including the terminating zero, then the units;
    /// the empty string is a lone zero count.
    mutating func writePTPString(_ text: String) {
        let units = Array(text.utf16.prefix(254))
        guard !units.isEmpty else {
            writeInteger(UInt8(0))
            return
        }
        writeInteger(UInt8(units.count + 1))
        for unit in units + [0] { writeLE(unit) }
    }

    mutating func readPTPString() -> String? {
        guard let count = readInteger(as: UInt8.self) else { return nil }
        guard count > 0 else { return "" }
        var units: [UInt16] = []
        for _ in 0..<count {
            guard let unit: UInt16 = readLE() else { return nil }
            units.append(unit)
        }
        return String(decoding: units.prefix { $0 != 0 }, as: UTF16.self)
    }

    /// A zero-terminated UTF-16LE string with no count, as PTP/IP's init packets carry names.
    mutating func writeUTF16Terminated(_ text: String) {
        for unit in text.utf16 { writeLE(unit) }
        writeLE(UInt16(0))
    }

    mutating func readUTF16Terminated() -> String? {
        var units: [UInt16] = []
        while let unit: UInt16 = readLE() {
            if unit == 0 { return String(decoding: units, as: UTF16.self) }
            units.append(unit)
        }
        return nil
    }

    mutating func writePTPArray<T: FixedWidthInteger>(_ values: [T]) {
        writeLE(UInt32(values.count))
        for value in values { writeLE(value) }
    }
}
