import Foundation

/// Where the sun stands in the sky for a place and a moment, by the NOAA solar calculator's
/// equations (after Jean Meeus, *Astronomical Algorithms*): good to about a hundredth of a
/// degree between 1800 and 2100, far finer than the light model built on it needs.
public struct SolarPosition: Sendable, Equatable {
    /// Degrees above the horizon, refraction included; negative below it.
    public var elevation: Double
    /// Degrees clockwise from north.
    public var azimuth: Double

    /// - Parameters:
    ///   - unixSeconds: the moment, seconds since 1970-01-01 UTC.
    ///   - latitude: degrees north (south negative).
    ///   - longitude: degrees east (west negative).
    public init(unixSeconds: Double, latitude: Double, longitude: Double) {
        let julianDay = unixSeconds / 86_400 + 2_440_587.5
        let t = (julianDay - 2_451_545) / 36_525
        let meanLongitude = (280.46646 + t * (36_000.76983 + t * 0.0003032)).truncatingRemainder(dividingBy: 360)
        let meanAnomaly = 357.52911 + t * (35_999.05029 - 0.0001537 * t)
        let eccentricity = 0.016708634 - t * (0.000042037 + 0.0000001267 * t)
        let m = Self.radians(meanAnomaly)
        let centre = sin(m) * (1.914602 - t * (0.004817 + 0.000014 * t)) + sin(2 * m) * (0.019993 - 0.000101 * t)
            + sin(3 * m) * 0.000289
        let omega = Self.radians(125.04 - 1934.136 * t)
        let apparentLongitude = Self.radians(meanLongitude + centre - 0.00569 - 0.00478 * sin(omega))
        let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
        let obliquity = Self.radians(meanObliquity + 0.00256 * cos(omega))
        let declination = asin(sin(obliquity) * sin(apparentLongitude))

        let y = pow(tan(obliquity / 2), 2)
        let l0 = Self.radians(meanLongitude)
        let equationOfTimeMinutes = 4 * Self.degrees(y * sin(2 * l0) - 2 * eccentricity * sin(m)
            + 4 * eccentricity * y * sin(m) * cos(2 * l0) - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m))
        let minutesOfDay = (unixSeconds / 60).truncatingRemainder(dividingBy: 1440)
        let trueSolarMinutes = (minutesOfDay + equationOfTimeMinutes + 4 * longitude).truncatingRemainder(dividingBy: 1440)
        let hourAngle = Self.radians(trueSolarMinutes / 4 - 180)

        let phi = Self.radians(latitude)
        let cosZenith = min(1, max(-1, sin(phi) * sin(declination) + cos(phi) * cos(declination) * cos(hourAngle)))
        let zenith = acos(cosZenith)
        let geometric = 90 - Self.degrees(zenith)
        elevation = geometric + Self.refraction(atElevation: geometric)

        let azimuthCos = (sin(phi) * cosZenith - sin(declination)) / (cos(phi) * sin(zenith))
        let fromSouth = Self.degrees(acos(min(1, max(-1, azimuthCos))))
        azimuth = hourAngle > 0 ? (fromSouth + 180).truncatingRemainder(dividingBy: 360) : (540 - fromSouth).truncatingRemainder(dividingBy: 360)
    }

    /// Atmospheric refraction in degrees for a geometric elevation, as NOAA approximates it:
    /// it lifts the sun by about half a degree at the horizon.
    static func refraction(atElevation elevation: Double) -> Double {
        guard elevation <= 85 else { return 0 }
        let tangent = tan(radians(elevation))
        let arcSeconds: Double
        if elevation > 5 {
            arcSeconds = 58.1 / tangent - 0.07 / pow(tangent, 3) + 0.000086 / pow(tangent, 5)
        } else if elevation > -0.575 {
            arcSeconds = 1735 + elevation * (-518.2 + elevation * (103.4 + elevation * (-12.79 + elevation * 0.711)))
        } else {
            arcSeconds = -20.772 / tangent
        }
        return arcSeconds / 3600
    }

    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}
