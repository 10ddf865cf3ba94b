import ArgumentParser
import Daemon
import Foundation
import Logging
import ServiceLifecycle
import UnleashedApp
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Hold the cameras, run jobs, and serve the control API to the CLI and scripts.",
        discussion: """
            The daemon keeps the configured modules connected (a module accepts one central at a \
            time), runs time-lapse and video jobs itself so that they do not depend on a terminal, \
            and answers on a Unix socket: $XDG_RUNTIME_DIR/unleashed/control.sock for a user, \
            /run/unleashed/control.sock with --system. While it runs, every other command goes \
            through it (add --direct to bypass it).

            Configuration: /etc/unleashed/unleashed.toml, then ~/.config/unleashed/config.toml \
            (not with --system), then UNLEASHED_* variables; --config FILE reads that file instead \
            (docs/configuration.md). SIGHUP reads it again. SIGTERM or Ctrl-C stop the daemon \
            cleanly: running jobs are suspended (a bulb is closed first) and resumed at the next \
            start, the modules are disconnected.

            With --demo the daemon holds the built-in simulator instead of modules: one simulated \
            camera per configured module, or one named 'demo'. Each keeps its state in the file \
            demo mode keeps it in (`demo` that of `unleashed --demo`, the others those of \
            `unleashed --demo --camera NAME`), read at the start and saved when the daemon stops; \
            `unleashed demo reset` with the daemon stopped gives it fresh cameras.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Flag(help: "Run as the system service: the system configuration only, /run/unleashed and /var/lib/unleashed.")
    var system = false

    @Option(help: ArgumentHelp("Read this configuration file instead of the usual ones.", valueName: "file"))
    var config: String?

    @Flag(help: "Check the configuration and what the daemon would refuse at start (a file in the socket's place, TCP without tokens), print what it would use, and exit.")
    var check = false

    func run() async throws {
        let scope: DaemonConfiguration.Scope = system ? .system : .user
        let files = config.map { [$0] } ?? DaemonConfiguration.files(scope: scope, environment: ProcessInfo.processInfo.environment)
        let load: @Sendable () throws(ConfigurationError) -> DaemonConfiguration = {
            try DaemonConfiguration.load(files: files, environment: ProcessInfo.processInfo.environment, scope: scope,
                                         requireFiles: config != nil)
        }
        let configuration: DaemonConfiguration
        do {
            configuration = try load()
        } catch {
            throw options.fail(code: "configuration", error.description, status: .usage)
        }
        if check {
            // What the daemon would refuse as it starts, short of binding the socket.
            do throws(ControlServerError) {
                try ControlServer.check(configuration.service, hasTokens: AccessPolicy(configuration: configuration).hasTokens)
            } catch {
                throw options.fail(code: "configuration", error.description, status: .usage)
            }
            options.emit(Self.summary(configuration, files: files)) { Self.text(configuration, files: files) }
            return
        }
        // Priority prefixes when systemd's journal reads standard error, plain lines otherwise.
        LoggingSystem.bootstrap { label in JournaldLogHandler(label: label) }
        let logger = Logger(label: "unleashed.daemon")
        let demo: DemoOptions? = options.demoMode ? try options.demoOptions() : nil
        let cameras = DaemonCameras(demo: demo, clock: ContinuousClock())
        let service = DaemonService(configuration: configuration, version: Unleashed.version,
                                    cameras: cameras, reload: load, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            await cameras.simulated.save(logger: logger)
            throw options.fail(code: "daemon", "the daemon stopped: \(error)", status: .unavailable)
        }
        await cameras.simulated.save(logger: logger)
    }

    static func summary(_ configuration: DaemonConfiguration, files: [String]) -> JSONValue {
        .object([
            "files": .array(files.filter { FileManager.default.fileExists(atPath: $0) }.map(JSONValue.string)),
            "socket": .string(configuration.service.socket),
            "journal": .string(configuration.service.journal),
            "backend": .string(configuration.backend.rawValue),
            "modules": .array(configuration.modules.map { .object(["name": .string($0.name), "address": .string($0.address)]) }),
            "tokens": .array(configuration.tokens.map { .object(["name": .string($0.name), "role": .string($0.role.rawValue)]) }),
            "locked": .bool(configuration.service.locked),
            "listen": configuration.service.listen.map { .string($0.description) } ?? .null,
        ])
    }

    static func text(_ configuration: DaemonConfiguration, files: [String]) -> String {
        let read = files.filter { FileManager.default.fileExists(atPath: $0) }
        return """
            Configuration: \(read.isEmpty ? "no file, defaults" : read.joined(separator: ", "))
            Socket: \(configuration.service.socket)\(configuration.service.listen.map { ", TCP \($0)" } ?? "")
            Journal: \(configuration.service.journal)
            Backend: \(configuration.backend.rawValue)
            Modules: \(configuration.modules.isEmpty ? "none" : configuration.modules.map { "\($0.name) (\($0.address))" }.joined(separator: ", "))
            Tokens: \(configuration.tokens.isEmpty ? "none" : configuration.tokens.map(\.description).joined(separator: ", "))
            Locked: \(configuration.service.locked ? "yes" : "no")
            """
    }
}
