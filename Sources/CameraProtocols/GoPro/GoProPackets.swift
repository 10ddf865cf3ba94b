extension GoPro {
    /// The most bytes one packet carries, header included, whatever the link's MTU: Open GoPro
    /// fixes it at 20 so that every phone and host can carry it.
    public static let packetSize = 20

    /// Byte 0 (and for start packets, the bytes after it) of every packet.
    ///
    /// ```
    /// start, general:      0 00 LLLLL                      message ≤ 31 bytes
    /// start, extended 13:  0 01 LLLLL LLLLLLLL             message ≤ 8191 bytes
    /// start, extended 16:  0 10 xxxxx LLLLLLLL LLLLLLLL    camera to client only
    /// continuation:        1 xxx CCCC                      4-bit counter
    /// ```
    public enum PacketHeader: Hashable, Sendable {
        /// The first packet of a message of `length` bytes, in the given form.
        case start(HeaderForm, length: Int)
        /// A later packet; the counter wraps at 16. GoPro's own client always sends 0, so
        /// receivers ignore it.
        case continuation(counter: UInt8)

        /// The header's bytes; nil when `length` does not fit the form.
        public var bytes: [UInt8]? {
            switch self {
            case .continuation(let counter):
                return [0x80 | (counter & 0x0F)]
            case .start(let form, let length):
                guard length >= 0, length <= form.maximumLength else { return nil }
                switch form {
                case .general: return [UInt8(length)]
                case .extended13: return [0x20 | UInt8(length >> 8), UInt8(length & 0xFF)]
                case .extended16: return [0x40, UInt8(length >> 8), UInt8(length & 0xFF)]
                }
            }
        }

        /// Reads the header at the front of `packet`; returns it and its size in bytes.
        public static func read(_ packet: [UInt8]) throws(MalformedMessage) -> (header: PacketHeader, size: Int) {
            guard let first = packet.first else { throw MalformedMessage(.gopro, "an empty packet") }
            if first & 0x80 != 0 { return (.continuation(counter: first & 0x0F), 1) }
            switch (first & 0x60) >> 5 {
            case 0:
                return (.start(.general, length: Int(first & 0x1F)), 1)
            case 1:
                guard packet.count >= 2 else { throw MalformedMessage(.gopro, "an extended 13-bit header cut short") }
                return (.start(.extended13, length: Int(first & 0x1F) << 8 | Int(packet[1])), 2)
            case 2:
                guard packet.count >= 3 else { throw MalformedMessage(.gopro, "an extended 16-bit header cut short") }
                return (.start(.extended16, length: Int(packet[1]) << 8 | Int(packet[2])), 3)
            default:
                throw MalformedMessage(.gopro, "a start packet with the reserved header type 3 (" + GoPro.hex([first]) + ")")
            }
        }
    }

    /// How a start packet writes the message's length.
    public enum HeaderForm: Hashable, Sendable, CaseIterable {
        case general, extended13, extended16

        public var maximumLength: Int {
            switch self {
            case .general: 0x1F
            case .extended13: 0x1FFF
            case .extended16: 0xFFFF
            }
        }

        /// The smallest form a client may send `length` bytes in (clients never send the 16-bit
        /// form); nil when the message is too long for a client to send.
        public static func forSending(_ length: Int) -> HeaderForm? {
            if length <= HeaderForm.general.maximumLength { return .general }
            if length <= HeaderForm.extended13.maximumLength { return .extended13 }
            return nil
        }
    }

    /// Splits messages into packets of at most ``GoPro/packetSize`` bytes.
    public struct Fragmenter: Hashable, Sendable {
        /// The header form of start packets; nil picks the smallest a client may send.
        public var form: HeaderForm?

        public init(form: HeaderForm? = nil) {
            self.form = form
        }

        /// The packets of `message`, continuation counters counting from 0. Throws when the
        /// message is too long for the form.
        public func packets(for message: [UInt8]) throws(MalformedMessage) -> [[UInt8]] {
            guard let form = form ?? HeaderForm.forSending(message.count),
                  let header = PacketHeader.start(form, length: message.count).bytes else {
                throw MalformedMessage(.gopro, "a message of \(message.count) bytes is too long for one Open GoPro message")
            }
            var packets: [[UInt8]] = []
            var packet = header
            var counter: UInt8 = 0
            for byte in message {
                if packet.count == GoPro.packetSize {
                    packets.append(packet)
                    packet = [0x80 | counter]
                    counter = (counter + 1) & 0x0F
                }
                packet.append(byte)
            }
            packets.append(packet)
            return packets
        }
    }

    /// Joins packets into messages: a start packet begins one of the length its header gives,
    /// continuation packets add to it, whatever their counter.
    public struct Reassembler: Hashable, Sendable {
        private var buffer: [UInt8] = []
        private var remaining = 0

        public init() {}

        /// Whether a message is begun and not yet complete.
        public var isAssembling: Bool { remaining > 0 }

        /// Takes one packet; returns the message it completes, if any. A start packet abandons
        /// an unfinished message (the camera gave up on it). Throws, and resets, for a
        /// continuation with no message begun or a packet longer than what is left.
        public mutating func accept(_ packet: [UInt8]) throws(MalformedMessage) -> [UInt8]? {
            let header: PacketHeader
            let size: Int
            do {
                (header, size) = try PacketHeader.read(packet)
            } catch {
                reset()
                throw error
            }
            switch header {
            case .start(_, let length):
                buffer = []
                buffer.reserveCapacity(length)
                remaining = length
            case .continuation:
                guard remaining > 0 else {
                    reset()
                    throw MalformedMessage(.gopro, "a continuation packet with no message begun")
                }
            }
            let body = packet.count - size
            guard body <= remaining else {
                let expected = remaining
                reset()
                throw MalformedMessage(.gopro, "a packet carries \(body) bytes where the message has \(expected) left")
            }
            buffer.append(contentsOf: packet[size...])
            remaining -= body
            guard remaining == 0 else { return nil }
            defer { reset() }
            return buffer
        }

        private mutating func reset() {
            buffer = []
            remaining = 0
        }
    }
}

extension GoPro {
    /// `3C 00`: bytes as the protocol's documents write them, for error messages.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: " ")
    }
}
