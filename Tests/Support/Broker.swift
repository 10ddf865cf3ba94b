import Foundation
import Synchronization

/// A mosquitto broker that a test starts for itself, on loopback and a port of its own, and that
/// can be killed and started again on the same port (a broker lost mid-run).
public final class Broker: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let directory: URL
    private let process = Mutex<Process?>(nil)

    /// - Parameter addresses: where it listens; loopback unless other hosts must reach it
    ///   (their veth links' addresses, ``NetworkHosts/brokerAddresses``), never every address.
    /// - Parameter tls: TLS only (`mqtts://`), with a certificate for 127.0.0.1 signed by a
    ///   certificate authority made for this broker alone (``caFile``).
    public init(listeningOn addresses: [String] = ["127.0.0.1"], tls: Bool = false) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        var listeners = addresses.map { "listener \(port) \($0)" }.joined(separator: "\n")
        if tls {
            try makeCertificates()
            listeners += "\ncafile \(caFile)\ncertfile \(directory.path)/server.pem\nkeyfile \(directory.path)/server.key"
        }
        // `user root`: started as root, mosquitto would drop to its own user, and a change of user
        // clears the parent-death signal that ends it with this process (ChildProcesses).
        try """
            \(listeners)
            allow_anonymous true
            persistence false
            user root
            log_dest file \(logFile.path)
            log_type error
            log_type warning
            log_type notice
            log_type information
            """.write(to: configFile, atomically: true, encoding: .utf8)
        try await start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the broker logged: connections, refusals and TLS errors, as they come.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
    private var logFile: URL { directory.appendingPathComponent("mosquitto.log") }

    /// The certificate authority that signed a TLS broker's certificate.
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }

    /// A CA and a server certificate for 127.0.0.1 (by IP, as clients check it), with openssl.
    private func makeCertificates() throws {
        let folder = directory.path
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(folder)/san.cnf", atomically: true, encoding: .utf8)
        let steps = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/ca.key", "-out", "\(folder)/ca.pem",
             "-days", "1", "-subj", "/CN=unleashed test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/server.key", "-out", "\(folder)/server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.pem", "-CAkey", "\(folder)/ca.key", "-CAcreateserial",
             "-out", "\(folder)/server.pem", "-days", "1", "-extfile", "\(folder)/san.cnf"],
        ]
        for step in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = step
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ChildProcesses.run(process)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw FixtureError("openssl \(step.prefix(2).joined(separator: " ")) failed (scripts/setup installs openssl)")
            }
        }
    }

    /// The broker's address as the daemon's configuration writes it.
    public var url: String { "mqtt://127.0.0.1:\(port)" }

    private var configFile: URL { directory.appendingPathComponent("mosquitto.conf") }

    /// Starts the broker (again) and returns once it accepts connections.
    public func start() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.mosquitto) else {
            throw FixtureError("\(Self.mosquitto) is missing: scripts/setup installs mosquitto")
        }
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: Self.mosquitto)
        broker.arguments = ["-c", configFile.path]
        broker.standardOutput = FileHandle.nullDevice
        broker.standardError = FileHandle.nullDevice
        try ChildProcesses.run(broker)
        process.withLock { $0 = broker }
        // Its port is tried: mosquitto logs that it opens the socket before it listens.
        _ = await eventually(every: .milliseconds(20)) { Self.accepts(port) || !broker.isRunning }
        if Self.accepts(port) { return }
        guard broker.isRunning else { throw FixtureError("mosquitto exited at once (port \(port) taken?)") }
        stop()
        throw FixtureError("mosquitto did not listen on \(port) within 20 s")
    }

    /// Kills the broker, as a crash or a power cut would: no goodbye to anyone.
    public func stop() {
        guard let broker = process.withLock({ process in defer { process = nil }; return process }) else { return }
        kill(broker.processIdentifier, SIGKILL)
        broker.waitUntilExit()
    }

    static let mosquitto = "/usr/sbin/mosquitto"

    /// A TCP port nobody listens on now, for a test of a broker that is not there.
    public static func freePortForTests() throws -> Int { try freePort() }

    /// A TCP port nobody listens on now (the kernel's choice for port 0).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("no socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw FixtureError("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
