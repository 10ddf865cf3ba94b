import ArgumentParser
import UnleashedKit
import UnleashedProtocol

struct ShootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shoot",
        abstract: "Take a picture and wait until the camera reports it.",
        discussion: "Prints the shot counter and the time from trigger to the camera's report."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.withCamera { camera throws(CameraError) in
            let shot = try await camera.shoot()
            var json: [String: JSONValue] = [
                "counter": .integer(Int64(shot.counter)),
                "latencyMs": .integer(shot.latency.wholeMilliseconds),
            ]
            json["cameraTime"] = shot.cameraTime.map { .string(Output.timestamp($0)) }
            options.emit(.object(json)) {
                "Shot \(shot.counter) taken, reported \(shot.latency.wholeMilliseconds) ms after the trigger"
                    + (shot.cameraTime.map { " (camera time \(Output.timestamp($0)))" } ?? "")
            }
        }
    }
}
