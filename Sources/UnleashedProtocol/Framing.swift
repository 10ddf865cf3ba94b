/// Constants of the packet layer (PROTOCOL.md §3).
public enum Framing {
    /// The longest message a frame carries: 8 KiB, without the checksum.
    public static let maximumMessageLength = 8192
    /// The ATT MTUs a link can have; a packet is at most `mtu - 3` bytes.
    public static let mtuRange: ClosedRange<Int> = 23...517
    static let startHeaderLength = 3
    static let continuationHeaderLength = 1
    static let checksumLength = 2
    static let continuationFlag: UInt8 = 0x80
    static let counterMask: UInt8 = 0x7F

    /// The largest packet (one GATT write or notification) at `mtu`.
    public static func packetSize(mtu: Int) -> Int { mtu - 3 }
}

/// What a receiver reports while taking in packets (PROTOCOL.md §3.2).
///
/// None of these ends the connection: the message in progress, if any, is lost, and the receiver
/// is ready for the next start packet.
public enum FramingError: Error, Hashable, Sendable {
    case emptyPacket
    case packetTooLarge(size: Int, limit: Int)
    case unsupportedFraming(headerByte: UInt8)
    case truncatedHeader(size: Int)
    case invalidLength(Int)
    case lengthOverrun(excess: Int)
    case interrupted(received: Int, expected: Int)
    case unexpectedContinuation(counter: UInt8)
    case sequenceGap(expected: UInt8, received: UInt8)
    case checksumMismatch(sent: UInt16, computed: UInt16)

    /// The error's name in PROTOCOL.md §10 and in the golden vectors.
    public var name: String {
        switch self {
        case .emptyPacket: "emptyPacket"
        case .packetTooLarge: "packetTooLarge"
        case .unsupportedFraming: "unsupportedFraming"
        case .truncatedHeader: "truncatedHeader"
        case .invalidLength: "invalidLength"
        case .lengthOverrun: "lengthOverrun"
        case .interrupted: "interrupted"
        case .unexpectedContinuation: "unexpectedContinuation"
        case .sequenceGap: "sequenceGap"
        case .checksumMismatch: "checksumMismatch"
        }
    }
}

extension FramingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .emptyPacket: "empty packet"
        case .packetTooLarge(let size, let limit): "packet of \(size) bytes exceeds the \(limit)-byte limit of this link"
        case .unsupportedFraming(let byte): "start packet header 0x\(hex(byte)) is not version-1 framing"
        case .truncatedHeader(let size): "start packet of \(size) bytes is shorter than its 3-byte header"
        case .invalidLength(let length): "message length \(length) is outside 1...\(Framing.maximumMessageLength)"
        case .lengthOverrun(let excess): "packet carries \(excess) bytes past the end of its frame"
        case .interrupted(let received, let expected):
            "a new message started after \(received) of \(expected) frame bytes; the partial message was dropped"
        case .unexpectedContinuation(let counter): "continuation packet \(counter) arrived with no message in progress"
        case .sequenceGap(let expected, let received): "expected continuation \(expected), got \(received): a packet was lost or reordered"
        case .checksumMismatch(let sent, let computed): "checksum 0x\(hex(sent)) does not match the message (0x\(hex(computed)))"
        }
    }
}

func hex(_ value: some FixedWidthInteger) -> String {
    let digits = String(value, radix: 16)
    let width = value.bitWidth / 4
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// Cuts messages into packets for one link (PROTOCOL.md §3.1).
public struct Fragmenter: Sendable {
    /// The link's ATT MTU.
    public let mtu: Int
    private let packetSize: Int

    /// A fragmenter for a link with this ATT MTU (23...517).
    public init(mtu: Int) throws(MessageEncodingError) {
        guard Framing.mtuRange.contains(mtu) else { throw .invalidMTU(mtu) }
        self.mtu = mtu
        self.packetSize = Framing.packetSize(mtu: mtu)
    }

    /// The packets that carry `message`, in sending order.
    public func packets(for message: [UInt8]) throws(MessageEncodingError) -> [[UInt8]] {
        let length = message.count
        guard (1...Framing.maximumMessageLength).contains(length) else {
            throw .messageTooLong(length: length, limit: Framing.maximumMessageLength)
        }
        let crc = CRC16.checksum(message)
        let frameLength = length + Framing.checksumLength
        let firstChunk = min(frameLength, packetSize - Framing.startHeaderLength)
        let continuationChunk = packetSize - Framing.continuationHeaderLength
        let continuations = (frameLength - firstChunk + continuationChunk - 1) / continuationChunk

        var packets: [[UInt8]] = []
        packets.reserveCapacity(1 + continuations)
        var offset = 0
        var packet: [UInt8] = [0x00, UInt8(length >> 8), UInt8(length & 0xFF)]
        packet.reserveCapacity(Framing.startHeaderLength + firstChunk)
        func appendFrameBytes(_ count: Int, to packet: inout [UInt8]) {
            let end = offset + count
            if end <= length {
                packet.append(contentsOf: message[offset..<end])
            } else {
                if offset < length { packet.append(contentsOf: message[offset..<length]) }
                for index in max(offset, length)..<end {
                    packet.append(index == length ? UInt8(crc >> 8) : UInt8(crc & 0xFF))
                }
            }
            offset = end
        }
        appendFrameBytes(firstChunk, to: &packet)
        packets.append(packet)
        var counter: UInt8 = 0
        while offset < frameLength {
            counter = (counter &+ 1) & Framing.counterMask
            let chunk = min(continuationChunk, frameLength - offset)
            var packet: [UInt8] = [Framing.continuationFlag | counter]
            packet.reserveCapacity(1 + chunk)
            appendFrameBytes(chunk, to: &packet)
            packets.append(packet)
        }
        return packets
    }
}

/// What one packet did to a ``Reassembler``.
///
/// A single packet can both end a partial message in error and complete a new one (a
/// one-packet message that interrupted a longer one), so errors and message come together.
public struct Reassembly: Hashable, Sendable {
    /// What went wrong, in order; empty for a good packet.
    public var errors: [FramingError]
    /// The message bytes this packet completed, checksum verified and removed.
    public var message: [UInt8]?

    public init(errors: [FramingError] = [], message: [UInt8]? = nil) {
        self.errors = errors
        self.message = message
    }

    init(error: FramingError) { self.init(errors: [error]) }
}

/// Puts packets back together into messages, following the receiver rules of PROTOCOL.md §3.2.
///
/// Takes any byte sequence without trapping; never allocates more than one maximum frame,
/// whatever a length field claims.
public struct Reassembler: Sendable {
    /// The link's ATT MTU; longer packets are refused.
    public let mtu: Int
    /// Packets ignored because they repeated the previous one (rules 7 and 11).
    public private(set) var repeatedPackets = 0

    private let packetSize: Int
    private var frame: [UInt8] = []
    private var frameLength = 0
    private var lastCounter: UInt8 = 0
    private var continuationsReceived = 0
    private var startPacket: [UInt8] = []

    /// A reassembler for a link with this ATT MTU (23...517).
    public init(mtu: Int) throws(MessageEncodingError) {
        guard Framing.mtuRange.contains(mtu) else { throw .invalidMTU(mtu) }
        self.mtu = mtu
        self.packetSize = Framing.packetSize(mtu: mtu)
    }

    /// Whether part of a message has arrived and the rest is awaited.
    public var isInProgress: Bool { frameLength > 0 }

    /// Takes in one packet.
    public mutating func receive(_ packet: [UInt8]) -> Reassembly {
        guard let header = packet.first else { return Reassembly(error: .emptyPacket) }
        guard packet.count <= packetSize else {
            return abandon(.packetTooLarge(size: packet.count, limit: packetSize))
        }
        if header & Framing.continuationFlag == 0 {
            return receiveStart(packet, header: header)
        }
        return receiveContinuation(packet, counter: header & Framing.counterMask)
    }

    /// Drops any message in progress, as after a disconnection.
    public mutating func reset() {
        frame = []
        frameLength = 0
        continuationsReceived = 0
        startPacket = []
    }

    private mutating func abandon(_ error: FramingError) -> Reassembly {
        reset()
        return Reassembly(error: error)
    }

    private mutating func receiveStart(_ packet: [UInt8], header: UInt8) -> Reassembly {
        guard header == 0x00 else { return abandon(.unsupportedFraming(headerByte: header)) }
        guard packet.count >= Framing.startHeaderLength else { return abandon(.truncatedHeader(size: packet.count)) }
        let length = Int(packet[1]) << 8 | Int(packet[2])
        guard (1...Framing.maximumMessageLength).contains(length) else { return abandon(.invalidLength(length)) }
        let carried = packet.count - Framing.startHeaderLength
        let newFrameLength = length + Framing.checksumLength
        guard carried <= newFrameLength else { return abandon(.lengthOverrun(excess: carried - newFrameLength)) }

        var result = Reassembly()
        if isInProgress {
            if continuationsReceived == 0 && packet == startPacket {
                repeatedPackets += 1
                return result
            }
            result.errors.append(.interrupted(received: frame.count, expected: frameLength))
            reset()
        }
        frameLength = newFrameLength
        frame.reserveCapacity(newFrameLength)
        frame.append(contentsOf: packet[Framing.startHeaderLength...])
        lastCounter = 0
        if frame.count < frameLength { startPacket = packet }
        completeIfWhole(&result)
        return result
    }

    private mutating func receiveContinuation(_ packet: [UInt8], counter: UInt8) -> Reassembly {
        guard isInProgress else { return Reassembly(error: .unexpectedContinuation(counter: counter)) }
        if continuationsReceived > 0 && counter == lastCounter {
            repeatedPackets += 1
            return Reassembly()
        }
        let expected = (lastCounter &+ 1) & Framing.counterMask
        guard counter == expected else { return abandon(.sequenceGap(expected: expected, received: counter)) }
        let carried = packet.count - Framing.continuationHeaderLength
        let room = frameLength - frame.count
        guard carried <= room else { return abandon(.lengthOverrun(excess: carried - room)) }
        frame.append(contentsOf: packet[Framing.continuationHeaderLength...])
        lastCounter = counter
        continuationsReceived += 1
        var result = Reassembly()
        completeIfWhole(&result)
        return result
    }

    /// Once the frame is whole, checks its checksum and hands over the message (or the mismatch).
    private mutating func completeIfWhole(_ result: inout Reassembly) {
        guard frame.count == frameLength else { return }
        var message = frame
        reset()
        let low = message.removeLast()
        let high = message.removeLast()
        let sent = UInt16(high) << 8 | UInt16(low)
        let computed = CRC16.checksum(message)
        if sent == computed {
            result.message = message
        } else {
            result.errors.append(.checksumMismatch(sent: sent, computed: computed))
        }
    }
}
