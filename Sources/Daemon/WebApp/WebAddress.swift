import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The address a phone uses to reach the web app: the listening host, or for a listener on
/// every interface (`0.0.0.0`, `::`) the machine's first address on a network, since a phone
/// cannot open `0.0.0.0`.
enum WebAddress {
    static func url(scheme: String, listenHost: String, port: Int) -> String {
        var host = listenHost
        if ["0.0.0.0", "::", "*", ""].contains(host) { host = networkAddress() ?? "localhost" }
        if host.contains(":") { host = "[\(host)]" }
        return "\(scheme)://\(host):\(port)/"
    }

    /// The first IPv4 address of an interface that is up and not loopback.
    private static func networkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var raw = inet.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }
}
