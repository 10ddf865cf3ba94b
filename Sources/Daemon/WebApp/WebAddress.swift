import Foundation
import Synchronization

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
        interfaceAddresses().first { $0.ipv4 && $0.up && !$0.loopback }?.text
    }
}

/// Which `Host` a request to the web app may carry: a name or address of this machine, or one
/// the configuration adds (`web.hosts`). A page elsewhere that rebinds its own name to this
/// machine's address (DNS rebinding) sends its own name, and is refused.
struct WebHostRule: Sendable {
    /// The listening host, allowed when it is a name or a single address.
    let listenHost: String
    /// `web.hosts`, lower case.
    let extra: Set<String>

    init(listenHost: String, extra: [String]) {
        self.listenHost = listenHost.lowercased()
        self.extra = Set(extra.map { $0.lowercased() })
    }

    /// This machine's names and addresses, as the rule compares them.
    struct Machine: Sendable {
        /// The host name's first label, lower case.
        var name: String
        /// The domains this machine's name lives in: the host name's own, and those of
        /// /etc/resolv.conf (`domain`, `search`), lower case.
        var domains: Set<String> = []
        /// Every interface's address, as `inet_ntop` writes it (IPv6 without a zone).
        var addresses: Set<String>

        /// Read afresh at most every few seconds: an address a DHCP lease changes is taken up
        /// soon, without reading the interfaces at every request.
        static func current() -> Machine {
            let now = ContinuousClock.now
            return cache.withLock { cached in
                if let (machine, readAt) = cached, readAt.duration(to: now) < .seconds(5) { return machine }
                let machine = read()
                cached = (machine, now)
                return machine
            }
        }

        private static let cache = Mutex<(Machine, ContinuousClock.Instant)?>(nil)

        private static func read() -> Machine {
            let labels = hostName().lowercased().split(separator: ".")
            var domains = Set(resolverDomains())
            if labels.count > 1 { domains.insert(labels.dropFirst().joined(separator: ".")) }
            return Machine(name: String(labels.first ?? ""), domains: domains,
                           addresses: Set(interfaceAddresses().map(\.text)).union(["127.0.0.1", "::1"]))
        }

        /// The machine's host name as the kernel has it (`gethostname`).
        static func hostName() -> String {
            var buffer = [CChar](repeating: 0, count: 256)
            gethostname(&buffer, buffer.count - 1)
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// `domain` and `search` of /etc/resolv.conf.
        private static func resolverDomains() -> [String] {
            guard let text = try? String(contentsOfFile: "/etc/resolv.conf", encoding: .utf8) else { return [] }
            return text.split(separator: "\n").flatMap { line -> [String] in
                let words = line.split(whereSeparator: \.isWhitespace)
                guard let first = words.first, first == "domain" || first == "search" else { return [] }
                return words.dropFirst().map { $0.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".")) }
            }
        }
    }

    /// The host a `Host` header names, without its port or brackets, lower case; nil when the
    /// header is not a host.
    static func host(of header: String) -> String? {
        var text = Substring(header.lowercased())
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
        } else if let colon = text.lastIndex(of: ":") {
            guard text[text.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            text = text[..<colon]
        }
        if text.hasSuffix(".") { text = text.dropLast() }
        return text.isEmpty ? nil : String(text)
    }

    /// Whether `header` names this web app on `machine`.
    func allows(_ header: String?, on machine: Machine) -> Bool {
        guard let header, let host = Self.host(of: header) else { return false }
        if host == "localhost" || host.hasSuffix(".localhost") || extra.contains(host) { return true }
        if !["0.0.0.0", "::", "*", ""].contains(listenHost), host == listenHost { return true }
        if machine.addresses.contains(host) { return true }
        // The machine's own name, bare, in .local, or in one of its own domains: never any
        // name that merely starts with it (tripod.attacker.example).
        let name = machine.name
        guard !name.isEmpty else { return false }
        return host == name || host == name + ".local" || machine.domains.contains { host == name + "." + $0 }
    }
}

/// Every address of every interface of this machine, in the kernel's order, as `inet_ntop`
/// writes it (IPv6 without a zone).
private func interfaceAddresses() -> [(text: String, ipv4: Bool, up: Bool, loopback: Bool)] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return [] }
    defer { freeifaddrs(list) }
    var addresses: [(text: String, ipv4: Bool, up: Bool, loopback: Bool)] = []
    for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
        guard let address = entry.pointee.ifa_addr else { continue }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(address.pointee.sa_family)
        switch family {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var raw = inet.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                var raw = inet.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            }
        default:
            continue
        }
        let flags = Int32(entry.pointee.ifa_flags)
        addresses.append((String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                          family == AF_INET, flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) != 0))
    }
    return addresses
}
