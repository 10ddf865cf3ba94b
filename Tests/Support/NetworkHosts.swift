public import Foundation

/// Hosts for a test of a rig across machines: each a network namespace of its own, joined to
/// this one by a veth pair, so that each daemon has its own network stack and reaches the broker
/// over a link, as a host on a LAN does. The test runs as root in CI; where namespaces are
/// refused (no root, no CAP_SYS_ADMIN, no veth), the hosts are plain processes on loopback and
/// ``isolated`` is false, which the test reports.
public final class NetworkHosts: Sendable {
    public struct Host: Sendable {
        /// The host's name in topics: `host1`, `host2`, ...
        public let name: String
        /// Its namespace; nil when it shares this one's network.
        public let namespace: String?
        /// The broker's address as this host reaches it.
        public let brokerHost: String
    }

    public let hosts: [Host]
    /// Whether each host has its own network namespace.
    public let isolated: Bool
    /// Why the hosts are not isolated, when they are not.
    public let refusal: String?
    private let links: [String]

    public init(count: Int) {
        let tag = String(UUID().uuidString.prefix(6).lowercased())
        // A /30 per host in a 10.x range picked at random, so that parallel runs do not meet.
        let octet = Int.random(in: 100...250)
        var hosts: [Host] = []
        var links: [String] = []
        var refusal: String?
        for index in 1...count {
            let namespace = "uh\(tag)\(index)", outside = "uv\(tag)\(index)", inside = "up\(tag)\(index)"
            let (gateway, address) = ("10.\(octet).\(index).1", "10.\(octet).\(index).2")
            let steps = [
                ["netns", "add", namespace],
                ["link", "add", outside, "type", "veth", "peer", "name", inside],
                ["link", "set", inside, "netns", namespace],
                ["addr", "add", "\(gateway)/30", "dev", outside],
                ["link", "set", outside, "up"],
                ["netns", "exec", namespace, "ip", "addr", "add", "\(address)/30", "dev", inside],
                ["netns", "exec", namespace, "ip", "link", "set", inside, "up"],
                ["netns", "exec", namespace, "ip", "link", "set", "lo", "up"],
            ]
            for step in steps {
                if let failure = Self.ip(step) {
                    refusal = "ip \(step.joined(separator: " ")): \(failure)"
                    break
                }
            }
            links.append(outside)
            if refusal != nil {
                _ = Self.ip(["link", "del", outside])
                _ = Self.ip(["netns", "del", namespace])
                links.removeLast()
                break
            }
            hosts.append(Host(name: "host\(index)", namespace: namespace, brokerHost: gateway))
        }
        if refusal != nil {
            for host in hosts {
                if let namespace = host.namespace { _ = Self.ip(["netns", "del", namespace]) }
            }
            for link in links { _ = Self.ip(["link", "del", link]) }
            hosts = (1...count).map { Host(name: "host\($0)", namespace: nil, brokerHost: "127.0.0.1") }
            links = []
        }
        self.hosts = hosts
        self.links = links
        self.isolated = refusal == nil
        self.refusal = refusal
    }

    deinit {
        remove()
    }

    /// Deletes the links and namespaces (again harmlessly): for a program that exits without
    /// releasing this, as a benchmark's top-level code does.
    public func remove() {
        for link in links { _ = Self.ip(["link", "del", link]) }
        for host in hosts { if let namespace = host.namespace { _ = Self.ip(["netns", "del", namespace]) } }
    }

    /// The addresses the broker must listen on for every host to reach it.
    public var brokerAddresses: [String] { Array(Set(hosts.map(\.brokerHost) + ["127.0.0.1"])).sorted() }

    /// `program arguments...` to run on `host`: inside its namespace when it has one.
    public func command(on host: Host, _ program: String, _ arguments: [String]) -> (executable: URL, arguments: [String]) {
        guard let namespace = host.namespace else { return (URL(fileURLWithPath: program), arguments) }
        return (URL(fileURLWithPath: Self.ipPath), ["netns", "exec", namespace, program] + arguments)
    }

    static let ipPath = "/usr/sbin/ip"

    /// Runs `ip` with `arguments`; nil when it succeeded, else what it said.
    private static func ip(_ arguments: [String]) -> String? {
        guard FileManager.default.isExecutableFile(atPath: ipPath) else { return "\(ipPath) is missing (scripts/setup installs iproute2)" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ipPath)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try ChildProcesses.run(process) } catch { return "\(error)" }
        process.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return process.terminationStatus == 0 ? nil : said.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
