import UnleashedApp
import CommandCore
import ArgumentParser
import CameraKit
import JSON
import UnleashedKit

struct BulbCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bulb",
        abstract: "Take one bulb exposure of the given length.",
        discussion: """
            DURATION is written like 250ms, 30s, 1m30s or 2h (1 ms to 24 h). The shutter speed \
            must be set to bulb first (unleashed settings set shutter-speed bulb). The module \
            times the exposure itself and closes the shutter at the end even if this host or the \
            link goes away. Ctrl-C closes the shutter early; the picture is still reported and \
            the exit status is 130. With --camera (repeated), --group or --all, every camera of \
            the rig opens its shutter at once.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @OptionGroup(title: "Rig") var rig: RigOptions

    @Argument(help: ArgumentHelp("How long the shutter stays open.", valueName: "duration"))
    var duration: String

    func run() async throws {
        let length = try options.duration(duration, for: "bulb")
        try await options.onEachCamera(rig, clock: ("Bulb", length), { camera throws(CameraError) in try await camera.bulb(length) },
                                       json: Self.json, human: Self.human) { exposure throws(CameraError) in
            if exposure.ending == .stoppedEarly { throw .cancelled }
        }
    }

    static func json(_ exposure: BulbExposure) -> JSONValue {
        var json: [String: JSONValue] = [
            "counter": .integer(Int64(exposure.shot.counter)),
            "ending": .string(exposure.ending.rawValue),
        ]
        json["exposedMs"] = exposure.exposed.map { .integer($0.wholeMilliseconds) }
        json["cameraTime"] = exposure.shot.cameraTime.map { .string(Output.timestamp($0)) }
        return .object(json)
    }

    static func human(_ exposure: BulbExposure) -> String {
        let length = exposure.exposed.map { "\(RunReport.clock($0)) " } ?? ""
        let how = exposure.ending == .deadline ? "closed by the module at the deadline" : "stopped early"
        return "Bulb exposure \(length)\(how); shot \(exposure.shot.counter)"
    }
}
