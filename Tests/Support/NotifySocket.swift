import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's notification socket.
public final class NotifySocket: Sendable {
    public let descriptor: Int32
    /// What `NOTIFY_SOCKET` holds for it: a path, or `@name` for an abstract one.
    public let address: String
    private let path: String?

    public init(abstract: Bool) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let name = "unleashed-notify-test-\(UUID().uuidString.prefix(8))"
        var bytes: [UInt8]
        if abstract {
            address = "@" + name
            path = nil
            bytes = [0] + Array(name.utf8)
        } else {
            address = NSTemporaryDirectory() + name
            path = address
            bytes = Array(address.utf8) + [0]
        }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        // Thrown once every member is set: deinit closes the descriptor.
        guard bound == 0 else {
            throw FixtureError("bind: \(String(cString: strerror(errno)))")
        }
        // Reads give up after 30 s so that a test cannot hang (a loaded machine may take seconds).
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }

    /// The next datagram, or nil after the time limit. It blocks: call it from a thread of
    /// its own (``next()``) in async code.
    public func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count: Int
        // Other tests' child processes end meanwhile, and their SIGCHLD interrupts the wait.
        repeat {
            count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// The next datagram, read on a thread of its own.
    public func next() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.receive()) }
        }
    }
}
