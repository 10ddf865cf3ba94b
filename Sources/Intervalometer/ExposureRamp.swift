public import CameraKit
import Foundation
import UnleashedKit

/// The settings a ramp may use, from what the camera offers and what the run allows.
public struct RampLimits: Sendable, Hashable {
    /// The camera's shutter speeds, bulb left out; any order.
    public var shutterSpeeds: [ShutterSpeed]
    /// The ISO values the ramp may use (the camera's, within the run's lowest and highest).
    public var isoSpeeds: [ISOSpeed]
    /// One aperture for a fixed aperture; several to let the ramp open up once the shutter is
    /// at its longest (aperture changes flicker on many lenses, so it is the last resort).
    public var apertures: [Aperture]
    /// The time the camera needs between the end of one exposure and the next slot (to store
    /// the picture): the shutter stays open at most the interval less this.
    public var gap: Duration
    /// Whether the camera takes timed bulb exposures, for steps finer than a third of a stop.
    public var bulb: Bool
    /// Exposures at least this long are timed in bulb when `bulb` holds: where a third of a
    /// stop is a visible jump and millisecond timing is fine enough.
    public var bulbFrom: Duration

    public init(shutterSpeeds: [ShutterSpeed], isoSpeeds: [ISOSpeed], apertures: [Aperture], gap: Duration,
                bulb: Bool, bulbFrom: Duration = .seconds(1)) {
        self.shutterSpeeds = shutterSpeeds.filter { !$0.isBulb }.sorted { ($0.timeStops ?? 0) < ($1.timeStops ?? 0) }
        self.isoSpeeds = isoSpeeds.filter { !$0.isAuto }.sorted { $0.rawValue < $1.rawValue }
        self.apertures = apertures.sorted(by: >)
        self.gap = gap
        self.bulb = bulb
        self.bulbFrom = bulbFrom
    }

    /// The limits from what a camera offers (its shutter speed and ISO choices, bulb among
    /// them), ISO kept within `isoRange`.
    public init(offeredShutterSpeeds: [SettingValue], offeredISOs: [SettingValue], isoRange: ClosedRange<UInt32>,
                apertures: [Aperture], gap: Duration, bulbAllowed: Bool, bulbFrom: Duration = .seconds(1)) {
        let shutters = offeredShutterSpeeds.compactMap { value -> ShutterSpeed? in
            if case .shutterSpeed(let speed) = value, !speed.isBulb { return speed } else { return nil }
        }
        let isos = offeredISOs.compactMap { value -> ISOSpeed? in
            if case .iso(let iso) = value, !iso.isAuto, isoRange.contains(iso.rawValue) { return iso } else { return nil }
        }
        self.init(shutterSpeeds: shutters, isoSpeeds: isos, apertures: apertures, gap: gap,
                  bulb: bulbAllowed && offeredShutterSpeeds.contains(.shutterSpeed(.bulb)), bulbFrom: bulbFrom)
    }

    /// Why the limits cannot make any exposure; nil when they can.
    public var problem: String? {
        if shutterSpeeds.isEmpty && !bulb { return "the camera offers no shutter speed to ramp" }
        if isoSpeeds.isEmpty { return "no ISO value within the limits" }
        if apertures.isEmpty { return "no aperture within the limits" }
        if gap < .zero { return "the gap cannot be negative" }
        return nil
    }
}

/// One exposure of a ramp: the settings to apply and the EV they give.
public struct RampExposure: Sendable, Hashable {
    /// A speed from the ladder, or bulb with ``bulbMilliseconds``.
    public var shutter: ShutterSpeed
    /// The bulb time, when ``shutter`` is bulb.
    public var bulbMilliseconds: Int64?
    public var iso: ISOSpeed
    public var aperture: Aperture
    /// The exposure as EV at ISO 100 (see ``ExposureValue``).
    public var ev100: Double

    /// The time the shutter is open.
    public var seconds: Double {
        if let bulbMilliseconds { return Double(bulbMilliseconds) / 1000 }
        return pow(2, shutter.timeStops ?? 0)
    }

    /// As a person reads it: `1/125 ISO 100 f/8` or `bulb 2350ms ISO 1600 f/2.8`.
    public var text: String {
        let time = bulbMilliseconds.map { "bulb \($0)ms" } ?? shutter.text
        return "\(time) ISO \(iso.text) \(aperture.text)"
    }
}

/// Turns an exposure EV into settings by priority: the time first, at the lowest ISO and the
/// narrowest allowed aperture; once the time reaches the longest the interval allows, the
/// aperture opens, then the ISO rises. Ladder values are
/// whole thirds of a stop; in bulb the time is exact to the millisecond, so a change of ISO is
/// met by a change of time and the picture does not jump.
public struct ExposureAllocator: Sendable {
    public let limits: RampLimits

    public init(limits: RampLimits) {
        self.limits = limits
    }

    /// The settings closest to `ev100` within the limits, for slots `interval` apart; an
    /// exposure beyond the limits is clamped (the picture then comes out darker or brighter than
    /// asked, which the ramp's record shows). Nil when the limits allow no exposure at all.
    public func exposure(for ev100: Double, interval: Duration) -> RampExposure? {
        let longest = (interval - limits.gap).seconds
        guard limits.problem == nil, longest > 0, let lowestISO = limits.isoSpeeds.first, let narrowest = limits.apertures.first else {
            return nil
        }
        var aperture = narrowest
        var iso = lowestISO
        // Open up, then raise the gain, only while the longest time is not enough.
        for candidate in limits.apertures where seconds(ev100, iso, aperture) > longest * 1.0001 { aperture = candidate }
        for candidate in limits.isoSpeeds where seconds(ev100, iso, aperture) > longest * 1.0001 { iso = candidate }
        let wanted = min(seconds(ev100, iso, aperture), longest)
        let gain = iso.gainStops ?? 0
        if limits.bulb, wanted >= limits.bulbFrom.seconds || limits.shutterSpeeds.isEmpty {
            let milliseconds = max(1, Int64((wanted * 1000).rounded()))
            let time = log2(Double(milliseconds) / 1000)
            return RampExposure(shutter: .bulb, bulbMilliseconds: milliseconds, iso: iso, aperture: aperture,
                                ev100: ExposureValue.ev100(timeStops: time, gainStops: gain, lightStops: aperture.lightStops))
        }
        let fitting = limits.shutterSpeeds.filter { pow(2, $0.timeStops ?? 0) <= longest * 1.0001 }
        let target = log2(wanted)
        guard let shutter = (fitting.isEmpty ? limits.shutterSpeeds.prefix(1) : fitting[...])
            .min(by: { abs(($0.timeStops ?? 0) - target) < abs(($1.timeStops ?? 0) - target) }) else { return nil }
        return RampExposure(shutter: shutter, bulbMilliseconds: nil, iso: iso, aperture: aperture,
                            ev100: ExposureValue.ev100(timeStops: shutter.timeStops ?? 0, gainStops: gain, lightStops: aperture.lightStops))
    }

    private func seconds(_ ev100: Double, _ iso: ISOSpeed, _ aperture: Aperture) -> Double {
        ExposureValue.seconds(forEV100: ev100, gainStops: iso.gainStops ?? 0, lightStops: aperture.lightStops)
    }
}
