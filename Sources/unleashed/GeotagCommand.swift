import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import JSON
import UnleashedApp
import UnleashedKit

struct GeotagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geotag",
        abstract: "Give the camera a position to record in the pictures that follow.",
        discussion: """
            LAT and LON are decimal degrees (north and east positive), ALT metres above sea \
            level. Negative values are written as they are: unleashed geotag -33.8568 151.2153 5
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    // Every word the options leave, so that a negative latitude or longitude (which reads like
    // an option) is taken as the number it is.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "Latitude in degrees (-90 to 90), longitude in degrees (-180 to 180), and optionally altitude in metres.",
        valueName: "lat lon [alt]"))
    var words: [String] = []

    func run() async throws {
        let options = options
        let position: GeoPosition
        let now = await options.commandClock().now
        do throws(PlanRefusal) {
            position = try GeoPosition(words: words, now: now)
        } catch {
            throw options.fail(error)
        }
        try await options.withCamera { camera throws(CameraError) in
            try await camera.geotag(position)
            var json: [String: JSONValue] = ["latitude": .number(position.latitude), "longitude": .number(position.longitude)]
            json["altitude"] = position.altitude.map(JSONValue.number)
            options.emit(.object(json)) {
                "Position set: \(position.latitude), \(position.longitude)" + (position.altitude.map { ", \($0) m" } ?? "")
            }
        }
    }
}
