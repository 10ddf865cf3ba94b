import CameraKit
public import Foundation
import UnleashedKit
import UnleashedProtocol

/// The light of an open landscape through a day, as EV at ISO 100, from the sun's elevation:
/// full sun, the fall around sunset, civil (0° to −6°), nautical (to −12°) and astronomical
/// (to −18°) twilight, then a moonless night. A model for testing exposure ramps, not a
/// photometer: the points follow the usual exposure tables (EV 15 in full sun, about 11 with
/// the sun on the horizon, 3 to 4 at the end of civil twilight, about −7 for a landscape under
/// stars). Over a sunset it spans 22 stops.
public struct Daylight: Sendable {
    /// Sun elevation in degrees → EV at ISO 100, joined by straight lines.
    static let curve: [(elevation: Double, ev: Double)] = [
        (-18, -7), (-15, -5.5), (-12, -3.5), (-9, -0.5), (-6, 3.5), (-4, 6), (-2, 8.5), (0, 10.5),
        (2, 11.5), (5, 12.5), (10, 13.5), (20, 14.5), (30, 15),
    ]

    /// Where, and from when, the scene is lit.
    public var latitude: Double
    public var longitude: Double
    /// The moment the scene starts (elapsed zero), seconds since 1970 UTC.
    public var startUnixSeconds: Double
    /// How many stops passing clouds take away at most; zero for a clear sky.
    public var cloudStops: Double
    /// Makes the clouds differ from run to run, and repeat for the same seed.
    public var cloudSeed: UInt64

    public init(latitude: Double, longitude: Double, startUnixSeconds: Double, cloudStops: Double = 0, cloudSeed: UInt64 = 1) {
        self.latitude = latitude
        self.longitude = longitude
        self.startUnixSeconds = startUnixSeconds
        self.cloudStops = max(0, cloudStops)
        self.cloudSeed = cloudSeed
    }

    /// Reads a clear sky written `LAT,LON[,TIME]`: degrees, north and east positive, and the
    /// moment it starts from in ISO 8601 (`2026-06-21T19:00:00Z`), else `now`. The error says
    /// what was expected.
    public init(parsing text: String, now: Date = Date()) throws(DaylightParseError) {
        let parts = text.split(separator: ",", maxSplits: 2).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count >= 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
              (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw DaylightParseError("'\(text)' is not a place; write LAT,LON like 52.5,13.4 "
                + "(degrees, north and east positive), optionally ,2026-06-21T19:00:00Z")
        }
        var start = now
        if parts.count == 3 {
            guard let given = ISO8601DateFormatter().date(from: parts[2]) else {
                throw DaylightParseError("'\(parts[2])' is not a time; write it like 2026-06-21T19:00:00Z")
            }
            start = given
        }
        self.init(latitude: latitude, longitude: longitude, startUnixSeconds: start.timeIntervalSince1970)
    }

    /// The EV of a clear sky with the sun at `elevation` degrees.
    public static func clearSkyEV(sunElevation elevation: Double) -> Double {
        guard let first = curve.first, let last = curve.last else { return 0 }
        if elevation <= first.elevation { return first.ev }
        if elevation >= last.elevation { return last.ev }
        let upper = curve.firstIndex { $0.elevation >= elevation } ?? curve.count - 1
        let (low, high) = (curve[upper - 1], curve[upper])
        return low.ev + (elevation - low.elevation) / (high.elevation - low.elevation) * (high.ev - low.ev)
    }

    /// The sun `elapsed` after the start.
    public func sun(at elapsed: Duration) -> SolarPosition {
        SolarPosition(unixSeconds: startUnixSeconds + elapsed.seconds, latitude: latitude, longitude: longitude)
    }

    /// The scene's EV `elapsed` after the start, clouds included.
    public func ev(at elapsed: Duration) -> Double {
        Self.clearSkyEV(sunElevation: sun(at: elapsed).elevation) - clouds(at: elapsed.seconds)
    }

    /// As the simulated camera's meter sees it.
    public var sceneLight: SceneLight {
        let model = self
        return SceneLight { elapsed in ExposureStops(twentyFourths: Int32((model.ev(at: elapsed) * 24).rounded())) }
    }

    /// Smooth cloud cover: a random darkening every five minutes, eased from one to the next.
    private func clouds(at seconds: Double) -> Double {
        guard cloudStops > 0 else { return 0 }
        let knot = 300.0
        let index = (seconds / knot).rounded(.down)
        let fraction = seconds / knot - index
        let eased = (1 - cos(fraction * .pi)) / 2
        let from = noise(Int64(index)), to = noise(Int64(index) + 1)
        return cloudStops * (from + (to - from) * eased)
    }

    /// A value in 0…1 fixed by the seed and the knot (SplitMix64).
    private func noise(_ knot: Int64) -> Double {
        var z = cloudSeed &+ UInt64(bitPattern: knot) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}

/// Why a sky given as text could not be read.
public struct DaylightParseError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) { self.description = description }
}
