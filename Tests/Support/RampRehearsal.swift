import CameraKit
import Foundation
public import Intervalometer
import UnleashedKit
import UnleashedProtocol
public import UnleashedSimulator

/// A time-lapse through a modelled sky, frame by frame, without a camera or a clock: the
/// simulated meter reads the scene, a ramp picks the exposure, and the picture's brightness
/// follows from the scene and the exposure as on the simulated camera. For tests and
/// `make bench-ramp`.
public struct RampRehearsal: Sendable {
    /// How a run chooses each frame's exposure.
    public enum Method: String, Sendable, CaseIterable {
        /// The first frame's exposure for the whole run.
        case fixed = "fixed exposure"
        /// A third of a stop whenever the last picture leaves ±20 % of the wanted brightness.
        case threshold = "threshold ramp"
        /// ``PIDRateRamp`` with its published tuning, its exposure applied in thirds of a stop.
        case pidRate = "PID rate ramp"
        /// ``RampEngine``.
        case engine = "ramp engine"
    }

    /// One picture of a rehearsal.
    public struct Frame: Sendable {
        public var elapsed: Duration
        public var exposure: RampExposure
        /// The scene's true light at the picture (EV at ISO 100).
        public var sceneEV: Double
        /// Stops from mid-grey, as the picture came out.
        public var brightness: Double
        /// Stops from mid-grey, as it was wanted for this scene.
        public var wanted: Double
        public var interval: Duration

        public var error: Double { brightness - wanted }
        /// Darker than this is a black frame.
        public static let black = -5.0
        /// Brighter than this is a blown frame.
        public static let white = 2.5
        public var isClipped: Bool { brightness < Self.black || brightness > Self.white }
    }

    public var sky: Daylight
    public var settings: RampSettings
    public var limits: RampLimits
    public var interval: Duration
    public var length: Duration

    public init(sky: Daylight, settings: RampSettings = RampSettings(), limits: RampLimits, interval: Duration, length: Duration) {
        self.sky = sky
        self.settings = settings
        self.limits = limits
        self.interval = interval
        self.length = length
    }

    /// The limits of a simulated camera: its ladders, ISO up to `maxISO`, the given apertures.
    public static func limits(profile: CameraProfile, maxISO: UInt32, apertures: [String], gap: Duration = .seconds(2)) -> RampLimits {
        RampLimits(offeredShutterSpeeds: profile.choices(for: .shutterSpeed) ?? [], offeredISOs: profile.choices(for: .iso) ?? [],
                   isoRange: 0...maxISO, apertures: apertures.compactMap(Aperture.init(text:)), gap: gap, bulbAllowed: true)
    }

    /// Every frame of the run by `method`.
    public func run(_ method: Method) -> [Frame] {
        var engine = RampEngine(settings: settings, limits: limits, interval: interval)
        var pid = PIDRateRamp()
        let allocator = ExposureAllocator(limits: limits)
        var frames: [Frame] = []
        var elapsed = Duration.zero
        var held: RampExposure?
        var heldEV = 0.0
        while elapsed <= length {
            let truth = sky.ev(at: elapsed)
            // The meter reads in 1/24 stops, as the simulated module reports it.
            let metered = (truth * 24).rounded() / 24
            var next = interval
            let exposure: RampExposure?
            switch method {
            case .engine:
                let step = engine.next(at: elapsed, sceneEV: metered)
                exposure = step?.exposure
                next = step?.interval ?? interval
            case .pidRate:
                let ev = pid.next(at: elapsed.seconds, sceneEV: metered, wantedEV: metered - settings.brightness(forScene: metered))
                exposure = allocator.exposure(for: (ev * 3).rounded() / 3, interval: interval)
            case .fixed:
                if held == nil { held = allocator.exposure(for: metered - settings.brightness(forScene: metered), interval: interval) }
                exposure = held
            case .threshold:
                if let last = frames.last {
                    let band = log2(1.2)
                    if last.brightness - last.wanted > band { heldEV += 1.0 / 3 }
                    if last.brightness - last.wanted < -band { heldEV -= 1.0 / 3 }
                } else {
                    heldEV = ((metered - settings.brightness(forScene: metered)) * 3).rounded() / 3
                }
                exposure = allocator.exposure(for: heldEV, interval: interval)
            }
            guard let exposure else { break }
            frames.append(Frame(elapsed: elapsed, exposure: exposure, sceneEV: truth, brightness: truth - exposure.ev100,
                                wanted: settings.brightness(forScene: truth), interval: next))
            elapsed += next
        }
        return frames
    }
}

/// What a run of pictures looks like to a photographer judging it frame by frame.
public struct RampQuality: Sendable {
    public var frames: Int
    public var p95Error: Double
    public var maxError: Double
    /// The largest change of brightness from one picture to the next.
    public var largestJump: Double
    /// The same, between pictures that were both timed in bulb.
    public var largestBulbJump: Double?
    /// Pictures whose settings differ from the one before.
    public var settingChanges: Int
    public var clipped: Int

    public init(_ frames: [RampRehearsal.Frame]) {
        self.frames = frames.count
        let errors = frames.map { abs($0.error) }.sorted()
        p95Error = errors.isEmpty ? 0 : errors[min(errors.count - 1, Int((Double(errors.count) * 0.95).rounded(.up)) - 1)]
        maxError = errors.last ?? 0
        var jump = 0.0
        var bulbJump: Double?
        var changes = 0
        for (before, after) in zip(frames, frames.dropFirst()) {
            let change = abs(after.brightness - before.brightness)
            jump = max(jump, change)
            if before.exposure.bulbMilliseconds != nil, after.exposure.bulbMilliseconds != nil { bulbJump = max(bulbJump ?? 0, change) }
            if before.exposure != after.exposure { changes += 1 }
        }
        largestJump = jump
        largestBulbJump = bulbJump
        settingChanges = changes
        clipped = frames.filter(\.isClipped).count
    }
}
