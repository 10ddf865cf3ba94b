import ArgumentParser
import CameraKit
import GPhoto2
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the link, the module, the camera, its card and its main settings.",
        discussion: """
            The first line is a status bar: link, module battery, camera battery, shots left on \
            the card and the metered EV. The lines after it give the details.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        try await options.withCamera { camera throws(CameraError) in
            let status = try await camera.status()
            let settings = status.cameraPower == .on ? try await camera.settings() : []
            let identity = camera.identity
            let tethered = camera is GPhoto2Camera
            options.emit(json(identity, status, settings, tethered: tethered)) { human(identity, status, settings, tethered: tethered) }
        }
    }

    private func json(_ identity: CameraIdentity, _ status: CameraStatus, _ settings: [SettingDescriptor], tethered: Bool) -> JSONValue {
        var cameraMembers: [String: JSONValue] = [
            "model": identity.cameraModel.map(JSONValue.string) ?? .null,
            "power": .string(status.cameraPower.description),
            "busy": .bool(status.busy),
        ]
        cameraMembers["battery"] = status.cameraBattery.map { .integer(Int64($0)) }
        cameraMembers["storage"] = status.storage.map { .string($0.description) }
        cameraMembers["shotsRemaining"] = status.shotsRemaining.map { .integer(Int64($0)) }
        cameraMembers["exposureMode"] = status.exposureMode.map { .string($0.description) }
        cameraMembers["meteredEV"] = status.meteredEV.map { .string($0.text) }
        var moduleMembers: [String: JSONValue] = [
            "name": .string(identity.name),
            "capabilities": .array(identity.capabilities.names.map(JSONValue.string)),
            "shotCounter": .integer(Int64(status.shotCounter)),
        ]
        moduleMembers["firmware"] = identity.firmwareVersion.map(JSONValue.string)
        moduleMembers["protocolVersion"] = identity.protocolVersion.map { .integer(Int64($0)) }
        moduleMembers["battery"] = status.moduleBattery.map { .integer(Int64($0)) }
        var members: [String: JSONValue] = [
            "connection": .string(status.connection.phase.rawValue),
            "backend": .string(tethered ? BackendChoice.gphoto2.rawValue : BackendChoice.unleashed.rawValue),
            "camera": .object(cameraMembers),
            "settings": .object(Dictionary(uniqueKeysWithValues: settings.map { ($0.setting.userName, JSONValue.string($0.value.text)) })),
        ]
        if tethered {
            cameraMembers["port"] = .string(identity.name)
            cameraMembers["capabilities"] = moduleMembers["capabilities"]
            cameraMembers["shotsThisSession"] = .integer(Int64(status.shotCounter))
            members["camera"] = .object(cameraMembers)
        } else {
            members["module"] = .object(moduleMembers)
        }
        return .object(members)
    }

    private func human(_ identity: CameraIdentity, _ status: CameraStatus, _ settings: [SettingDescriptor], tethered: Bool) -> String {
        let style = Output.style
        let linkUp = status.connection == .ready
        var bar = [
            style.paint(linkUp ? "● connected" : "○ \(status.connection)", linkUp ? .green : .red),
            "camera \(status.cameraPower == .on ? Output.percent(status.cameraBattery) : status.cameraPower.description)",
        ]
        if !tethered { bar.insert("module \(Output.percent(status.moduleBattery))", at: 1) }
        if let left = status.shotsRemaining {
            bar.append(style.paint("\(English.counting(left, "shot")) left", status.storage == .full ? .red : .plain))
        }
        if let ev = status.meteredEV { bar.append("EV \(Output.ev(ev))") }
        var lines = [
            bar.joined(separator: "  "),
            tethered
                ? "Port      \(identity.name) (libgphoto2), \(English.counting(status.shotCounter, "shot")) this session"
                : "Module    \(identity.name), firmware \(identity.firmwareVersion ?? "unknown"), protocol v\(identity.protocolVersion.map(String.init) ?? "?"), "
                    + "battery \(Output.percent(status.moduleBattery)), \(English.counting(status.shotCounter, "shot")) triggered",
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
}
