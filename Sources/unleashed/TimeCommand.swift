import ArgumentParser
import CameraKit
import Foundation
import UnleashedKit
import UnleashedProtocol

struct TimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "time",
        abstract: "Set the camera's clock.",
        subcommands: [Sync.self]
    )

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the camera's clock to this host's time and time zone offset."
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        func run() async throws {
            let options = options
            let now = Date()
            let offsetMinutes = TimeZone.current.secondsFromGMT(for: now) / 60
            let time = WallTime(unixMilliseconds: UInt64(now.timeIntervalSince1970 * 1000), utcOffsetMinutes: offsetMinutes)
            try await options.withCamera { camera throws(CameraError) in
                try await camera.setTime(time)
                let stamp = Output.timestamp(time.unixMilliseconds)
                options.emit(["utcTime": .string(stamp), "utcOffsetMinutes": .integer(Int64(offsetMinutes))]) {
                    "Camera clock set to \(stamp) (UTC offset \(Self.offset(offsetMinutes)))"
                }
            }
        }

        static func offset(_ minutes: Int) -> String {
            String(format: "%@%02d:%02d", minutes < 0 ? "-" : "+", abs(minutes) / 60, abs(minutes) % 60)
        }
    }
}
