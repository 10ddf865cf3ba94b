import ArgumentParser
import CameraKit
import DaemonClient
import Foundation
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// `unleashed demo`: looking after demo mode's simulated cameras.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Look after the simulated camera of demo mode.",
        subcommands: [Reset.self]
    )

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
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
            let options = options
            try await refuseWhileDaemonHoldsSimulator()
            let profile = try options.demoOptions().profile
            let named = rig.isRig ? try await rig.names(options, daemon: nil) : []
            let files: [(name: String?, file: URL)] = named.isEmpty
                ? [(nil, Demo.defaultStateFile())] : named.map { ($0, GlobalOptions.demoStateFile(for: $0)) }
            var entries: [JSONValue] = []
            var lines: [String] = []
            for (name, file) in files {
                let camera: VirtualCamera
                do throws(DemoError) {
                    camera = try Demo.reset(stateFile: file, profile: profile)
                } catch {
                    throw options.fail(error)
                }
                var entry: [String: JSONValue] = [
                    "stateFile": .string(file.path), "profile": .string(camera.profile.id), "model": .string(camera.profile.model),
                    "power": .string(camera.power.description), "battery": .integer(Int64(camera.battery)),
                    "shotsRemaining": .integer(Int64(camera.shotsRemaining)),
                ]
                entry["camera"] = name.map(JSONValue.string)
                entries.append(.object(entry))
                lines.append((name.map { "\($0): " } ?? "") + "a new \(camera.profile.model), \(camera.power), battery \(camera.battery)%, "
                    + "\(English.counting(camera.shotsRemaining, "shot")) left, settings as new (\(file.path))")
            }
            options.emit(named.isEmpty ? entries[0] : ["cameras": .array(entries)]) { lines.joined(separator: "\n") }
        }

        /// A daemon that holds simulated cameras would save its own over the fresh ones when it
        /// stops.
        private func refuseWhileDaemonHoldsSimulator() async throws(ExitCode) {
            guard let daemon = options.socketDaemon(),
                  let status = try? await daemon.status() else { return }
            let simulated = status.cameras.contains { $0.source.hasPrefix("simulated") }
            guard simulated else { return }
            throw options.fail(code: "daemonHoldsDemo", "the daemon holds the simulated cameras and saves them when it stops; "
                + "stop it, run `unleashed demo reset`, and start it again", status: .refused)
        }
    }
}
