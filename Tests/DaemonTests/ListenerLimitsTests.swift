@testable import Daemon
import Foundation
import NIOCore
import Testing
import UnleashedTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The web listener as someone on the network may treat it: slow heads, slow bodies, many idle
/// connections, a foreign `Host`, a port already taken. Raw sockets and curl against a real
/// listener.
@Suite("web listener: limits, Host, and the words when it cannot listen", .timeLimit(.minutes(1)))
struct ListenerLimitsTests {
    /// A TCP client of loopback that writes what a test says and reads until the server closes.
    final class RawClient {
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
            // A read gives up after 20 s, so that a listener without limits fails the test rather than hangs it.
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(descriptor) }

        /// Writes `text`; a connection the server closed takes it without a SIGPIPE.
        func send(_ text: String) {
            _ = text.utf8CString.withUnsafeBufferPointer { Glibc.send(descriptor, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
        }

        /// Whether a read returns bytes (an answer), not a close or the read's time limit.
        func readsSomething() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65536)
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            } while count < 0 && errno == EINTR
            return count > 0
        }

        /// Closes this end, as a client that leaves.
        func shutDown() { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

        /// Reads until the server closes the connection: true when it did, false when the read
        /// gave up first.
        func closedByServer() async -> Bool {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { [descriptor] in
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while true {
                        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                        if count > 0 { continue }
                        if count < 0 && errno == EINTR { continue }
                        return continuation.resume(returning: count == 0)
                    }
                }
            }
        }
    }

    private static let quick = ListenerLimits(requestHeadTimeout: .milliseconds(300), bodyTimeout: .milliseconds(300), maxConnections: 64)

    private static func port(_ running: WebListenerTests.Running) throws -> Int {
        try #require(Int(running.url.split(separator: ":").last ?? ""))
    }

    @Test("a request head trickled a line at a time, and a connection that sends nothing, are closed after the head timeout")
    func slowHead() async throws {
        try await WebListenerTests.withWebServer(limits: Self.quick) { running in
            let port = try Self.port(running)
            let trickle = try RawClient(port: port)
            trickle.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            let silent = try RawClient(port: port)
            #expect(await trickle.closedByServer())
            #expect(await silent.closedByServer())
        }
    }

    @Test("a body that does not all arrive within the body timeout closes the connection")
    func slowBody() async throws {
        try await WebListenerTests.withWebServer(limits: Self.quick) { running in
            let client = try RawClient(port: try Self.port(running))
            client.send("POST /web/pair HTTP/1.1\r\nHost: 127.0.0.1\r\nUnleashed-Web: 1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\"")
            #expect(await client.closedByServer())
        }
    }

    @Test("past its connection cap the listener closes each new connection at once, and the Unix socket still answers")
    func connectionCap() async throws {
        let limits = ListenerLimits(requestHeadTimeout: .seconds(60), bodyTimeout: .seconds(60), maxConnections: 4)
        try await WebListenerTests.withWebServer(limits: limits) { running in
            let port = try Self.port(running)
            let held = try (0..<4).map { _ in try RawClient(port: port) }
            // The four are in: each answers a request and stays open (keep-alive).
            for client in held {
                client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(client.readsSomething())
            }
            let turnedAway = try (0..<20).map { _ in try RawClient(port: port) }
            for client in turnedAway { #expect(await client.closedByServer()) }
            let status = try await Curl.request(socket: running.socket, path: "/v1/status")
            #expect(status.status == 200)
            // One of the four leaves: a new connection is served.
            // A connection made before the server saw the close is still turned away: try until
            // one is in, each try ending with an answer or a close.
            held[0].shutDown()
            var served = false
            for _ in 0..<50 where !served {
                let next = try RawClient(port: port)
                next.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                served = next.readsSomething()
            }
            #expect(served)
        }
    }

    @Test("a request naming another host is refused (DNS rebinding); this machine's names and addresses are not")
    func hostHeader() async throws {
        try await WebListenerTests.withWebServer { running in
            let foreign = try await WebListenerTests.request(running.url + "/", ["-H", "Host: attacker.example"])
            #expect(foreign.status == 421)
            #expect(foreign.body.contains("web.hosts"))
            for host in ["127.0.0.1", "localhost", "LOCALHOST:8080"] {
                #expect(try await WebListenerTests.request(running.url + "/", ["-H", "Host: \(host)"]).status == 200, "\(host)")
            }
        }
    }

    @Test("the Host rule: names and addresses of this machine, web.hosts, ports and brackets")
    func hostRule() {
        let machine = WebHostRule.Machine(name: "tripod", domains: ["fritz.box"], addresses: ["127.0.0.1", "::1", "192.168.1.40", "fe80::1"])
        let rule = WebHostRule(listenHost: "0.0.0.0", extra: ["Camera.Example.org"])
        for allowed in ["tripod", "tripod.local", "tripod.fritz.box:8080", "192.168.1.40:8080", "[::1]:8080", "[fe80::1]",
                        "localhost", "app.localhost", "camera.example.org", "camera.example.org.:443"] {
            #expect(rule.allows(allowed, on: machine), "\(allowed)")
        }
        for refused in [nil, "", "attacker.example", "tripodx", "192.168.1.41", "[::2]", "tripod:http", "[::1", "camera.example.org.evil",
                        "tripod.attacker.example", "tripod.fritz.box.attacker.example", "tripod.local.attacker.example"] {
            #expect(!rule.allows(refused, on: machine), "\(refused ?? "nil")")
        }
        #expect(WebHostRule(listenHost: "pi.lan", extra: []).allows("pi.lan:8080", on: machine))
    }

    @Test("a web port in use is named, not the Unix socket")
    func portInUse() async throws {
        let taken = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(taken) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(taken, $0, length) == 0 && listen(taken, 1) == 0 && getsockname(taken, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        await #expect(throws: ControlServerError.couldNotListen("127.0.0.1:\(port)", "the address is in use: another program (or another daemon) listens on it")) {
            try await WebListenerTests.withWebServer(listen: "127.0.0.1:\(port)") { _ in }
        }
    }

    @Test("each network listener gets a share of the descriptor limit, below it with room to spare")
    func shares() {
        #expect(ListenerLimits.forDescriptorLimit(1024, listeners: 2).maxConnections == 384)
        #expect(ListenerLimits.forDescriptorLimit(65536, listeners: 2).maxConnections == 512)
        #expect(ListenerLimits.forDescriptorLimit(200, listeners: 1).maxConnections == 8)
        #expect(ListenerLimits.descriptorLimit() > 0)
    }
}
