import ArgumentParser
import Foundation
import UnleashedKit
import UnleashedProtocol

struct GeotagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geotag",
        abstract: "Give the camera a position to record in the pictures that follow.",
        discussion: """
            LAT and LON are decimal degrees (north and east positive), ALT metres above sea \
            level. Put -- before negative numbers: unleashed geotag -- -33.8568 151.2153 5
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("Latitude in degrees, -90 to 90.", valueName: "lat"))
    var latitude: String

    @Argument(help: ArgumentHelp("Longitude in degrees, -180 to 180.", valueName: "lon"))
    var longitude: String

    @Argument(help: ArgumentHelp("Altitude in metres.", valueName: "alt"))
    var altitude: String?

    func run() async throws {
        let options = options
        let position = GeoPosition(
            latitude: try number(latitude, "latitude"), longitude: try number(longitude, "longitude"),
            altitude: try altitude.map { try number($0, "altitude") },
            fixTime: UInt64(Date().timeIntervalSince1970 * 1000))
        if let problem = position.problem { throw options.fail(code: "invalidArgument", problem, status: .usage) }
        try await options.withCamera { camera throws(CameraError) in
            try await camera.geotag(position)
            var json: [String: JSONValue] = ["latitude": .number(position.latitude), "longitude": .number(position.longitude)]
            json["altitude"] = position.altitude.map(JSONValue.number)
            options.emit(.object(json)) {
                "Position set: \(position.latitude), \(position.longitude)" + (position.altitude.map { ", \($0) m" } ?? "")
            }
        }
    }

    private func number(_ text: String, _ what: String) throws -> Double {
        guard let value = Double(text), value.isFinite else {
            throw options.fail(code: "invalidArgument", "\(what) '\(text)' is not a number", status: .usage)
        }
        return value
    }
}
