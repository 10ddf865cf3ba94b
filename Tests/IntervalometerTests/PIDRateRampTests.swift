import Foundation
import Intervalometer
import Testing
import UnleashedTestSupport

/// The PID contender of `make bench-ramp` behaves as its published design says, and the ramp
/// engine beats it through the same skies.
@Suite("the PID rate ramp the engine is measured against")
struct PIDRateRampTests {
    /// Feeds `frames` readings 10 s apart, each `reading(seconds)`, wanting the reading itself.
    static func feed(_ ramp: inout PIDRateRamp, from start: Int = 0, frames: Int, reading: (Double) -> Double) {
        for frame in start..<(start + frames) {
            let seconds = Double(frame * 10)
            _ = ramp.next(at: seconds, sceneEV: reading(seconds), wantedEV: reading(seconds))
        }
    }

    @Test("through a steady darkening it moves at the light's rate and lags by what its gains predict")
    func followsASteadyRamp() throws {
        var ramp = PIDRateRamp()
        let perSecond = -10.0 / 3600
        Self.feed(&ramp, frames: 720) { 12 + perSecond * $0 }
        let exposure = try #require(ramp.exposureEV)
        let wanted = 12 + perSecond * 7190
        // In a steady state P and I see the same error e and D the light's slope:
        // (P + I) e + D r T = r T, so e = r T (1 - D) / (P + I) with T = 480 s.
        let tuning = PIDRateRamp.Tuning.sunset
        let predicted = -perSecond * tuning.targetTime * (1 - tuning.d) / (tuning.p + tuning.i)
        #expect(abs(ramp.rate + 10) < 0.5, "rate \(ramp.rate) stops/h")
        #expect(abs((exposure - wanted) - predicted) < 0.05, "lag \(exposure - wanted) stops, predicted \(predicted)")
    }

    @Test("an error whose rate stays inside the hysteresis is left alone; a larger one is not")
    func hysteresis() throws {
        // Ten minutes of steady light, so that the step below is one slope among many.
        var still = PIDRateRamp()
        Self.feed(&still, frames: 60) { _ in 10 }
        // 0.02 stop × (P + I) × 3600 / 480 = 0.26 stop/h, under 0.4.
        Self.feed(&still, from: 60, frames: 100) { _ in 10.02 }
        #expect(still.exposureEV == 10)
        #expect(still.rate == 0)

        var moving = PIDRateRamp()
        Self.feed(&moving, frames: 60) { _ in 10 }
        // 0.05 stop gives 0.64 stop/h.
        Self.feed(&moving, from: 60, frames: 100) { _ in 10.05 }
        #expect(try #require(moving.exposureEV) > 10)
    }

    @Test("after a long darkening a sudden brightening does not swing the rate through zero at once")
    func noFastSwingThroughZero() throws {
        var ramp = PIDRateRamp()
        let perSecond = -10.0 / 3600
        Self.feed(&ramp, frames: 180) { 12 + perSecond * $0 }
        let before = try #require(ramp.exposureEV)
        // The light comes back 2 stops brighter and stays.
        let bright = 12 + perSecond * 1790 + 2
        _ = ramp.next(at: 1800, sceneEV: bright, wantedEV: bright)
        #expect(ramp.rate == 0, "rate \(ramp.rate) against a direction of \(ramp.direction)")
        #expect(ramp.exposureEV == before)
        // Once the darkening has left the direction's window, the ramp brightens.
        Self.feed(&ramp, from: 181, frames: 60) { _ in bright }
        #expect(ramp.rate > 0)
        #expect(try #require(ramp.exposureEV) > before)
    }

    @Test("a large error moves the exposure no faster than 30 stops an hour")
    func maximumRate() throws {
        var ramp = PIDRateRamp()
        Self.feed(&ramp, frames: 10) { _ in 10 }
        _ = ramp.next(at: 100, sceneEV: 0, wantedEV: 0)
        #expect(ramp.rate == -30)
        let exposure = try #require(ramp.exposureEV)
        let expected: Double = 10 - 30.0 / 3600 * 10
        #expect(abs(exposure - expected) < 1e-9)
    }

    @Test("through the same skies the ramp engine has the smaller error, the same ladder steps and far smaller bulb jumps",
          arguments: RampEngineTests.scenes)
    func engineBeatsThePID(_ scene: (String, String)) throws {
        let rehearsal = RampEngineTests.rehearsal(scene.1)
        let pid = RampQuality(rehearsal.run(.pidRate))
        let engine = RampQuality(rehearsal.run(.engine))
        #expect(pid.frames == engine.frames)
        #expect(pid.clipped == 0, "\(scene.0): the PID is a working ramp, not a straw man")
        #expect(engine.p95Error < pid.p95Error, "\(scene.0): p95 \(engine.p95Error) against \(pid.p95Error)")
        #expect(engine.maxError < pid.maxError, "\(scene.0): max \(engine.maxError) against \(pid.maxError)")
        // By day both step the camera's third-stop ladder: the same largest jump, a third of a
        // stop less the light's change between two frames, within a thousandth of a stop.
        #expect(abs(engine.largestJump - pid.largestJump) < 0.001, "\(scene.0): jump \(engine.largestJump) against \(pid.largestJump)")
        #expect(engine.largestJump < 1.0 / 3 + 0.001)
        let engineBulb = try #require(engine.largestBulbJump)
        let pidBulb = try #require(pid.largestBulbJump)
        #expect(engineBulb < pidBulb / 10, "\(scene.0): bulb jump \(engineBulb) against \(pidBulb)")
    }
}
