import ArgumentParser
import CommandCore
import Doctor
import Foundation
import UnleashedAPI
import UnleashedApp

/// `unleashed doctor`: what is wrong with this machine's setup, each in plain words with what to
/// do. The checks and their words live in the Doctor library; this parses and prints.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine's setup and say what to fix.",
        discussion: """
            Checks, in order: the configuration files; BlueZ (running, its version); whether this \
            user may use BlueZ over D-Bus; the Bluetooth adapter (present, powered, not blocked by \
            rfkill); the configured and remembered modules (paired); libgphoto2's udev rules and \
            whether the daemon's user may open each camera on USB; the daemon (running, answering \
            this user on its socket); the journal's folder (writable, room on its disk for \
            --frames); the clock (synchronised, and whether a real-time clock keeps time while the \
            machine is off); the web listener's certificate (valid, not within 30 days of expiry); \
            the MQTT broker (reachable, accepting the daemon's session).

            Each line is ok, warning (works, but worth a look), problem (something will fail) or \
            skipped (not set up, so not checked), and says what to do. Bluetooth problems are only \
            warnings when the configuration's backend is gphoto2, and the reverse for USB.

            Without --system or --user, the system service is checked unless this user has a \
            configuration (~/.config/unleashed/config.toml) or a daemon's socket of their own: \
            the daemon the other commands would find. --adapter and --backend are taken over \
            the configuration's, as by the daemon.

            Exit status:
              0   nothing is wrong (every check ok or skipped)
              1   warnings only
              2   at least one problem
              64  bad command line
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Flag(help: "Check the system service: /etc/unleashed, the user unleashed, /run/unleashed and /var/lib/unleashed.")
    var system = false

    @Flag(help: "Check this user's own daemon (systemctl --user): ~/.config/unleashed/config.toml and its socket and journal.")
    var user = false

    @Option(help: ArgumentHelp("Read this configuration file instead of the usual ones.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The frames of the run being planned: the journal's disk must have room for them.", valueName: "count"))
    var frames: Int?

    func validate() throws {
        if system && user { throw ValidationError("--system and --user cannot be given together") }
        if let frames, frames < 1 { throw ValidationError("--frames must be 1 or more, not \(frames)") }
        if options.demo { throw ValidationError("doctor checks this machine's setup; --demo has none to check (the demo needs no setup)") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let systemScope = system || (!user && SystemInspection.systemServiceIsTheSetup(environment: environment))
        let inspection = SystemInspection(system: systemScope, environment: environment, configurationFiles: config.map { [$0] },
                                          plan: frames.map { PlannedFrames(frames: $0) }, adapter: options.adapter,
                                          backend: options.backend?.rawValue)
        let report = await inspection.examine()
        options.emit(report.json.merging(["scope": .string(systemScope ? "system" : "user")])) {
            human(report, system: systemScope)
        }
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }

    private func human(_ report: DoctorReport, system: Bool) -> String {
        let style = Output.style
        let width = Check.allCases.map(\.rawValue.count).max() ?? 0
        var lines = [system ? "The system service's setup:" : "This user's setup:"]
        for finding in report.findings {
            let mark = switch finding.status {
            case .ok: style.paint("ok     ", .green)
            case .warning: style.paint("warning", .yellow)
            case .problem: style.paint("problem", .red)
            case .skipped: "skipped"
            }
            let name = finding.check.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append("\(mark)  \(name)  \(finding.summary)")
            if let remedy = finding.remedy {
                lines.append(String(repeating: " ", count: 7 + 2 + width + 2) + "→ " + remedy)
            }
        }
        let counts = Finding.Status.allCases.reversed().compactMap { status -> String? in
            let count = report.findings.filter { $0.status == status }.count
            guard count > 0 else { return nil }
            return count == 1 || status == .ok || status == .skipped ? "\(count) \(status.rawValue)" : "\(count) \(status.rawValue)s"
        }
        lines.append(counts.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}
