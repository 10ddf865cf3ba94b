import ArgumentParser
import CameraKit
import CommandCore
import DaemonClient
import UnleashedAPI
import UnleashedApp
import UnleashedKit

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the link, the module, the camera, its card and its main settings.",
        discussion: """
            The first line is a status bar: link, module battery, camera battery, shots left on \
            the card and the metered EV. The lines after it give the details; through the daemon, \
            the last says what clock the daemon goes by: the host's, synchronised or not, or a \
            phone's that the web app gave it (--json: hostClock, as GET /v1/clock answers).
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let hostClock = try? await options.daemonClient()?.clock()
        try await options.withCamera { camera throws(CameraError) in
            let report = try await CameraStatusReport.gather(camera)
            let json = hostClock.map { report.json.merging(["hostClock": $0.json]) } ?? report.json
            options.emit(json) {
                human(report.identity, report.status, report.settings, kind: report.kind)
                    + (hostClock.map { "\nClock     " + HostClockReport.text($0) } ?? "")
            }
        }
    }

    private func human(_ identity: CameraIdentity, _ status: CameraStatus, _ settings: [SettingDescriptor],
                       kind: CameraStatusReport.Kind) -> String {
        let style = Output.style
        let linkUp = status.connection == .ready
        var bar = [
            style.paint(linkUp ? "● connected" : "○ \(status.connection)", linkUp ? .green : .red),
            "camera \(status.cameraPower == .on ? Output.percent(status.cameraBattery) : status.cameraPower.description)",
        ]
        if kind == .module { bar.insert("module \(Output.percent(status.moduleBattery))", at: 1) }
        if let left = status.shotsRemaining {
            bar.append(style.paint("\(English.counting(left, "shot")) left", status.storage == .full ? .red : .plain))
        }
        if let ev = status.meteredEV { bar.append("EV \(Output.ev(ev))") }
        var lines = [
            bar.joined(separator: "  "),
            linkLine(identity, status, kind),
            "Camera    \(identity.cameraModel ?? "none attached"), \(status.cameraPower), battery \(Output.percent(status.cameraBattery))"
                + (status.busy ? ", busy" : ", ready"),
        ]
        if let storage = status.storage {
            lines.append("Card      \(storage)" + (status.shotsRemaining.map { ", \(English.counting($0, "shot")) left" } ?? ""))
        }
        if let mode = status.exposureMode {
            lines.append("Exposure  \(mode)" + (status.meteredEV.map { ", metered EV \(Output.ev($0))" } ?? ""))
        }
        if !settings.isEmpty {
            lines.append("Settings  " + settings.map { "\($0.setting.userName) \($0.value.text)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// The line about what links to the camera: the module, the port, or the camera's own remote.
    private func linkLine(_ identity: CameraIdentity, _ status: CameraStatus, _ kind: CameraStatusReport.Kind) -> String {
        let shots = English.counting(status.shotCounter, "shot")
        switch kind {
        case .tethered:
            return "Port      \(identity.name) (libgphoto2), \(shots) this session"
        case .bluetoothCamera(let brand):
            return "Remote    \(identity.name) (\(brand.displayName) over Bluetooth), \(shots) this session"
        case .module:
            return "Module    \(identity.name), firmware \(identity.firmwareVersion ?? "unknown"), "
                + "protocol v\(identity.protocolVersion.map(String.init) ?? "?"), battery \(Output.percent(status.moduleBattery)), \(shots) triggered"
        }
    }
}
