import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import UnleashedApp
import UnleashedKit

struct TimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "time",
        abstract: "Set the camera's clock.",
        subcommands: [Sync.self]
    )

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Set the camera's clock to this host's time and time zone offset (the daemon's time, through a daemon)."
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        func run() async throws {
            let options = options
            let time = WallTime(await options.commandClock().now, in: .current)
            try await options.withCamera { camera throws(CameraError) in
                try await camera.setTime(time)
                let stamp = Output.timestamp(time.unixMilliseconds)
                options.emit(["utcTime": .string(stamp), "utcOffsetMinutes": .integer(Int64(time.utcOffsetMinutes))]) {
                    "Camera clock set to \(stamp) (UTC offset \(time.offsetText))"
                }
            }
        }
    }
}
