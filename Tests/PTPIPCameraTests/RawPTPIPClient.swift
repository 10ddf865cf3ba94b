import Foundation
#if canImport(Glibc)
import Glibc
#endif
import UnleashedTestSupport

/// A deliberately plain PTP/IP client for tests: POSIX sockets polled without blocking a thread
/// (the simulator under test shares the concurrency pool), bytes
/// assembled by hand from CIPA DC-005, so that it shares no code with the simulator it checks.
final class RawPTPIPClient {
    struct Packet: Equatable {
        var type: UInt32
        var payload: [UInt8]
    }

    struct Response {
        var code: UInt16
        var parameters: [UInt32]
        var data: [UInt8]?
    }

    struct ClientError: Error, CustomStringConvertible {
        var description: String
    }

    let command: Socket
    let events: Socket
    let connectionNumber: UInt32
    private var transactionID: UInt32 = 0

    /// Connects both channels and performs the init handshake.
    init(port: Int) async throws {
        command = try Socket(port: port)
        try command.send(packet: 1, Self.guid + Self.utf16z("test-host") + Self.le32(0x0001_0000))
        let ack = try await command.receive()
        guard ack.type == 2, ack.payload.count >= 20 else { throw ClientError(description: "expected Init Command Ack, got \(ack.type)") }
        connectionNumber = Self.u32(ack.payload, 0)
        events = try Socket(port: port)
        try events.send(packet: 3, Self.le32(connectionNumber))
        let eventAck = try await events.receive()
        guard eventAck.type == 4 else { throw ClientError(description: "expected Init Event Ack, got \(eventAck.type)") }
    }

    static let guid: [UInt8] = Array(0..<16)

    /// Sends one operation (with `data` in a data-out phase when given) and reads the answer.
    func call(_ code: UInt16, _ parameters: [UInt32] = [], data: [UInt8]? = nil) async throws -> Response {
        transactionID += 1
        let id = transactionID
        var request = Self.le32(data == nil ? 1 : 2) + Self.le16(code) + Self.le32(id)
        for parameter in parameters { request += Self.le32(parameter) }
        try command.send(packet: 6, request)
        if let data {
            try command.send(packet: 9, Self.le32(id) + Self.le32(UInt32(data.count)) + Self.le32(0))
            try command.send(packet: 12, Self.le32(id) + data)
        }
        var received: [UInt8]?
        while true {
            let packet = try await command.receive()
            switch packet.type {
            case 9: received = []
            case 10, 12: received = (received ?? []) + packet.payload.dropFirst(4)
            case 7:
                let count = (packet.payload.count - 6) / 4
                let parameters = (0..<count).map { Self.u32(packet.payload, 6 + $0 * 4) }
                return Response(code: Self.u16(packet.payload, 0), parameters: parameters, data: received)
            default: throw ClientError(description: "unexpected packet type \(packet.type) on the command connection")
            }
        }
    }

    /// The next event: its code and parameters.
    func nextEvent() async throws -> (code: UInt16, parameters: [UInt32]) {
        let packet = try await events.receive()
        guard packet.type == 8 else { throw ClientError(description: "expected an event, got packet type \(packet.type)") }
        let count = (packet.payload.count - 6) / 4
        return (Self.u16(packet.payload, 0), (0..<count).map { Self.u32(packet.payload, 6 + $0 * 4) })
    }

    func close() {
        command.close()
        events.close()
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << ($1 * 8) } }
    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { UInt64(u32(bytes, at)) | UInt64(u32(bytes, at + 4)) << 32 }
    static func utf16z(_ text: String) -> [UInt8] { (Array(text.utf16) + [0]).flatMap(le16) }

    /// A PTP string at `offset`: the string and the offset after it.
    static func ptpString(_ bytes: [UInt8], _ offset: Int) -> (String, Int) {
        let count = Int(bytes[offset])
        let units = (0..<max(0, count - 1)).map { u16(bytes, offset + 1 + $0 * 2) }
        return (String(decoding: units, as: UTF16.self), offset + 1 + count * 2)
    }
}

/// A TCP connection to 127.0.0.1 whose reads poll, sleeping between tries, and give up after
/// five seconds.
final class Socket {
    private var descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            Glibc.close(descriptor)
            throw RawPTPIPClient.ClientError(description: "cannot connect to port \(port): errno \(errno)")
        }
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw RawPTPIPClient.ClientError(description: "send failed: errno \(errno)") }
            sent += count
        }
    }

    func send(packet type: UInt32, _ payload: [UInt8]) throws {
        try send(RawPTPIPClient.le32(UInt32(8 + payload.count)) + RawPTPIPClient.le32(type) + payload)
    }

    /// Exactly `count` bytes; nil when the peer closed the connection first.
    func read(_ count: Int) async throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        var closed = false
        // Read without blocking a thread of the pool, which the server in this process needs.
        let complete = try await eventually(every: .milliseconds(2)) {
            let result = bytes[received...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if result == 0 { closed = true }
            if result < 0, errno != EAGAIN, errno != EWOULDBLOCK { throw RawPTPIPClient.ClientError(description: "receive failed: errno \(errno)") }
            if result > 0 { received += result }
            return closed || received == count
        }
        if closed { return nil }
        guard complete else { throw RawPTPIPClient.ClientError(description: "nothing received within a minute") }
        return bytes
    }

    func receive() async throws -> RawPTPIPClient.Packet {
        guard let header = try await read(8) else { throw RawPTPIPClient.ClientError(description: "connection closed") }
        let length = Int(RawPTPIPClient.u32(header, 0))
        guard length >= 8, let payload = try await read(length - 8) else { throw RawPTPIPClient.ClientError(description: "connection closed mid-packet") }
        return RawPTPIPClient.Packet(type: RawPTPIPClient.u32(header, 4), payload: payload)
    }

    /// Whether the peer has closed the connection (reading gives end of file).
    func isClosedByPeer() async -> Bool {
        do {
            return try await read(1) == nil
        } catch {
            return errno == ECONNRESET
        }
    }
}
