import Foundation

/// A PID controller on the *rate* of exposure change, the way Timelapse+ VIEW's "TLPAuto" ramp
/// is described (`intervalometer/exposure.js` in timelapseplus/VIEW): a contender for
/// ``RampRehearsal``, so that ``RampEngine`` is measured against a published design rather
/// than only against straw men.
///
/// Per frame: the error is the exposure wanted for the reading less the exposure the ramp holds;
/// P works on that error, I on its mean over the last ``Tuning/historyWindow`` seconds, D on the
/// light's own slope (a trimmed mean of reading-to-reading slopes over ``Tuning/readingWindow``,
/// the outer 20 % of it left out), all three in stops to be made up within
/// ``Tuning/targetTime``. That sum becomes a rate in stops per hour; a rate under
/// ``hysteresis`` is zero, a rate beyond ``maxRate`` is cut to it, and a rate against the
/// recent direction (the mean rate over the history window) faster than ``swingRate`` is zero,
/// so the ramp does not swing through zero. The exposure moves by the rate times the time since
/// the last frame. The tuning is the sunrise one while the recent direction brightens, the
/// sunset one otherwise.
public struct PIDRateRamp: Sendable {
    /// The gains and windows of one direction.
    public struct Tuning: Sendable, Hashable {
        public var p: Double
        public var i: Double
        public var d: Double
        /// The time, in seconds, the controller means to make up an error in.
        public var targetTime: Double
        /// The window, in seconds, the light's slope is taken over.
        public var readingWindow: Double
        /// The window, in seconds, the error's mean and the direction are taken over.
        public var historyWindow: Double

        public init(p: Double, i: Double, d: Double, targetTime: Double, readingWindow: Double, historyWindow: Double) {
            self.p = p
            self.i = i
            self.d = d
            self.targetTime = targetTime
            self.readingWindow = readingWindow
            self.historyWindow = historyWindow
        }

        /// As published for a sunset: P 1.1, I 0.6, D 0.4 over 480 s.
        public static let sunset = Tuning(p: 1.1, i: 0.6, d: 0.4, targetTime: 480, readingWindow: 480, historyWindow: 480)
        /// As published for a sunrise: P 0.9, I 0.4, D 0.6 over 300 s (the error's history still 480 s).
        public static let sunrise = Tuning(p: 0.9, i: 0.4, d: 0.6, targetTime: 300, readingWindow: 300, historyWindow: 480)
    }

    public var sunset = Tuning.sunset
    public var sunrise = Tuning.sunrise
    /// Rates slower than this, in stops per hour, are taken as zero.
    public var hysteresis = 0.4
    /// The fastest the exposure may change, in stops per hour.
    public var maxRate = 30.0
    /// A rate faster than this (stops per hour) against a recent direction of more than
    /// ``swingDirection`` is taken as zero.
    public var swingRate = 3.0
    public var swingDirection = 0.5

    /// The exposure the ramp holds (EV at ISO 100); nil before the first frame.
    public private(set) var exposureEV: Double?
    /// The last frame's rate, in stops per hour, after hysteresis and limits.
    public private(set) var rate = 0.0
    /// The mean rate over the history window, before hysteresis and limits: positive brightens.
    public private(set) var direction = 0.0

    private struct Sample {
        var seconds: Double
        var value: Double
    }

    private var readings: [Sample] = []
    private var errors: [Sample] = []
    private var rates: [Sample] = []
    private var lastSeconds: Double?

    public init() {}

    /// The exposure for the frame at `seconds` into the run, given the reading of the scene then
    /// and the exposure wanted for it (both EV at ISO 100).
    public mutating func next(at seconds: Double, sceneEV: Double, wantedEV: Double) -> Double {
        let interval = lastSeconds.map { max(0, seconds - $0) } ?? 0
        lastSeconds = seconds
        let tuning = direction > 0 ? sunrise : sunset

        readings.append(Sample(seconds: seconds, value: sceneEV))
        readings.removeAll { seconds - $0.seconds > tuning.readingWindow }
        let trim = interval > 0 ? Int((tuning.readingWindow / interval * 0.2).rounded(.up)) : 1
        let slope = Self.trimmedMeanSlope(readings, trim: trim) * tuning.targetTime

        let held = exposureEV ?? wantedEV
        let error = wantedEV - held
        errors.append(Sample(seconds: seconds, value: error))
        errors.removeAll { seconds - $0.seconds > tuning.historyWindow }
        let pastError = errors.map(\.value).reduce(0, +) / Double(errors.count)

        var rate = (tuning.p * error + tuning.i * pastError + tuning.d * slope) * 3600 / tuning.targetTime
        rates.append(Sample(seconds: seconds, value: rate))
        rates.removeAll { seconds - $0.seconds > tuning.historyWindow }
        direction = rates.map(\.value).reduce(0, +) / Double(rates.count)

        if abs(rate) < hysteresis { rate = 0 }
        rate = min(maxRate, max(-maxRate, rate))
        if rate > swingRate && direction < -swingDirection { rate = 0 }
        if rate < -swingRate && direction > swingDirection { rate = 0 }
        self.rate = rate
        let exposure = held + rate / 3600 * interval
        exposureEV = exposure
        return exposure
    }

    /// The mean of the slopes (per second) between consecutive samples, the `trim` smallest and
    /// largest left out while enough remain; 0 with fewer than two samples.
    private static func trimmedMeanSlope(_ samples: [Sample], trim: Int) -> Double {
        let slopes = zip(samples, samples.dropFirst()).compactMap { before, after -> Double? in
            let dt = after.seconds - before.seconds
            return dt > 0 ? (after.value - before.value) / dt : nil
        }.sorted()
        guard !slopes.isEmpty else { return 0 }
        let cut = min(trim, (slopes.count - 1) / 2)
        let inside = slopes[cut..<(slopes.count - cut)]
        return inside.reduce(0, +) / Double(inside.count)
    }
}
