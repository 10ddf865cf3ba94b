import ArgumentParser
import CommandCore
import DaemonClient
import Foundation
import UnleashedApp
import UnleashedKit

@main
struct Unleashed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unleashed",
        abstract: "Remote-control a camera through an Unleashed Bluetooth module, or one on USB through libgphoto2.",
        discussion: """
            Without hardware, add --demo (or set UNLEASHED_DEMO=1) to use the built-in simulator: a \
            simulated module and camera that speak the same protocol over a simulated radio. The \
            simulated camera keeps its settings and shot count between runs in \
            ~/.local/state/unleashed/demo-camera.json (or $UNLEASHED_DEMO_STATE).

            With a module: `unleashed scan` lists the modules in range, `unleashed connect` pairs \
            with one, checks it and remembers it; every other command then uses it (or the one \
            named by --module). Bluetooth goes through BlueZ on the system bus \
            ($DBUS_SYSTEM_BUS_ADDRESS points elsewhere, e.g. at `unleashed-sim bluez`).

            With a camera on USB instead: `unleashed cameras` lists what libgphoto2 finds, and \
            --backend gphoto2 (or UNLEASHED_BACKEND=gphoto2) makes every camera command and \
            time-lapse use it; --port picks one (usb:BUS,DEV, or ptpip:HOST for a camera on the \
            network), --camera-model MODEL opens one libgphoto2 does not find by the model's name \
            (`gphoto2 --list-cameras`), --download FOLDER copies each picture taken (see \
            docs/usb-cameras.md).

            Exit status:
              0   success
              64  bad command line, setting name or value
              65  the camera refused the value or the request
              69  no module or camera, or the link to it failed
              70  internal error
              75  the camera is busy; try again
              77  not allowed: the camera device's permissions, or the daemon's token, role or locked mode
              130 stopped by Ctrl-C (what was started is ended: a bulb is closed, video stopped)
              143 a time-lapse stopped by SIGTERM (cleanly, as after Ctrl-C)

            Durations are written like 250ms, 30s, 0.5s, 1m30s or 2h; times of day like 06:30.

            Every command also takes the global options, before or after its name: --demo, \
            --json, --module, --backend and more. Each command's help leaves them out; \
            `unleashed help options` describes them all.
            """,
        version: Unleashed.version,
        subcommands: [
            StatusCommand.self, WatchCommand.self, SettingsCommand.self, FocusCommand.self, ReleaseCommand.self,
            ShootCommand.self, BulbCommand.self, VideoCommand.self, TimeCommand.self, GeotagCommand.self,
            TimelapseCommand.self, RunsCommand.self,
            AdaptersCommand.self, ScanCommand.self, PairCommand.self, ConnectCommand.self, DisconnectCommand.self,
            ForgetCommand.self, CamerasCommand.self, DaemonCommand.self, JobsCommand.self, AttachCommand.self, StopCommand.self,
            WebCommand.self, FleetCommand.self, DemoCommand.self, DoctorCommand.self, OptionsCommand.self,
        ]
    )

    /// The version the daemon reports in `GET /v1/status` and `--version` prints.
    static let version = "0.7.0"

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
}

extension Unleashed {
    /// Parses the command line and runs the command. A command line that does not parse is
    /// reported like every other error: on standard error, or with --json as an `{"error": ...}`
    /// object on standard output; a negative number that read as an option says how to write it.
    ///
    /// A shot through the daemon is taken first, before anything is parsed (``QuickShoot``).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let environment = ProcessInfo.processInfo.environment
        if let shoot = QuickShoot(arguments: arguments, environment: environment),
           let client = DaemonClient.commands(environment: environment),
           let status = await shoot.run(client) {
            Foundation.exit(status)
        }
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            report(error, arguments: arguments)
        }
    }

    private static func report(_ error: any Error, arguments: [String]) -> Never {
        let status = exitCode(for: error)
        // Help, --version, and the commands' own errors (already reported) are left as they are.
        if status == .success || error is ExitCode { exit(withError: error) }
        let message = message(for: error)
        let hint = SignedArguments.hint(for: arguments, program: "unleashed", optionMissingValue: CameraFailure.missingOption(in: message))
        if arguments.prefix(while: { $0 != "--" }).contains("--json") {
            Output.line(Output.json(CameraFailure.commandLine(message, hint: hint, usage: status == .validationFailure).json))
        } else {
            Output.note(fullMessage(for: error) + (hint.map { "\nHint: \($0)" } ?? ""))
        }
        Foundation.exit(status.rawValue)
    }
}

/// `unleashed options`, and `unleashed help options`: the options every command takes, which
/// each command's own help leaves out.
struct OptionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "options",
        abstract: "Describe the global options, which every command takes.",
        discussion: """
            They go before or after the command: `unleashed --demo status` and `unleashed status \
            --demo` are the same. --demo-sky, geotag and `settings set` take negative numbers as \
            they are; elsewhere a value that starts with '-' is joined to its option with '=' \
            (--demo-seed=-1), and an argument that starts with '-' comes after -- (unleashed runs \
            show -- -3).
            """
    )

    @OptionGroup(title: GlobalOptions.title) var options: GlobalOptions

    func run() {
        Output.line(Unleashed.helpMessage(for: Self.self))
    }
}
