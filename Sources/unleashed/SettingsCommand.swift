import ArgumentParser
import UnleashedKit
import UnleashedProtocol

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List, read and change camera settings.",
        discussion: "Settings: \(SettingID.userNames.joined(separator: ", ")).",
        subcommands: [List.self, Get.self, Set.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every setting, its value and the values the camera offers.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.withCamera { camera throws(CameraError) in
                let settings = try await camera.settings()
                options.emit(.array(settings.map(json))) {
                    settings.map(human).joined(separator: "\n")
                }
            }
        }

        private func json(_ descriptor: SettingDescriptor) -> JSONValue {
            [
                "setting": .string(descriptor.setting.userName),
                "value": .string(descriptor.value.text),
                "choices": .array(descriptor.choices.map { .string($0.text) }),
                "readOnly": .bool(descriptor.readOnly),
            ]
        }

        private func human(_ descriptor: SettingDescriptor) -> String {
            let name = descriptor.setting.userName.padding(toLength: 22, withPad: " ", startingAt: 0)
            let value = descriptor.value.text.padding(toLength: 10, withPad: " ", startingAt: 0)
            let choices = descriptor.choices.map(\.text)
            let offered = choices.count > 8
                ? "\(choices.prefix(3).joined(separator: ", ")) ... \(choices.suffix(2).joined(separator: ", ")) (\(choices.count) values)"
                : choices.joined(separator: ", ")
            return name + value + (descriptor.readOnly ? "read-only" : offered)
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one setting's value.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The setting: \(SettingID.userNames.joined(separator: ", ")).")
        var name: String

        func run() async throws {
            try await options.withCamera { camera throws(CameraError) in
                guard let setting = SettingID(userName: name) else { throw .unknownSetting(name) }
                let value = try await camera.value(of: setting)
                options.emit(["setting": .string(setting.userName), "value": .string(value.text)]) {
                    "\(setting.userName) \(value.text)"
                }
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a setting.",
            discussion: """
                Values are written as the camera shows them: iso 800 or auto; shutter-speed 1/250, \
                0.5s, 30s or bulb; aperture f/5.6; exposure-compensation +1/3, -2/3 or +0.7. A value \
                the camera does not offer is refused and the nearest offered values are named.
                """
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The setting: \(SettingID.userNames.joined(separator: ", ")).")
        var name: String

        @Argument(parsing: .allUnrecognized, help: "The new value; negative values need no quoting (-2/3).")
        var value: [String] = []

        func validate() throws {
            guard !value.isEmpty else { throw ValidationError("Missing the new value, e.g. 'settings set iso 800'.") }
        }

        func run() async throws {
            try await options.withCamera { camera throws(CameraError) in
                guard let setting = SettingID(userName: name) else { throw .unknownSetting(name) }
                let wanted = try camera.parse(value.joined(separator: " "), for: setting)
                let applied = try await camera.set(wanted)
                options.emit(["setting": .string(setting.userName), "value": .string(applied.text)]) {
                    "\(setting.userName) set to \(applied.text)"
                }
            }
        }
    }
}
