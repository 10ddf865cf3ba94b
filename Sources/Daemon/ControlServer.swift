import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOPosix
import NIOSSL
public import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control API, the `/v1/` routes, on its Unix socket, and on TCP when
/// ``DaemonConfiguration/Service/listen`` asks for it.
///
/// The socket's permissions are the only guard when no tokens are configured, so no client may
/// ever reach the socket with looser ones. `bind(2)` creates the socket file with mode 0777 less
/// the process umask, and its mode can only be changed after that; a client could connect in
/// between. The server closes that window without touching the umask (it is process-wide, and
/// other threads create files): it binds inside a private directory (mode 0700, from `mkdtemp`)
/// beside the configured path, sets the socket's mode there, and then renames the socket into
/// place, so the socket appears at its path already with ``DaemonConfiguration/Service/socketMode``.
/// A directory the server has to create for the socket gets mode 0750.
///
/// The socket's path is the daemon's to use only when nothing is there or a socket nobody
/// listens on is (what a daemon that did not stop cleanly leaves): any other file is refused,
/// never replaced, and a live daemon's socket is left to it. At stop the server removes the
/// socket only if it is still the one it placed (the same inode), not one another daemon
/// put there since.
public actor ControlServer {
    private let socketPath: String
    private let socketMode: Int
    private let listen: DaemonConfiguration.ListenAddress?
    /// The TCP port the control API listens on while running with a TCP listener: the
    /// configured one, or the one the system chose for port 0.
    public private(set) var tcpPort: Int?
    /// The web app's port while it is served: the configured one, or the system's choice for 0.
    public private(set) var webPort: Int?
    private let web: DaemonConfiguration.Web
    private let api: ControlAPI
    private let logger: Logger
    private var running: Running?

    /// One event-loop thread for every listener in the process, rather than NIO's shared group of
    /// one per core: the loop only moves bytes between the sockets and the handlers, which run
    /// on Swift's own threads, and a control daemon's few clients never keep one thread busy.
    /// Each further thread cost a stack and a malloc arena while the daemon sat idle.
    private static let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private static let stagingTemplate = ".bind-XXXXXX"
    private static let stagedSocketName = "s"
    private static var stagedSocketSuffix: String { "/" + stagingTemplate + "/" + stagedSocketName }
    /// `sun_path` holds 108 bytes, the last a NUL.
    private static let maxSocketPathLength = 107

    private struct Running {
        let group: ServiceGroup
        let task: Task<Void, Never>
        let staging: String
    }

    /// A file as the kernel knows it, whatever its name: the socket this server placed.
    private struct FileIdentity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        /// The file at `path` itself (a symbolic link is not followed); nil when there is none.
        init?(at path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// What one listener reports once it listens.
    private enum Listening: Sendable {
        case socket(FileIdentity?)
        case tcp(port: Int)
        case web(port: Int)
    }

    /// The socket this server placed at its path, to remove at stop and nothing else.
    private var placedSocket: FileIdentity?
    private let limits: ListenerLimits

    /// - Parameters:
    ///   - service: Where the socket goes and the mode it gets, and the TCP address to listen
    ///     on too, if any; the TCP listener serves the same routes, and needs a token on every
    ///     request.
    ///   - api: The routes and what they reach.
    ///   - web: Where the web app is served, if anywhere; it needs `api` to hold the paired browsers.
    ///   - limits: What the network listeners grant one client (timeouts, connections at once);
    ///     by default a share of this process's descriptor limit.
    public init(service: DaemonConfiguration.Service, api: ControlAPI, web: DaemonConfiguration.Web = .init(),
                limits: ListenerLimits? = nil, logger: Logger = Logger(label: "unleashed.control")) {
        self.limits = limits ?? .forDescriptorLimit(ListenerLimits.descriptorLimit(),
                                                    listeners: (service.listen == nil ? 0 : 1) + (web.listen == nil ? 0 : 1))
        self.socketPath = service.socket
        self.socketMode = service.socketMode
        self.listen = service.listen
        self.web = web
        self.api = api
        self.logger = logger
    }

    /// Binds the socket and starts answering; returns once clients can connect. Starting a
    /// running server does nothing.
    public func start() async throws(ControlServerError) {
        guard running == nil else { return }
        try Self.check(socket: socketPath, listen: listen, hasTokens: api.access.policy.hasTokens)
        let directory = Self.directory(of: socketPath)
        try Self.makeDirectory(directory)
        // The rename below would take the path from a daemon still listening on it; a socket
        // nobody listens on is what a daemon that did not stop cleanly leaves, and is replaced.
        if Self.someoneListens(at: socketPath) {
            throw .couldNotListen(socketPath, "another process is listening on it; is the daemon already running?")
        }
        let staging = try Self.makeStagingDirectory(in: directory)
        let stagedSocket = staging + "/" + Self.stagedSocketName

        let (outcomes, report) = AsyncStream.makeStream(of: Result<Listening, ControlServerError>.self)
        let (finalPath, mode) = (socketPath, socketMode)
        let router = api.router()
        var services: [any Service] = [NamedListener(address: finalPath, service: Application(
            router: router,
            configuration: ApplicationConfiguration(address: .unixDomainSocket(path: stagedSocket)),
            onServerRunning: { [logger] _ in
                let placed = Self.place(stagedSocket, at: finalPath, mode: mode, staging: staging)
                if case .success = placed { logger.info("control API listening on \(finalPath)") }
                report.yield(placed.map(Listening.socket))
            },
            eventLoopGroupProvider: .shared(Self.loops),
            logger: Self.quieter(logger)))]
        if let listen {
            services.append(NamedListener(address: listen.description, service: Application(
                router: router,
                server: .http1(configuration: limits.http1()),
                configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port)),
                onServerRunning: { [logger] channel in
                    let port = channel.localAddress?.port ?? listen.port
                    logger.info("control API listening on \(listen.host):\(port) (TCP; every request needs a token)")
                    report.yield(.success(.tcp(port: port)))
                },
                eventLoopGroupProvider: .shared(Self.loops),
            logger: Self.quieter(logger))))
        }
        if let webService = try webApplication(report: report) { services.append(webService) }
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        let task = Task {
            do {
                try await group.run()
                report.yield(.failure(.couldNotListen(finalPath, "the server stopped before it listened")))
            } catch let failure as NamedListener.Failure {
                report.yield(.failure(.couldNotListen(failure.address, failure.reason)))
            } catch {
                report.yield(.failure(.couldNotListen(finalPath, "\(error)")))
            }
            report.finish()
        }
        running = Running(group: group, task: task, staging: staging)

        var outcome: Result<Void, ControlServerError> = .failure(.couldNotListen(finalPath, "the server stopped"))
        var listening = 0
        for await next in outcomes {
            switch next {
            case .failure(let error):
                outcome = .failure(error)
            case .success(.web(let port)):
                webPort = port
                listening += 1
                guard listening == services.count else { continue }
                outcome = .success(())
            case .success(.tcp(let port)):
                tcpPort = port
                listening += 1
                guard listening == services.count else { continue }
                outcome = .success(())
            case .success(.socket(let identity)):
                placedSocket = identity
                listening += 1
                guard listening == services.count else { continue }
                outcome = .success(())
            }
            break
        }
        if case .failure(let error) = outcome {
            // A socket that never reached its path may be another process's to keep; one this
            // server placed (before the TCP listener failed) is its own to remove.
            await shutDown()
            throw error
        }
    }

    /// The web app's listener, HTTPS when a certificate is configured; nil when none is asked for.
    private func webApplication(report: AsyncStream<Result<Listening, ControlServerError>>.Continuation)
        throws(ControlServerError) -> (any Service)?
    {
        guard let address = web.listen else { return nil }
        guard let routes = api.webRoutes(secure: web.certificate != nil) else {
            throw .couldNotListen(address.description, "the web app has no store of paired browsers")
        }
        let http1 = limits.http1()
        var server: HTTPServerBuilder = .http1(configuration: http1)
        if let certificate = web.certificate, let key = web.key {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                server = try .tls(.http1(configuration: http1), tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey)))
            } catch {
                throw .couldNotListen(address.description, "cannot use the certificate \(certificate) with the key \(key): \(error)")
            }
        }
        let scheme = web.certificate == nil ? "http" : "https"
        let browsers = routes.browsers
        return NamedListener(address: address.description, service: Application(
            router: api.router(web: routes, hosts: WebHostRule(listenHost: address.host, extra: web.hosts)),
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(address.host, port: address.port)),
            onServerRunning: { [logger] channel in
                let port = channel.localAddress?.port ?? address.port
                browsers.url = WebAddress.url(scheme: scheme, listenHost: address.host, port: port)
                logger.info("web app listening on \(scheme)://\(address.host.contains(":") ? "[\(address.host)]" : address.host):\(port)")
                report.yield(.success(.web(port: port)))
            },
            eventLoopGroupProvider: .shared(Self.loops),
            logger: Self.quieter(logger)))
    }

    /// Stops answering, lets requests in flight finish, ends event streams and removes the
    /// socket file, so that a later start, or another daemon, finds the path free. A file that
    /// took the socket's place meanwhile (another daemon's socket, anything else) is left.
    public func stop() async {
        await shutDown()
    }

    private func shutDown() async {
        guard let running else { return }
        self.running = nil
        tcpPort = nil
        webPort = nil
        await running.group.triggerGracefulShutdown()
        await running.task.value
        if let placed = placedSocket, FileIdentity(at: socketPath) == placed { unlink(socketPath) }
        placedSocket = nil
        unlink(running.staging + "/" + Self.stagedSocketName)
        rmdir(running.staging)
    }

    /// Checks, without changing anything, what ``start()`` would refuse of `service` before it
    /// binds: a TCP listener without a token to let anyone in (`hasTokens`), a socket path too
    /// long for a Unix socket, a socket directory that cannot be one, and a file at the socket's
    /// path that is not a socket. `unleashed daemon --check` runs it too. Whether another daemon
    /// listens on the socket is left to ``start()``: a configuration is checked while its daemon
    /// runs.
    public static func check(_ service: DaemonConfiguration.Service, hasTokens: Bool) throws(ControlServerError) {
        try check(socket: service.socket, listen: service.listen, hasTokens: hasTokens)
    }

    private static func check(socket path: String, listen: DaemonConfiguration.ListenAddress?,
                              hasTokens: Bool) throws(ControlServerError) {
        if let listen, !hasTokens {
            throw .noTokenForTCP(listen.description)
        }
        guard path.utf8.count <= maxSocketPathLength else {
            throw .couldNotListen(path, "clients cannot reach a socket path of more than \(maxSocketPathLength) bytes")
        }
        let directory = directory(of: path)
        // The socket is bound under the staging directory, so that path must fit sun_path.
        let longestDirectory = maxSocketPathLength - stagedSocketSuffix.utf8.count
        guard directory.utf8.count <= longestDirectory else {
            throw .directory(directory, "a socket's directory may have at most \(longestDirectory) bytes")
        }
        // The nearest part of the directory's path that exists must be a directory to make the rest in.
        var existing = directory
        while !existing.isEmpty, existing != "/", FileIdentity(at: existing) == nil {
            existing = (existing as NSString).deletingLastPathComponent
        }
        if !existing.isEmpty, let kind = FileKind(at: existing, following: true), kind != .directory {
            throw .directory(directory, existing == directory ? "it is not a directory" : "\(existing) is \(kind.rawValue), not a directory")
        }
        if let problem = socketPathProblem(path) { throw .couldNotListen(path, problem) }
    }

    /// Why the file at `path` must not be replaced by the socket, or nil when the path is free
    /// or holds a socket (a daemon's, live or dead).
    private static func socketPathProblem(_ path: String) -> String? {
        guard let kind = FileKind(at: path, following: false), kind != .socket else { return nil }
        return "\(kind.rawValue) is there, not a socket, and the daemon does not replace it; "
            + "move it away, or set daemon.socket (or UNLEASHED_SOCKET) to another path"
    }

    /// What a file is, in the words messages use.
    private enum FileKind: String {
        case socket = "a socket", directory = "a directory", regular = "a regular file", symbolicLink = "a symbolic link"
        case pipe = "a named pipe", device = "a device", other = "a file"

        /// The kind of the file at `path`; nil when there is none. With `following`, a
        /// symbolic link is taken for what it points to.
        init?(at path: String, following: Bool) {
            var info = stat()
            guard (following ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
            switch info.st_mode & S_IFMT {
            case S_IFSOCK: self = .socket
            case S_IFDIR: self = .directory
            case S_IFREG: self = .regular
            case S_IFLNK: self = .symbolicLink
            case S_IFIFO: self = .pipe
            case S_IFCHR, S_IFBLK: self = .device
            default: self = .other
            }
        }
    }

    private static func directory(of socketPath: String) -> String {
        let parent = (socketPath as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    /// The server's own start message names the staging path, which no client uses; the
    /// server logs where it listens itself.
    private static func quieter(_ logger: Logger) -> Logger {
        var quieter = logger
        quieter.logLevel = max(logger.logLevel, .notice)
        return quieter
    }

    /// Whether a connection to the socket at `path` is accepted.
    private static func someoneListens(at path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Makes the socket's directory with mode 0750 unless it exists; an existing one is left
    /// as it is, since a service manager may have made it with the permissions it wants.
    private static func makeDirectory(_ path: String) throws(ControlServerError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .directory(path, "it is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw .directory(path, error.localizedDescription)
        }
        // mkdir applies the umask; the mode must not depend on it.
        guard chmod(path, 0o750) == 0 else { throw .directory(path, Self.systemError()) }
    }

    private static func makeStagingDirectory(in directory: String) throws(ControlServerError) -> String {
        var template = Array((directory + "/" + stagingTemplate).utf8CString)
        guard let made = mkdtemp(&template) else { throw .directory(directory, Self.systemError()) }
        return String(cString: made)
    }

    /// Gives the bound socket its mode and moves it to the path clients use, unless a file
    /// that is not a socket appeared there since the check; returns the socket as placed.
    private static func place(_ staged: String, at path: String, mode: Int, staging: String)
        -> Result<FileIdentity?, ControlServerError>
    {
        guard chmod(staged, mode_t(mode)) == 0 else { return .failure(.couldNotListen(path, systemError())) }
        if let problem = socketPathProblem(path) { return .failure(.couldNotListen(path, problem)) }
        // The inode stays the same through the rename.
        let identity = FileIdentity(at: staged)
        guard rename(staged, path) == 0 else { return .failure(.couldNotListen(path, systemError())) }
        rmdir(staging)
        return .success(identity)
    }

    private static func systemError() -> String { String(cString: strerror(errno)) }
}

/// Why the control server could not start.
public enum ControlServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The socket's directory could not be made or used.
    case directory(String, String)
    /// The socket could not be bound or put in place.
    case couldNotListen(String, String)
    /// `listen` asks for TCP but no token could let anyone in there.
    case noTokenForTCP(String)

    public var description: String {
        switch self {
        case .directory(let path, let why): "cannot use \(path) for the control socket: \(why)"
        case .couldNotListen(let path, let why): "cannot listen on \(path): \(why)"
        case .noTokenForTCP(let address):
            "cannot listen on \(address): listen is set but no [[tokens]] are configured; a TCP listener needs one"
        }
    }
}

/// One listener of the server as a service: the error it ends with names its own address, so
/// that a web port in use is not blamed on the Unix socket.
private struct NamedListener: Service {
    let address: String
    let service: any Service

    struct Failure: Error {
        let address: String
        let reason: String
    }

    func run() async throws {
        do {
            try await service.run()
        } catch {
            throw Failure(address: address, reason: Self.reason(error))
        }
    }

    /// What went wrong, in words that say what to do.
    static func reason(_ error: any Error) -> String {
        if let io = error as? IOError {
            switch io.errnoCode {
            case EADDRINUSE: return "the address is in use: another program (or another daemon) listens on it"
            case EADDRNOTAVAIL: return "no interface of this machine has that address"
            case EACCES: return "permission denied: a port under 1024 needs root or CAP_NET_BIND_SERVICE"
            default: return "\(io)"
            }
        }
        if let address = error as? SocketAddressError, case .unknown(let host, _) = address {
            return "'\(host)' is neither an address of this machine nor a name it can resolve"
        }
        return "\(error)"
    }
}
