import CameraKit
import Daemon
public import DaemonClient
import Foundation
import Logging
import ServiceLifecycle
import UnleashedKit
public import UnleashedSimulator

/// A daemon about to start: its configuration read from the files its scope names (or the one
/// file given), checked, summarised, and run under a service group until SIGTERM or Ctrl-C. The
/// executable parses its options into this and prints what it says.
public struct DaemonLaunch: Sendable {
    /// The configuration files read, in order (later ones override earlier ones).
    public let files: [String]
    private let configuration: DaemonConfiguration
    private let load: @Sendable () throws(ConfigurationError) -> DaemonConfiguration
    /// The host's clock as a test plays it (``HostClockTestSeam``); nil for the system's.
    private let testHostClock: HostClockSource?

    /// Reads the configuration: `file` alone when given (and then it must exist), else the
    /// system file and, for a user's daemon, the user's own; `UNLEASHED_*` variables last, and
    /// `web` (`--web HOST:PORT`) over all of them. `UNLEASHED_TEST_HOST_CLOCK` is a test's, not a
    /// user's: it plays the host's clock (``HostClockTestSeam``).
    public init(system: Bool, file: String?, environment given: [String: String], web: String? = nil) throws(DaemonLaunchError) {
        var overridden = given
        if let web {
            guard DaemonConfiguration.ListenAddress(web, allowingAnyPort: true) != nil else {
                throw .configuration("--web '\(web)' is not a listening address; write it like 0.0.0.0:8080 (port 0 lets the system choose)")
            }
            overridden["UNLEASHED_WEB"] = web
        }
        let environment = overridden
        let scope: DaemonConfiguration.Scope = system ? .system : .user
        let files = file.map { [$0] } ?? DaemonConfiguration.files(scope: scope, environment: environment)
        let load: @Sendable () throws(ConfigurationError) -> DaemonConfiguration = {
            try DaemonConfiguration.load(files: files, environment: environment, scope: scope, requireFiles: file != nil)
        }
        self.files = files
        self.load = load
        do {
            configuration = try load()
        } catch {
            throw .configuration(error.description)
        }
        do throws(HostClockTestSeam.Failure) {
            testHostClock = try HostClockTestSeam.source(environment: given)
        } catch {
            throw .configuration(error.description)
        }
    }

    /// The `[mqtt]` table's broker, where `unleashed fleet` finds the daemons; nil when the
    /// configuration names none.
    public var fleetBroker: FleetClient.Broker? {
        let mqtt = configuration.mqtt
        return mqtt.broker.map { address in
            FleetClient.Broker(address: address, username: mqtt.username, password: mqtt.password, caFile: mqtt.caFile, topicPrefix: mqtt.topicPrefix)
        }
    }

    /// What the daemon would refuse as it starts, short of binding its socket: a file in the
    /// socket's place, TCP without tokens.
    public func check() throws(DaemonLaunchError) {
        do throws(ControlServerError) {
            try ControlServer.check(configuration.service, hasTokens: AccessPolicy(configuration: configuration).hasTokens)
        } catch {
            throw .configuration(error.description)
        }
    }

    /// What the daemon would use, for `unleashed daemon --check`.
    public var summary: DaemonSummary {
        DaemonSummary(
            files: files.filter { FileManager.default.fileExists(atPath: $0) },
            socket: configuration.service.socket, listen: configuration.service.listen?.description,
            journal: configuration.service.journal, backend: configuration.backend.rawValue,
            modules: configuration.modules.map { .init(name: $0.name, address: $0.address) },
            tokens: configuration.tokens.map { .init(name: $0.name, role: $0.role.rawValue) },
            locked: configuration.service.locked,
            web: configuration.web.listen.map { (configuration.web.certificate == nil ? "http://" : "https://") + $0.description })
    }

    /// Runs the daemon until SIGTERM or Ctrl-C: the configured cameras (or, with `demo`, the
    /// simulator in their place), jobs, the control API. Log lines carry priority prefixes for
    /// systemd's journal. Simulated cameras are saved however it ends.
    public func run(demo: DemoOptions?, version: String) async throws(DaemonLaunchError) {
        LoggingSystem.bootstrap { label in JournaldLogHandler(label: label) }
        let logger = Logger(label: "unleashed.daemon")
        if testHostClock != nil {
            logger.warning("clock: the host's clock is played by the test file \(HostClockTestSeam.variable) names, not read from the system")
        }
        let cameras = DaemonCameras(demo: demo, clock: ContinuousClock())
        let service = DaemonService(configuration: configuration, version: version, cameras: cameras, reload: load,
                                    hostClock: testHostClock ?? .system, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            await cameras.simulated.save(logger: logger)
            throw .stopped("the daemon stopped: \(error)")
        }
        await cameras.simulated.save(logger: logger)
    }
}

/// Why a daemon did not start, or stopped.
public enum DaemonLaunchError: Error, Sendable, CustomStringConvertible {
    /// The configuration cannot be read or would be refused.
    case configuration(String)
    /// The service stopped with an error.
    case stopped(String)

    public var description: String {
        switch self {
        case .configuration(let message), .stopped(let message): message
        }
    }
}

/// What a daemon would use, as `unleashed daemon --check` shows it.
public struct DaemonSummary: Sendable, Equatable {
    public struct Module: Sendable, Equatable {
        public var name: String
        public var address: String

        public init(name: String, address: String) {
            self.name = name
            self.address = address
        }
    }

    public struct Token: Sendable, Equatable {
        public var name: String
        public var role: String

        public init(name: String, role: String) {
            self.name = name
            self.role = role
        }
    }

    /// The configuration files that exist, in the order read.
    public var files: [String]
    public var socket: String
    /// The TCP address it also listens on, if any.
    public var listen: String?
    public var journal: String
    public var backend: String
    public var modules: [Module]
    public var tokens: [Token]
    public var locked: Bool
    /// Where the web app is served, if anywhere.
    public var web: String?
}
