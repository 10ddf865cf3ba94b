import Foundation
import Glibc
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization

/// One HTTP/1.1 request and its answer over a connection of its own to the daemon's Unix socket,
/// made with blocking calls on a thread of its own.
///
/// Why not the shared HTTP client for plain requests: a command makes one or two requests and
/// exits, and the client's first request starts NIO's event-loop threads and a connection pool,
/// which took longer than the daemon takes to answer (docs/performance.md, "Command start").
/// Here the request is written as soon as the socket connects, from the calling task, before a
/// thread or a parser is set up: those cost more than the daemon takes to act on the request
/// (the first use of NIO's pipeline types in a new process), so they are made while the daemon
/// works. The request's head is written by ``requestBytes()``; the answer is read by NIO's
/// HTTP/1.1 parser, driven by hand through an `EmbeddedChannel`, which runs no threads. Event
/// streams, which stay open, keep using the shared client.
struct SocketExchange {
    /// The daemon's answer: its status and body (empty for none).
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
    }

    let socketPath: String
    let method: String
    let path: String
    let headers: [(String, String)]
    let body: [UInt8]?
    /// The longest answer read; a longer one fails the request.
    var limit = 16 * 1024 * 1024

    /// Sends the request and reads the answer, within `timeout`. Cancelling the task closes the
    /// connection, and the request fails at once.
    func perform(timeout: Duration) async throws(DaemonClientError) -> Answer {
        let request = try requestBytes()
        let connection = Connection(path: socketPath)
        let deadline = ContinuousClock.now + timeout
        let sent: Int
        do throws(DaemonClientError) {
            // What a connected socket takes at once goes now, without blocking; the rest (a
            // body larger than the socket's buffer, or all of it while the daemon's backlog is
            // full) goes from the thread.
            sent = try connection.open() ? try connection.sendWithoutWaiting(request) : 0
        } catch {
            connection.close()
            throw error
        }
        let exchange = self
        let result = await withTaskCancellationHandler {
            // A thread of its own, started without waiting for it: the blocking calls never hold
            // one of the few threads that run the process's tasks.
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Answer, DaemonClientError>, Never>) in
                Thread.detachNewThread {
                    Thread.current.name = "unleashed-api"
                    continuation.resume(returning: exchange.run(on: connection, rest: request[sent...], until: deadline))
                }
            }
        } onCancel: {
            connection.abandon()
        }
        return try result.get()
    }

    /// The request as HTTP/1.1 writes it (RFC 9112): the request line, `Host`, the headers,
    /// `Content-Length`, then the body. A method, path or header that cannot be written as it
    /// is (a line break in a token from the environment, say) fails here, before anything is sent.
    func requestBytes() throws(DaemonClientError) -> [UInt8] {
        func token(_ text: String) -> Bool {
            !text.isEmpty && text.utf8.allSatisfy { $0 < 0x80 && Self.tokenBytes.contains(UInt8($0)) }
        }
        guard token(method) else { throw fault("the request cannot be encoded: the method \(method.debugDescription) is not a token") }
        // The target is sent as given: visible ASCII only, so that no space or line break ends it early.
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw fault("the request cannot be encoded: the path \(path.debugDescription) is not an origin-form target")
        }
        let fields = [("Host", "localhost")] + headers + [("Content-Length", String(body?.count ?? 0))]
        var bytes = Array("\(method) \(path) HTTP/1.1\r\n".utf8)
        for (name, value) in fields {
            // A field value is visible characters, spaces and tabs (RFC 9110, 5.5): never CR, LF or NUL.
            guard token(name), value.utf8.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
                throw fault("the request cannot be encoded: the header \(name.debugDescription) cannot be sent as it is")
            }
            bytes += name.utf8
            bytes += ": ".utf8
            bytes += value.utf8
            bytes += "\r\n".utf8
        }
        bytes += "\r\n".utf8
        if let body { bytes += body }
        return bytes
    }

    /// The bytes a token may hold (RFC 9110, 5.6.2: `tchar`).
    private static let tokenBytes = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    private func run(on connection: Connection, rest: ArraySlice<UInt8>,
                     until deadline: ContinuousClock.Instant) -> Result<Answer, DaemonClientError> {
        defer { connection.close() }
        do throws(DaemonClientError) {
            if !connection.isConnected { try connection.finishOpening(until: deadline) }
            try connection.send(rest, until: deadline)
            // Only the parser: the request is already written. It is told the request's head,
            // as its encoder would tell it, since how an answer ends depends on the method.
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
            defer { _ = try? channel.finish() }
            do {
                try channel.writeOutbound(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)))
            } catch {
                throw fault("the answer's parser cannot be set up: \(error)")
            }
            return .success(try readAnswer(from: connection, through: channel, until: deadline))
        } catch {
            return .failure(error)
        }
    }

    /// Feeds what the socket gives to the parser until the answer is complete.
    private func readAnswer(from connection: Connection, through channel: EmbeddedChannel,
                            until deadline: ContinuousClock.Instant) throws(DaemonClientError) -> Answer {
        var status: Int?
        var body: [UInt8] = []
        while true {
            let received = try connection.receive(until: deadline)
            do {
                if let received {
                    try channel.writeInbound(received)
                } else {
                    // The daemon closed the connection: an answer without a length ends here.
                    try channel.close().wait()
                }
            } catch {
                throw .badAnswer("\(method) \(path): the answer is not HTTP (\(error))")
            }
            while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head):
                    // An interim answer (100 Continue) is followed by the real one.
                    if head.status.code >= 200 { status = Int(head.status.code) }
                case .body(let bytes):
                    body.append(contentsOf: bytes.readableBytesView)
                    guard body.count <= limit else { throw .badAnswer("\(method) \(path): the answer is longer than \(limit) bytes") }
                case .end:
                    if let status { return Answer(status: status, body: body) }
                }
            }
            if received == nil { throw fault("the daemon closed the connection before its answer was complete") }
        }
    }

    private func fault(_ reason: String) -> DaemonClientError { .notReachable(socket: socketPath, reason: reason) }
}

extension SocketExchange {
    /// The connection's descriptor, which the exchange's thread uses and a cancelling task may
    /// shut down: both go through the lock, so a descriptor is never shut down after it was
    /// closed (when its number may already belong to another file).
    final class Connection: Sendable {
        private struct State {
            var descriptor: Int32 = -1
            var connected = false
            /// connect(2)'s errno when it failed, for ``DaemonClient/reach()``.
            var connectError: Int32 = 0
            var abandoned = false
            var closed = false
        }
        private let state = Mutex(State())
        /// The socket's path.
        let path: String

        init(path: String) {
            self.path = path
        }

        /// Connects to the socket without waiting: true once connected; false when the daemon's
        /// backlog is full, and ``finishOpening(until:)`` must wait for it. A refusal or a missing
        /// socket (no daemon) fails here, before the caller has handed anything to a thread.
        func open() throws(DaemonClientError) -> Bool {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard descriptor >= 0 else { throw .notReachable(socket: path, reason: Self.lastError()) }
            let accepted = state.withLock { state in
                guard !state.abandoned, !state.closed else { return false }
                state.descriptor = descriptor
                return true
            }
            guard accepted else {
                Glibc.close(descriptor)
                throw .notReachable(socket: path, reason: "the request was cancelled")
            }
            let connected = try connect()
            // From here on the calls block, each bounded by the time left (setTimeout).
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            return connected
        }

        /// Waits for a connection ``open()`` could not make at once, until `deadline`.
        func finishOpening(until deadline: ContinuousClock.Instant) throws(DaemonClientError) {
            setTimeout(SO_SNDTIMEO, until: deadline)
            guard try connect() else { throw .notReachable(socket: path, reason: "it did not answer in time") }
        }

        /// True when connected, false when the backlog is full (EAGAIN).
        private func connect() throws(DaemonClientError) -> Bool {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                throw .notReachable(socket: path, reason: "the socket path is longer than a socket address holds")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if result == 0 {
                state.withLock { $0.connected = true }
                return true
            }
            let error = errno
            if error == EAGAIN { return false }
            state.withLock { $0.connectError = error }
            throw .notReachable(socket: path, reason: isAbandoned ? "the request was cancelled" : String(cString: strerror(error)).lowercased())
        }

        /// connect(2)'s errno after ``open()`` failed to connect; 0 otherwise.
        var connectError: Int32 { state.withLock { $0.connectError } }

        /// Whether the socket is connected (``open()`` or ``finishOpening(until:)`` connected it).
        var isConnected: Bool { state.withLock { $0.connected } }

        /// Sends what the socket takes now, without blocking, and returns how many bytes that was.
        func sendWithoutWaiting(_ bytes: [UInt8]) throws(DaemonClientError) -> Int {
            while true {
                let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent >= 0 { return sent }
                let error = errno
                if error == EINTR { continue }
                if error == EAGAIN || error == EWOULDBLOCK { return 0 }
                throw failure(error)
            }
        }

        func send(_ bytes: ArraySlice<UInt8>, until deadline: ContinuousClock.Instant) throws(DaemonClientError) {
            var bytes = bytes
            while !bytes.isEmpty {
                setTimeout(SO_SNDTIMEO, until: deadline)
                let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { throw failure() }
                bytes = bytes.dropFirst(sent)
            }
        }

        /// The next bytes, or nil when the daemon closed the connection.
        func receive(until deadline: ContinuousClock.Instant) throws(DaemonClientError) -> ByteBuffer? {
            // Read straight into the buffer the parser takes: an answer is mostly one small read.
            var buffer = ByteBufferAllocator().buffer(capacity: Self.readSize)
            while true {
                setTimeout(SO_RCVTIMEO, until: deadline)
                var (count, error): (Int, Int32) = (0, 0)
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) { bytes in
                    count = Glibc.recv(descriptor, bytes.baseAddress, bytes.count, 0)
                    error = errno
                    return max(count, 0)
                }
                if count < 0, error == EINTR { continue }
                if count < 0 { throw failure(error) }
                if count == 0 {
                    if isAbandoned { throw failure() }
                    return nil
                }
                return buffer
            }
        }

        /// The most one read takes: larger answers (a long list of jobs) take several.
        private static let readSize = 16 * 1024

        /// From another thread: ends the exchange, whatever call it is blocked in.
        func abandon() {
            state.withLock { state in
                state.abandoned = true
                if !state.closed, state.descriptor >= 0 { shutdown(state.descriptor, Int32(SHUT_RDWR)) }
            }
        }

        func close() {
            state.withLock { state in
                if !state.closed, state.descriptor >= 0 { Glibc.close(state.descriptor) }
                state.closed = true
            }
        }

        private var descriptor: Int32 { state.withLock { $0.descriptor } }
        private var isAbandoned: Bool { state.withLock { $0.abandoned } }

        private func failure(_ error: Int32 = errno) -> DaemonClientError {
            let reason: String = if isAbandoned {
                "the request was cancelled"
            } else if error == EAGAIN || error == EWOULDBLOCK {
                "it did not answer in time"
            } else {
                String(cString: strerror(error)).lowercased()
            }
            return .notReachable(socket: path, reason: reason)
        }

        /// Bounds the next blocking call by what is left until `deadline` (at least a millisecond:
        /// a zero timeout would mean none).
        private func setTimeout(_ option: Int32, until deadline: ContinuousClock.Instant) {
            let left = max(deadline - ContinuousClock.now, .milliseconds(1))
            let (seconds, attoseconds) = left.components
            var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }

        private static func lastError() -> String { String(cString: strerror(errno)).lowercased() }
    }
}
