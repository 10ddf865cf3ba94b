import ArgumentParser
import CommandCore
import Foundation
import JSON
import UnleashedApp
import UnleashedKit
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

            With --web HOST:PORT (or web.listen) the daemon also serves the web app for a phone \
            in the field: open the address it prints, enter the pairing code it shows (or scan \
            its QR code); `unleashed web` makes more codes and lists or revokes paired browsers \
            (docs/web-app.md).
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Flag(help: "Run as the system service: the system configuration only, /run/unleashed and /var/lib/unleashed.")
    var system = false

    @Option(help: ArgumentHelp("Read this configuration file instead of the usual ones.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp(
        "Serve the web app for phones on this address (0.0.0.0:8080 for the whole network, port 0 for any free port); overrides web.listen.",
        valueName: "host:port"))
    var web: String?

    @Flag(help: "Check the configuration and what the daemon would refuse at start (a file in the socket's place, TCP without tokens), print what it would use, and exit.")
    var check = false

    func run() async throws {
        let launch: DaemonLaunch
        do throws(DaemonLaunchError) {
            launch = try DaemonLaunch(system: system, file: config, environment: ProcessInfo.processInfo.environment, web: web)
            if check { try launch.check() }
        } catch {
            throw options.fail(code: "configuration", error.description, status: .usage)
        }
        if check {
            let summary = launch.summary
            options.emit(Self.json(summary)) { Self.text(summary) }
            return
        }
        let demo: DemoOptions? = options.demoMode ? try options.demoOptions() : nil
        do throws(DaemonLaunchError) {
            try await launch.run(demo: demo, version: Unleashed.version)
        } catch {
            throw options.fail(code: "daemon", error.description, status: .unavailable)
        }
    }

    static func json(_ summary: DaemonSummary) -> JSONValue {
        .object([
            "files": .array(summary.files.map(JSONValue.string)),
            "socket": .string(summary.socket),
            "journal": .string(summary.journal),
            "backend": .string(summary.backend),
            "modules": .array(summary.modules.map { .object(["name": .string($0.name), "address": .string($0.address)]) }),
            "tokens": .array(summary.tokens.map { .object(["name": .string($0.name), "role": .string($0.role)]) }),
            "locked": .bool(summary.locked),
            "listen": summary.listen.map { .string($0) } ?? .null,
            "web": summary.web.map { .string($0) } ?? .null,
        ])
    }

    static func text(_ summary: DaemonSummary) -> String {
        """
        Configuration: \(summary.files.isEmpty ? "no file, defaults" : summary.files.joined(separator: ", "))
        Socket: \(summary.socket)\(summary.listen.map { ", TCP \($0)" } ?? "")
        Journal: \(summary.journal)
        Backend: \(summary.backend)
        Modules: \(summary.modules.isEmpty ? "none" : summary.modules.map { "\($0.name) (\($0.address))" }.joined(separator: ", "))
        Tokens: \(summary.tokens.isEmpty ? "none" : summary.tokens.map { "\($0.name) (\($0.role))" }.joined(separator: ", "))
        Locked: \(summary.locked ? "yes" : "no")
        Web app: \(summary.web ?? "off")
        """
    }
}
