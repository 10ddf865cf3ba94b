import Foundation

/// A Unix socket bound at a path, for tests: a test server's listener, or (closed at once) the
/// file a daemon that did not stop cleanly leaves behind, which nobody listens on.
public enum UnixSocketFile {
    /// A stream socket bound at `path`, or -1 when it cannot be bound.
    public static func bind(_ path: String) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    /// Leaves a socket file at `path` that nobody listens on; false when it cannot.
    public static func leaveStale(_ path: String) -> Bool {
        let descriptor = bind(path)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
