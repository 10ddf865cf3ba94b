@testable import DaemonClient
import Foundation
import Glibc
import Synchronization
import Testing
import UnleashedProtocol
import UnleashedTestSupport

/// The client's one-request exchange against a socket whose other end misbehaves in the ways a
/// hung, dying or foreign server would: every case ends in an answer or a clear error, in time.
@Suite("one request over the daemon's socket", .timeLimit(.minutes(1)))
struct SocketExchangeTests {
    @Test("a chunked answer and one that ends with the connection are read whole")
    func framings() async throws {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{\"a\":1}\r\n0\r\n\r\n"
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write(chunked)
        }) { path in
            let answer = try await DaemonClient(socketPath: path).request("GET", "/v1/x")
            #expect(answer == ["a": 1])
        }
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[1,2]")
        }) { path in
            let answer = try await DaemonClient(socketPath: path).request("GET", "/v1/x")
            #expect(answer == [1, 2])
        }
    }

    @Test("the request reaches the server as HTTP/1.1 with its body and length")
    func requestBytes() async throws {
        let seen = Seen()
        try await RawServer.with({ connection in
            let request = connection.readRequest()
            seen.request.withLock { $0 = request }
            connection.write("HTTP/1.1 204 No Content\r\n\r\n")
        }) { path in
            let answer = try await DaemonClient(socketPath: path, token: "t0k").request("POST", "/v1/y", body: ["ms": 5])
            #expect(answer == .null)
        }
        let request = seen.request.withLock { $0 }
        #expect(request.hasPrefix("POST /v1/y HTTP/1.1\r\n"))
        #expect(request.contains("Content-Length: 8\r\n"))
        #expect(request.contains("Authorization: Bearer t0k\r\n"))
        #expect(request.hasSuffix("\r\n\r\n{\"ms\":5}"))
    }

    @Test("a token, path or method that would break the request's head fails before anything is sent")
    func unsendable() async throws {
        // No socket at this path: an error about the request itself shows it was checked before connecting.
        let path = "/tmp/unleashed-raw-none-\(UUID().uuidString.prefix(8)).sock"
        for token in ["t0k\r\nX-Role: admin", "t0k\n", "t\u{0}k"] {
            let error = await #expect(throws: DaemonClientError.self) {
                try await DaemonClient(socketPath: path, token: token).request("GET", "/v1/x")
            }
            #expect(error == .notReachable(socket: path, reason: "the request cannot be encoded: the header \"Authorization\" cannot be sent as it is"))
        }
        for target in ["/v1/x y", "/v1/x\r\nX: 1", "v1/x", ""] {
            let error = await #expect(throws: DaemonClientError.self) { try await DaemonClient(socketPath: path).request("GET", target) }
            #expect(error == .notReachable(socket: path, reason: "the request cannot be encoded: the path \(target.debugDescription) is not an origin-form target"))
        }
        let error = await #expect(throws: DaemonClientError.self) { try await DaemonClient(socketPath: path).request("GE T", "/v1/x") }
        #expect(error == .notReachable(socket: path, reason: "the request cannot be encoded: the method \"GE T\" is not a token"))
        // A tab and text beyond ASCII are a field value's own.
        let request = try SocketExchange(socketPath: path, method: "GET", path: "/v1/x", headers: [("X-Name", "Kamera\tnördlich")], body: nil).requestBytes()
        #expect(String(decoding: request, as: UTF8.self) == "GET /v1/x HTTP/1.1\r\nHost: localhost\r\nX-Name: Kamera\tnördlich\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("a body larger than the socket takes at once is sent whole, from the exchange's thread")
    func largeBody() async throws {
        let seen = Seen()
        let text = String(repeating: "x", count: 400_000)
        try await RawServer.with({ connection in
            // More than a Unix socket buffers (208 KiB by default): the client's first send
            // cannot hold all of it, and the server reads only after a pause. A real pause: the
            // kernel tells nobody that a sender is waiting for room in the buffer.
            Thread.sleep(forTimeInterval: 0.2)
            let request = connection.readRequest()
            seen.request.withLock { $0 = request }
            connection.write("HTTP/1.1 204 No Content\r\n\r\n")
        }) { path in
            let answer = try await DaemonClient(socketPath: path).request("PUT", "/v1/z", body: ["text": .string(text)])
            #expect(answer == .null)
        }
        let request = seen.request.withLock { $0 }
        #expect(request.hasPrefix("PUT /v1/z HTTP/1.1\r\n"))
        #expect(request.contains("Content-Length: \(text.utf8.count + 11)\r\n"))
        #expect(request.hasSuffix("\r\n\r\n{\"text\":\"\(text)\"}"))
    }

    @Test("an error the client cannot read is a bad answer, never a refusal without a camera; an empty one is the status's")
    func unreadableErrors() async throws {
        // A camera error of a kind this client does not know, as a newer daemon might send.
        let body = #"{"error":{"code":"lensFault","message":"the lens is stuck","camera":{"case":"lensFault"}}}"#
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        }) { path in
            await #expect {
                _ = try await DaemonClient(socketPath: path).shoot(camera: "a")
            } throws: { error in
                guard case .badAnswer(let why) = error as? DaemonClientError else { return false }
                return why.contains("500")
            }
        }
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        }) { path in
            await #expect(throws: DaemonClientError.http(status: 404, code: "404", message: "the daemon answered 404", camera: nil)) {
                _ = try await DaemonClient(socketPath: path).shoot(camera: nil)
            }
        }
    }

    @Test("a server that never answers fails the request at its timeout")
    func silent() async throws {
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.waitForClose()
        }) { path in
            let error = await #expect(throws: DaemonClientError.self) {
                try await DaemonClient(socketPath: path).request("GET", "/v1/x", timeout: .milliseconds(300))
            }
            // The words say what ended the request: its timeout, not the server nor a cancellation.
            #expect(error == .notReachable(socket: path, reason: "it did not answer in time"))
        }
    }

    @Test("cancelling the task ends a request the server holds, at once")
    func cancelled() async throws {
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        try await RawServer.with({ connection in
            connection.readRequest()
            holding.yield()
            connection.waitForClose()
        }) { path in
            let request = Task { try await DaemonClient(socketPath: path).request("GET", "/v1/x") }
            // Cancelled once the server holds the request, so that it is the waiting that ends.
            for await _ in held { break }
            request.cancel()
            let result = await request.result
            // The words below say the cancellation ended it, not the request's own time limit
            // (two minutes, past the suite's one).
            guard case .failure(let error as DaemonClientError) = result else {
                Issue.record("expected a failure, got \(result)")
                return
            }
            #expect(error == .notReachable(socket: path, reason: "the request was cancelled"))
        }
    }

    @Test("an answer cut short, one that is not HTTP, and one too long are errors, not hangs")
    func broken() async throws {
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":")
        }) { path in
            let error = await #expect(throws: DaemonClientError.self) { try await DaemonClient(socketPath: path).request("GET", "/v1/x") }
            #expect(error == .notReachable(socket: path, reason: "the daemon closed the connection before its answer was complete"))
        }
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("SSH-2.0-OpenSSH_9.2\r\n\r\n")
        }) { path in
            let error = await #expect(throws: DaemonClientError.self) { try await DaemonClient(socketPath: path).request("GET", "/v1/x") }
            guard case .badAnswer(let why)? = error else {
                Issue.record("expected badAnswer, got \(String(describing: error))")
                return
            }
            #expect(why.contains("not HTTP"))
        }
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + String(repeating: " ", count: 70000))
        }) { path in
            var exchange = SocketExchange(socketPath: path, method: "GET", path: "/v1/x", headers: [], body: nil)
            exchange.limit = 65536
            let error = await #expect(throws: DaemonClientError.self) { try await exchange.perform(timeout: .seconds(10)) }
            #expect(error == .badAnswer("GET /v1/x: the answer is longer than 65536 bytes"))
        }
        try await RawServer.with({ connection in
            connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nnope!")
        }) { path in
            let error = await #expect(throws: DaemonClientError.self) { try await DaemonClient(socketPath: path).request("GET", "/v1/x") }
            #expect(error == .badAnswer("GET /v1/x answered 200 with something that is not JSON"))
        }
    }
}

/// What the server thread saw, for the test to read.
private final class Seen: Sendable {
    let request = Mutex("")
}

/// A Unix socket whose one connection is served, on a thread of its own, by `serve`, with
/// plain system calls: whatever bytes it likes, as slowly as it likes.
enum RawServer {
    struct Connection {
        let descriptor: Int32

        /// Reads until the end of the head and the body its Content-Length announces.
        @discardableResult
        func readRequest() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let text = String(decoding: bytes, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let length = text.components(separatedBy: "\r\n")
                        .first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text[end.upperBound...].utf8.count >= length { return text }
                }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { return text }
                bytes += buffer[..<count]
            }
        }

        func write(_ text: String) {
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                bytes = bytes.dropFirst(sent)
            }
        }

        /// Blocks until the client closes its end.
        func waitForClose() {
            var byte: UInt8 = 0
            while recv(descriptor, &byte, 1, 0) > 0 {}
        }
    }

    static func with(_ serve: @escaping @Sendable (Connection) -> Void, _ body: (String) async throws -> Void) async throws {
        let path = "/tmp/unleashed-raw-\(UUID().uuidString.prefix(8)).sock"
        let listener = UnixSocketFile.bind(path)
        try #require(listener >= 0 && listen(listener, 4) == 0)
        defer {
            close(listener)
            unlink(path)
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let descriptor = accept(listener, nil, nil)
            if descriptor >= 0 {
                serve(Connection(descriptor: descriptor))
                close(descriptor)
            }
            done.signal()
        }
        try await body(path)
        // The server thread ends once its client has gone.
        _ = await eventually(every: .milliseconds(5)) { done.wait(timeout: .now()) == .success }
    }
}
