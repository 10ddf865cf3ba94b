public import CameraKit
import Foundation
import Intervalometer
import MQTT
public import Logging
public import ServiceLifecycle
import UnixSignals
public import UnleashedKit

/// The daemon as one service: it opens the run journal and the cameras, serves the control
/// API, takes up interrupted runs, and on a graceful shutdown (SIGTERM, SIGINT) suspends the
/// runs so that the next start resumes them, stops the API and closes the cameras.
///
/// What drives the cameras is not this module's concern: ``CameraOpening`` is handed in by the
/// executable, which links the backends (BlueZ, libgphoto2, the simulator).
public struct DaemonService: Service {
    private let configuration: DaemonConfiguration
    private let version: String
    private let cameras: any CameraOpening & CameraConnecting
    private let reload: @Sendable () throws(ConfigurationError) -> DaemonConfiguration
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let hostClock: HostClockSource

    /// - Parameters:
    ///   - configuration: The configuration read at start.
    ///   - cameras: Opens the cameras the configuration names and any `unleashed connect` asks for.
    ///   - reload: Reads the configuration again, on SIGHUP.
    ///   - notifier: Tells systemd (`NOTIFY_SOCKET`) that the daemon is ready, reloading, stopping.
    ///   - hostClock: Where the host's clock is read: the system's, unless a test plays it
    ///     (``HostClockTestSeam``).
    public init(configuration: DaemonConfiguration, version: String, cameras: any CameraOpening & CameraConnecting,
                reload: @escaping @Sendable () throws(ConfigurationError) -> DaemonConfiguration,
                notifier: SystemdNotifier = SystemdNotifier(), hostClock: HostClockSource = .system,
                logger: Logger = Logger(label: "unleashed.daemon")) {
        self.configuration = configuration
        self.version = version
        self.cameras = cameras
        self.reload = reload
        self.notifier = notifier
        self.hostClock = hostClock
        self.logger = logger
    }

    public func run() async throws {
        ResidentMemory.limitArenas()
        let journal = try SQLiteJournal(path: configuration.service.journal)
        let metrics = DaemonMetrics()
        let pictures = SavedPictures()
        let registry = CameraRegistry { entry in
            await metrics.observe(camera: entry.camera, name: entry.name)
            await pictures.follow(entry)
        }
        let jobs = JobManager(journal: journal, cameras: registry, logger: logger, metrics: metrics,
                              wallClock: DaemonClock(host: hostClock, logger: logger),
                              runThreadPriority: Timelapse<ContinuousClock>.realTimeThreadPriority,
                              resumesByItself: configuration.service.resumeRuns)
        let browsers = try webClients()
        let fleet = configuration.mqtt.broker == nil ? nil : FleetBoard(settings: configuration.mqtt)
        let api = ControlAPI(cameras: registry, jobs: jobs, access: AccessPolicy(configuration: configuration), version: version,
                             metrics: metrics, connector: cameras, configuration: configuration,
                             browsers: browsers, demo: cameras.simulatesCameras, pictures: pictures, fleet: fleet)
        let server = ControlServer(service: configuration.service, api: api, web: configuration.web, logger: logger)
        try await server.start()
        logger.info("unleashed \(version) serving on \(configuration.service.socket)")
        if let browsers {
            if configuration.web.certificate == nil {
                logger.notice("""
                    web app: plain HTTP; anyone on this network can read what passes, the session cookie included; \
                    set web.certificate and web.key for HTTPS (docs/web-app.md)
                    """)
            }
            browsers.onCode { [logger] code in Self.announce(code, url: browsers.pairingURL(for: code), logger: logger) }
            browsers.makeCode(role: .operator)
        }
        let watchdog = notifier.watchdogInterval == nil ? nil : Task { try? await SystemdWatchdog(notifier: notifier).run() }

        // The daemon is ready when its own services are, not when every module is: a module
        // switched off (or a bluetoothd that is down) would otherwise hold start-up until
        // systemd's TimeoutStartSec killed it, again and again. Modules connect in the
        // background, and each interrupted run resumes as soon as its cameras are held.
        let changes = await registry.changes()
        let opening = Task { await cameras.openConfigured(into: registry, configuration: configuration, logger: logger) }
        let mqtt = startMQTT(cameras: registry, jobs: jobs, board: fleet)
        let reloads = Task { await reloadOnHangup(access: api.access, notifier: notifier) }
        let resuming = configuration.service.resumeRuns ? Task { await Self.resume(jobs, as: changes, logger: logger) } : nil
        notify(notifier, .ready("serving on \(configuration.service.socket)"))
        let settled = Task { [logger] in
            // Once the configured cameras had their first attempt, start-up is over.
            await opening.value
            guard !Task.isCancelled else { return }
            let (before, after) = ResidentMemory.releaseStartupPages()
            logger.debug("released start-up pages: resident \(before / 1024) MiB before, \(after / 1024) MiB after")
        }

        try? await gracefulShutdown()

        logger.info("stopping: suspending runs, closing the control API and the cameras")
        notify(notifier, .stopping)
        watchdog?.cancel()
        // Before the runs are suspended: the broker hears `offline` while the daemon still answers.
        mqtt?.cancel()
        await mqtt?.value
        settled.cancel()
        reloads.cancel()
        resuming?.cancel()
        // Ended before the runs are suspended: a resume under way would otherwise start a run
        // after the suspension, on cameras about to close.
        await resuming?.value
        opening.cancel()
        await jobs.suspendAll()
        await server.stop()
        for entry in await registry.all { await entry.camera.close() }
        logger.info("stopped")
    }

    /// Resumes the interrupted runs whose cameras are held now, then again each time the
    /// cameras change, until cancelled: a run waits for its own cameras, not for every module.
    private static func resume(_ jobs: JobManager, as changes: AsyncStream<Void>, logger: Logger) async {
        var resumed = await jobs.resumeInterrupted()
        if !resumed.isEmpty { logger.info("resumed runs \(resumed.map(String.init).joined(separator: ", "))") }
        for await _ in changes {
            resumed = await jobs.resumeInterrupted(quietly: true)
            if !resumed.isEmpty { logger.info("resumed runs \(resumed.map(String.init).joined(separator: ", "))") }
        }
    }

    /// The MQTT bridge, when `[mqtt]` names a broker; a bridge that cannot start (libmosquitto
    /// missing) is logged, and the daemon serves without it.
    private func startMQTT(cameras: CameraRegistry, jobs: JobManager, board: FleetBoard?) -> Task<Void, Never>? {
        guard configuration.mqtt.broker != nil else { return nil }
        do throws(MQTTError) {
            let bridge = try MQTTBridge(settings: configuration.mqtt, version: version, cameras: cameras, jobs: jobs,
                                        groups: configuration.groups, board: board, logger: logger)
            logger.info("mqtt: bridge to \(configuration.mqtt.broker.map(String.init(describing:)) ?? "")")
            return Task { await bridge.run() }
        } catch {
            logger.error("mqtt: the bridge cannot start: \(error)")
            return nil
        }
    }

    /// The paired browsers, when the web app is served.
    private func webClients() throws -> WebClients? {
        guard configuration.web.listen != nil else { return nil }
        return try WebClients(file: configuration.web.clientsFile(journal: configuration.service.journal))
    }

    /// Shows a pairing code where the person at the daemon looks: its terminal and journal,
    /// with a QR code of the address that carries it.
    private static func announce(_ code: WebPairing.Code, url: String?, logger: Logger) {
        let grouped = code.digits.prefix(3) + " " + code.digits.dropFirst(3)
        var message = "web app: pairing code \(grouped) (\(code.role.rawValue) role), valid for \(Int(WebPairing.lifetime / 60)) minutes"
        guard let url else { return logger.notice("\(message)") }
        message += "; open \(url) on the phone and enter it, or scan the QR code below"
        logger.notice("\(message)")
        // One entry a line: the journal keeps a message's line breaks as text, and equal prefixes
        // keep the code square.
        for line in TerminalQRCode.lines(for: url) ?? [] { logger.notice("\(line)") }
    }

    private enum Notice {
        case ready(String?), reloading, stopping
    }

    /// Tells systemd, when it listens; a failure to tell it is logged, never fatal.
    private func notify(_ notifier: SystemdNotifier, _ notice: Notice) {
        guard notifier.isActive else { return }
        do throws(SystemdNotifierError) {
            switch notice {
            case .ready(let status): try notifier.ready(status: status)
            case .reloading: try notifier.reloading()
            case .stopping: try notifier.stopping()
            }
        } catch {
            logger.warning("could not notify systemd: \(error)")
        }
    }

    /// Reads the configuration again on each SIGHUP: tokens, roles and the locked mode apply to
    /// the next request; the socket and the journal stay as they are until a restart.
    private func reloadOnHangup(access: AccessControl, notifier: SystemdNotifier) async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            notify(notifier, .reloading)
            defer { notify(notifier, .ready(nil)) }
            do throws(ConfigurationError) {
                let fresh = try reload()
                access.replace(with: AccessPolicy(configuration: fresh))
                if fresh.service.socket != configuration.service.socket || fresh.service.journal != configuration.service.journal {
                    logger.warning("reloaded; the socket and journal paths change only with a restart")
                } else {
                    logger.info("configuration reloaded")
                }
            } catch {
                logger.error("configuration not reloaded, the old one stays: \(error)")
            }
        }
    }
}

/// Opens cameras for the daemon. The executable supplies it, with the backends it links.
public protocol CameraOpening: Sendable {
    /// Whether the cameras are the simulator's, which the web app says in a banner.
    var simulatesCameras: Bool { get }

    /// Opens the cameras `configuration` names and adds each to `registry` as it is ready.
    /// Returns once every camera has had a first attempt; ones not reached yet may be added
    /// later by tasks this starts, which end when the calling task is cancelled.
    func openConfigured(into registry: CameraRegistry, configuration: DaemonConfiguration, logger: Logger) async
}

extension CameraOpening {
    public var simulatesCameras: Bool { false }
}

/// Connects a module on request (`unleashed connect` through the daemon), by address or by a
/// name the configuration gives it.
public protocol CameraConnecting: Sendable {
    /// The module's camera, connected, with the name clients will use and where it is.
    func connect(_ wanted: String, configuration: DaemonConfiguration) async throws(CameraConnectError)
        -> (name: String, camera: any Camera, source: String)
}

/// Why a module could not be connected on request.
public struct CameraConnectError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for the client.
    public var description: String
    /// Whether the client asked for something that cannot be (400) rather than the module failing (503).
    public var isClientError: Bool

    public init(_ description: String, isClientError: Bool = false) {
        self.description = description
        self.isClientError = isClientError
    }
}
