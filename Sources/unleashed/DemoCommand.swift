import ArgumentParser
import CameraKit
import CommandCore
import UnleashedApp
import UnleashedKit

/// `unleashed demo`: looking after demo mode's simulated cameras.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Look after the simulated camera of demo mode.",
        subcommands: [Reset.self]
    )

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset",
            abstract: "Put a fresh simulated camera in place of demo mode's: switched on, battery, card and settings as new.",
            discussion: """
                The simulated camera keeps its state between commands, as a real camera would: once \
                it is off (after a poweroff fault), its battery flat or its card full, it stays so. \
                This replaces it with a new camera of the same body, or of the one --demo-profile \
                names. With --camera (repeated), --group or --all, the simulated cameras of a rig are \
                replaced instead.

                A daemon started with --demo holds its simulated cameras and saves them when it \
                stops; stop it first, reset, and start it again.
                """
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        func run() async throws {
            let daemon = options.socketDaemon()
            try await options.reporting { () async throws(CameraFailure) in try await CameraDemoReset.refuseWhileHeld(by: daemon) }
            let profile = try options.demoOptions().profile
            let named = rig.isRig ? try await rig.names(options, daemon: nil) : []
            let replaced = try options.reporting { () throws(CameraFailure) in try CameraDemoReset.reset(named, profile: profile) }
            options.emit(CameraDemoReset.json(replaced, rig: !named.isEmpty)) {
                replaced.map { (($0.name.map { "\($0): " } ?? "") + "a new \($0.camera.profile.model), \($0.camera.power), "
                    + "battery \($0.camera.battery)%, \(English.counting($0.camera.shotsRemaining, "shot")) left, settings as new (\($0.file.path))")
                }.joined(separator: "\n")
            }
        }
    }
}
