import ArgumentParser
import CameraKit
import CommandCore
import UnleashedApp
import UnleashedKit

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List, read and change camera settings.",
        discussion: """
            Settings: \(SettingID.userNames.joined(separator: ", ")). With --backend gphoto2, any other \
            setting the camera has is reached by its libgphoto2 path or name (e.g. \
            /main/settings/capturetarget or capturetarget); `settings list --all` lists them.
            """,
        subcommands: [List.self, Get.self, Set.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List every setting, its value and the values the camera offers.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Flag(help: "With --backend gphoto2: every setting the camera has, by its libgphoto2 path.")
        var all = false

        func run() async throws {
            let all = all
            try await options.withCamera { camera throws(CameraError) in
                let listing = try await SettingsListing.read(all: all, on: camera)
                options.emit(listing.json) { listing.lines.joined(separator: "\n") }
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print one setting's value.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Argument(help: "The setting: \(SettingID.userNames.joined(separator: ", ")).")
        var name: String

        func run() async throws {
            try await options.withCamera { camera throws(CameraError) in
                let answer = try await SettingsAnswer.read(name, on: camera)
                options.emit(answer.json) {
                    switch answer {
                    case .setting(let setting, let value): "\(setting.userName) \(value.text)"
                    case .widget(let widget): "\(widget.path) \(widget.value ?? "")"
                    }
                }
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Change a setting.",
            discussion: """
                Values are written as the camera shows them: iso 800 or auto; shutter-speed 1/250, \
                0.5s, 30s or bulb; aperture f/5.6; exposure-compensation +1/3, -2/3 or +0.7. A value \
                the camera does not offer is refused and the nearest offered values are named.

                With --camera (repeated), --group or --all, every camera of the rig is checked first: \
                if one lacks the setting or does not offer the value, none is changed and each refusal \
                is named (exit status 65).
                """
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        @Argument(help: "The setting: \(SettingID.userNames.joined(separator: ", ")).")
        var name: String

        @Argument(parsing: .allUnrecognized, help: "The new value; negative values need no quoting (-2/3).")
        var value: [String] = []

        func validate() throws {
            guard !value.isEmpty else { throw ValidationError("Missing the new value, e.g. 'settings set iso 800'.") }
        }

        func run() async throws {
            let text = value.joined(separator: " ")
            if rig.isRig {
                let name = name
                try await options.withRig(rig) { rig throws(ExitCode) in try await Self.set(name, text, on: rig, options: options) }
                return
            }
            try await options.withCamera { camera throws(CameraError) in
                let answer = try await SettingsAnswer.change(name, to: text, on: camera)
                options.emit(answer.json) {
                    switch answer {
                    case .setting(let setting, let value): "\(setting.userName) set to \(value.text)"
                    case .widget(let widget): "\(widget.path) set to \(widget.value ?? text)"
                    }
                }
            }
        }
    }
}

/// How a libgphoto2 setting (a widget) is printed.
extension SettingsCommand.Set {
    /// The rig's change: all cameras or none.
    static func set(_ name: String, _ text: String, on rig: Rig, options: GlobalOptions) async throws(ExitCode) {
        let change = try await options.reporting { () async throws(CameraFailure) in try await SettingsRigChange.apply(name, text, on: rig) }
        options.emit(change.json) {
            change.applied.map { "\($0.name): \(change.setting.userName) set to \($0.inEffect.text)" }.joined(separator: "\n")
        }
    }
}
