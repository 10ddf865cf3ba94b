import Foundation
import Hummingbird
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
public actor ControlServer {
    private let socketPath: String
    private let socketMode: Int
    private let listen: DaemonConfiguration.ListenAddress?
    /// The TCP port the control API listens on while running with a TCP listener: the
    /// configured one, or the one the system chose for port 0.
    public private(set) var tcpPort: Int?
    private let api: ControlAPI
    private let logger: Logger
    private var running: Running?

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

    /// - Parameters:
    ///   - service: Where the socket goes and the mode it gets, and the TCP address to listen
    ///     on too, if any; the TCP listener serves the same routes, and needs a token on every
    ///     request.
    ///   - api: The routes and what they reach.
    public init(service: DaemonConfiguration.Service, api: ControlAPI,
                logger: Logger = Logger(label: "unleashed.control")) {
        self.socketPath = service.socket
        self.socketMode = service.socketMode
        self.listen = service.listen
        self.api = api
        self.logger = logger
    }

    /// Binds the socket and starts answering; returns once clients can connect. Starting a
    /// running server does nothing.
    public func start() async throws(ControlServerError) {
        guard running == nil else { return }
        if let listen, !api.access.policy.hasTokens {
            throw .noTokenForTCP(listen.description)
        }
        guard socketPath.utf8.count <= Self.maxSocketPathLength else {
            throw .couldNotListen(socketPath, "clients cannot reach a socket path of more than \(Self.maxSocketPathLength) bytes")
        }
        let parent = (socketPath as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        // The socket is bound under the staging directory, so that path must fit sun_path.
        let longestDirectory = Self.maxSocketPathLength - Self.stagedSocketSuffix.utf8.count
        guard directory.utf8.count <= longestDirectory else {
            throw .directory(directory, "a socket's directory may have at most \(longestDirectory) bytes")
        }
        try Self.makeDirectory(directory)
        // The rename below would take the path from a daemon still listening on it; a socket
        // nobody listens on is what a daemon that did not stop cleanly leaves, and is replaced.
        if Self.someoneListens(at: socketPath) {
            throw .couldNotListen(socketPath, "another process is listening on it; is the daemon already running?")
        }
        let staging = try Self.makeStagingDirectory(in: directory)
        let stagedSocket = staging + "/" + Self.stagedSocketName

        let (outcomes, report) = AsyncStream.makeStream(of: Result<Int?, ControlServerError>.self)
        let (finalPath, mode) = (socketPath, socketMode)
        let router = api.router()
        var services: [any Service] = [Application(
            router: router,
            configuration: ApplicationConfiguration(address: .unixDomainSocket(path: stagedSocket)),
            onServerRunning: { [logger] _ in
                let placed = Self.place(stagedSocket, at: finalPath, mode: mode, staging: staging)
                if case .success = placed { logger.info("control API listening on \(finalPath)") }
                report.yield(placed.map { _ in Int?.none })
            },
            logger: Self.quieter(logger))]
        if let listen {
            services.append(Application(
                router: router,
                configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port)),
                onServerRunning: { [logger] channel in
                    let port = channel.localAddress?.port ?? listen.port
                    logger.info("control API listening on \(listen.host):\(port) (TCP; every request needs a token)")
                    report.yield(.success(port))
                },
                logger: Self.quieter(logger)))
        }
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        let task = Task {
            do {
                try await group.run()
                report.yield(.failure(.couldNotListen(finalPath, "the server stopped before it listened")))
            } catch {
                report.yield(.failure(.couldNotListen(listen.map { "\($0)" } ?? finalPath, "\(error)")))
            }
            report.finish()
        }
        running = Running(group: group, task: task, staging: staging)

        var outcome: Result<Void, ControlServerError> = .failure(.couldNotListen(finalPath, "the server stopped"))
        var listening = 0
        var socketPlaced = false
        for await next in outcomes {
            switch next {
            case .failure(let error):
                outcome = .failure(error)
            case .success(let port):
                if let port { tcpPort = port } else { socketPlaced = true }
                listening += 1
                guard listening == services.count else { continue }
                outcome = .success(())
            }
            break
        }
        if case .failure(let error) = outcome {
            // A socket that never reached its path may be another process's to keep; one this
            // server placed (before the TCP listener failed) is its own to remove.
            await shutDown(removingSocket: socketPlaced)
            throw error
        }
    }

    /// Stops answering, lets requests in flight finish, ends event streams and removes the
    /// socket file, so that a later start, or another daemon, finds the path free.
    public func stop() async {
        await shutDown(removingSocket: true)
    }

    private func shutDown(removingSocket: Bool) async {
        guard let running else { return }
        self.running = nil
        tcpPort = nil
        await running.group.triggerGracefulShutdown()
        await running.task.value
        if removingSocket { unlink(socketPath) }
        unlink(running.staging + "/" + Self.stagedSocketName)
        rmdir(running.staging)
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

    /// Gives the bound socket its mode and moves it to the path clients use.
    private static func place(_ staged: String, at path: String, mode: Int, staging: String)
        -> Result<Void, ControlServerError>
    {
        guard chmod(staged, mode_t(mode)) == 0, rename(staged, path) == 0 else {
            return .failure(.couldNotListen(path, systemError()))
        }
        rmdir(staging)
        return .success(())
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
