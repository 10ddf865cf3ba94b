import ArgumentParser
import UnleashedKit
import UnleashedProtocol

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the module, the camera, its card and its main settings."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.withCamera { camera throws(CameraError) in
            let status = try await camera.status()
            let settings = status.cameraPower == .on ? try await camera.settings() : []
            let identity = camera.identity
            options.emit(json(identity, status, settings)) { human(identity, status, settings) }
        }
    }

    private func json(_ identity: ModuleIdentity, _ status: CameraStatus, _ settings: [SettingDescriptor]) -> JSONValue {
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
        return [
            "module": [
                "firmware": .string(identity.firmwareVersion),
                "protocolVersion": .integer(Int64(identity.protocolVersion)),
                "battery": .integer(Int64(status.moduleBattery)),
                "capabilities": .array(identity.capabilities.names.map(JSONValue.string)),
                "shotCounter": .integer(Int64(status.shotCounter)),
            ],
            "camera": .object(cameraMembers),
            "settings": .object(Dictionary(uniqueKeysWithValues: settings.map { ($0.setting.userName, JSONValue.string($0.value.text)) })),
        ]
    }

    private func human(_ identity: ModuleIdentity, _ status: CameraStatus, _ settings: [SettingDescriptor]) -> String {
        var lines = [
            "Module    firmware \(identity.firmwareVersion), protocol v\(identity.protocolVersion), battery \(status.moduleBattery)%, "
                + "\(status.shotCounter) shots triggered",
            "Camera    \(identity.cameraModel ?? "none attached"), \(status.cameraPower), battery \(Output.percent(status.cameraBattery))"
                + (status.busy ? ", busy" : ", ready"),
        ]
        if let storage = status.storage {
            lines.append("Card      \(storage)" + (status.shotsRemaining.map { ", \($0) shots remaining" } ?? ""))
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
