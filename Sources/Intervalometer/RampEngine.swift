import Foundation
import UnleashedKit

/// How an automatic ramp follows the light. The defaults suit a sunset or a sunrise at
/// intervals of a few seconds to a minute.
public struct RampSettings: Sendable, Hashable {
    /// The fastest the exposure may change, in stops per hour. A sunset at mid latitudes
    /// darkens by up to about 10 stops an hour; 30 leaves room for clouds.
    public var maxRate: Double = 30
    /// An error smaller than this, in stops, is left alone: the exposure follows the light's
    /// trend but does not hunt around it.
    public var hysteresis: Double = 0.1
    /// How long the ramp takes to work off an error, in seconds.
    public var response: Double = 120
    /// How long the scene's light is averaged over, in seconds: a passing cloud or a car's lights
    /// move the exposure less the longer this is.
    public var smoothing: Double = 60
    /// How bright the pictures should be, in stops from a mid-grey rendering, by day and by
    /// night: a night that looks like day is not wanted.
    public var dayBrightness: Double = 0
    public var nightBrightness: Double = -1.3
    /// The scene EV at and above which it is day, and at and below which it is night.
    public var dayEV: Double = 10
    public var nightEV: Double = -2
    /// The interval by day and by night, for a run whose interval follows the light; nil keeps
    /// the run's interval. It moves in a straight line between scene EV 8 and −2.
    public var intervals: IntervalRamp?

    /// A day and a night interval.
    public struct IntervalRamp: Sendable, Hashable {
        public var day: Duration
        public var night: Duration

        public init(day: Duration, night: Duration) {
            self.day = day
            self.night = night
        }
    }

    public init() {}

    /// How far from mid-grey a scene of `sceneEV` should be rendered.
    public func brightness(forScene sceneEV: Double) -> Double {
        dayBrightness + (nightBrightness - dayBrightness) * Self.nightFraction(sceneEV, day: dayEV, night: nightEV)
    }

    /// The interval for a scene of `sceneEV`, when the interval ramps.
    public func interval(forScene sceneEV: Double) -> Duration? {
        guard let intervals else { return nil }
        let fraction = Self.nightFraction(sceneEV, day: 8, night: -2)
        let milliseconds = Double(intervals.day.wholeMilliseconds)
            + (Double(intervals.night.wholeMilliseconds) - Double(intervals.day.wholeMilliseconds)) * fraction
        return .milliseconds(Int64(milliseconds.rounded()))
    }

    /// 0 by day, 1 by night, in a straight line between.
    static func nightFraction(_ ev: Double, day: Double, night: Double) -> Double {
        guard day > night else { return ev <= night ? 1 : 0 }
        return min(1, max(0, (day - ev) / (day - night)))
    }
}

/// The automatic exposure ramp of a day-to-night or night-to-day time-lapse.
///
/// Per frame it takes a reading of the scene's light (the camera's meter, or the last picture's
/// brightness with the exposure it was taken at) and answers the exposure for the next picture.
/// The reading is smoothed with its trend (double exponential smoothing), so that the ramp
/// follows a steady change without lagging behind it and is not pushed around by noise. The
/// exposure is a continuous value moved by a rate controller: it follows the light's trend and
/// works off the remaining error within ``RampSettings/response``, never faster than
/// ``RampSettings/maxRate``, and leaves errors inside ``RampSettings/hysteresis`` alone. The
/// allocator turns it into settings: third-stop steps by day, millisecond bulb times by night.
/// At the start, until a reading agrees with the one before within a stop, each reading is
/// taken as it comes: a run begun from a clipped picture finds the light in a few frames.
public struct RampEngine: Sendable {
    public let settings: RampSettings
    public let allocator: ExposureAllocator
    /// The run's interval; the ramp's own when ``RampSettings/intervals`` is set.
    public let baseInterval: Duration

    /// What the engine decided for one frame.
    public struct Step: Sendable, Hashable {
        /// The settings for the next picture.
        public var exposure: RampExposure
        /// The exposure the ramp wanted, before it was rounded to settings (EV at ISO 100).
        public var targetEV: Double
        /// The scene's light as the engine sees it, smoothed (EV at ISO 100).
        public var sceneEV: Double
        /// How bright the picture should come out (stops from mid-grey).
        public var targetBrightness: Double
        /// How fast the exposure is moving, in stops per hour.
        public var rate: Double
        /// The time to the next slot.
        public var interval: Duration
    }

    private var level: Double?
    /// Scene EV per second.
    private var trend = 0.0
    private var exposureEV = 0.0
    private var lastSeconds: Double?
    /// True until a reading agrees with the one before: a run that starts from a clipped
    /// picture reads only a bound of the light, and takes each new reading as it comes until
    /// they settle, instead of smoothing its way out over minutes of blown frames.
    private var acquiring = true
    /// Readings further than this from the one expected are taken as they come while acquiring.
    static let acquisitionStops = 1.0

    public init(settings: RampSettings, limits: RampLimits, interval: Duration) {
        self.settings = settings
        allocator = ExposureAllocator(limits: limits)
        baseInterval = interval
    }

    /// Carries on from the last frame an interrupted run recorded, taken `elapsed` into the run:
    /// the light's level and the exposure pick up where they were, and the exposure's rate
    /// stands in for the light's trend (the record keeps no other), so a resumed run neither
    /// starts its smoothing afresh nor jumps. After a long outage the next step catches
    /// up at once, since the rate limit allows that much change over that much time.
    public mutating func resume(from record: RampRecord, at elapsed: Duration) {
        level = record.sceneEV
        trend = record.rate / 3600
        exposureEV = record.targetEV
        lastSeconds = elapsed.seconds
        acquiring = false
    }

    /// The exposure for a picture taken `elapsed` into the run when there is no reading: the
    /// one the ramp holds now, so the run goes on and its picture gives the next reading. Nil
    /// before the first reading (or a resume), when there is nothing to hold.
    public func hold(at elapsed: Duration, offset: Double = 0, interval programmed: Duration? = nil) -> Step? {
        guard let level else { return nil }
        return step(scene: level, offset: offset, rate: 0, interval: programmed)
    }

    /// The settings for the exposure the ramp holds now, with what it decided about them.
    private func step(scene: Double, offset: Double, rate: Double, interval programmed: Duration?) -> Step? {
        let interval = programmed ?? settings.interval(forScene: scene) ?? baseInterval
        guard let exposure = allocator.exposure(for: exposureEV, interval: interval) else { return nil }
        return Step(exposure: exposure, targetEV: exposureEV, sceneEV: scene,
                    targetBrightness: settings.brightness(forScene: scene) + offset, rate: rate, interval: interval)
    }

    /// The exposure for the picture taken `elapsed` into the run, given a reading of the scene's
    /// light then (EV at ISO 100); nil when the limits allow no exposure. `offset` makes the
    /// picture that many stops brighter (negative: darker) than the settings' brightness, and
    /// `interval` sets the time to the next slot, as a program's keyframes ask.
    public mutating func next(at elapsed: Duration, sceneEV reading: Double, offset: Double = 0, interval programmed: Duration? = nil) -> Step? {
        let now = elapsed.seconds
        let rate: Double
        if acquiring, let level, let lastSeconds, now > lastSeconds {
            if abs(reading - (level + trend * (now - lastSeconds))) > Self.acquisitionStops {
                self.level = nil
            } else {
                acquiring = false
            }
        }
        if let level, let lastSeconds, now > lastSeconds {
            let dt = now - lastSeconds
            let alpha = 1 - exp(-dt / settings.smoothing)
            let beta = 1 - exp(-dt / (settings.smoothing * 2))
            let predicted = level + trend * dt
            let updated = predicted + alpha * (reading - predicted)
            trend += beta * ((updated - level) / dt - trend)
            self.level = updated
            let wanted = updated - settings.brightness(forScene: updated) - offset
            let error = wanted - exposureEV
            var perHour = trend * 3600
            if abs(error) > settings.hysteresis { perHour += error / settings.response * 3600 }
            perHour = min(settings.maxRate, max(-settings.maxRate, perHour))
            var step = perHour / 3600 * dt
            // Never past the wanted exposure by the correction alone.
            if abs(error) > settings.hysteresis, (error > 0) == (step > 0), abs(step) > abs(error) + abs(trend * dt) {
                step = error + trend * dt
            }
            exposureEV += step
            rate = step / dt * 3600
            self.lastSeconds = now
        } else if level == nil {
            level = reading
            trend = 0
            exposureEV = reading - settings.brightness(forScene: reading) - offset
            lastSeconds = now
            rate = 0
        } else {
            rate = trend * 3600
        }
        return step(scene: level ?? reading, offset: offset, rate: rate, interval: programmed)
    }
}
