public import CameraKit
public import Foundation
import UnleashedKit

extension GeoPosition {
    /// The position `geotag` is given: a latitude, a longitude and optionally an altitude, as
    /// written (a negative number reads like an option, so the words come unparsed), fixed
    /// `now`. A word that is neither a number nor `--` is refused as an unknown option.
    public init(words: [String], now: Date) throws(PlanRefusal) {
        let given = words.filter { $0 != "--" }
        guard (2...3).contains(given.count) else {
            throw PlanRefusal("geotag takes a latitude, a longitude and optionally an altitude, e.g. unleashed geotag -33.8568 151.2153 5")
        }
        self.init(latitude: try Self.number(given[0], "latitude"), longitude: try Self.number(given[1], "longitude"),
                  altitude: try given.count == 3 ? Self.number(given[2], "altitude") : nil,
                  fixTime: UInt64(now.timeIntervalSince1970 * 1000))
        if let problem { throw PlanRefusal(problem, code: "invalidArgument") }
    }

    private static func number(_ text: String, _ what: String) throws(PlanRefusal) -> Double {
        if text.hasPrefix("-"), !SignedArguments.isNegativeNumber(text) {
            throw PlanRefusal("unknown option '\(text)'; `unleashed geotag --help` lists the options")
        }
        guard let value = Double(text), value.isFinite else { throw PlanRefusal("\(what) '\(text)' is not a number", code: "invalidArgument") }
        return value
    }
}

extension WallTime {
    /// The time `now` in `zone`, as `time sync` sets the camera's clock.
    public init(_ now: Date, in zone: TimeZone) {
        self.init(unixMilliseconds: UInt64(now.timeIntervalSince1970 * 1000), utcOffsetMinutes: zone.secondsFromGMT(for: now) / 60)
    }

    /// The offset as written after a time: `+02:00`, `-05:30`.
    public var offsetText: String {
        let minutes = abs(utcOffsetMinutes)
        return (utcOffsetMinutes < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
