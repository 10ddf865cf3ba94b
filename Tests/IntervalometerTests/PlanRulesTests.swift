import Intervalometer
import Testing
import UnleashedTestSupport

@Suite("The plan's number rules")
struct PlanRulesTests {
    static let good = RunPlan(intervalMs: 1000, stop: .frames(10))

    /// A plan with one thing wrong, the field it names and the sentence the run refuses it with.
    static let cases: [(String, RunPlan, PlanField, String)] = {
        func plan(_ change: (inout RunPlan) -> Void) -> RunPlan {
            var plan = good
            change(&plan)
            return plan
        }
        return [
            ("no interval", plan { $0.intervalMs = 0 }, .intervalMs, "the interval must be longer than 0"),
            ("negative gap", plan { $0.minimumGapMs = -1 }, .minimumGapMs, "the minimum gap cannot be negative"),
            ("no frames", plan { $0.stop = .frames(0) }, .frames, "a run needs at least 1 frame"),
            ("no duration", plan { $0.stop = .duration(milliseconds: 0) }, .durationMs, "the duration must be longer than 0"),
            ("even bracket", plan { $0.exposure = .bracket(count: 4, stepThirds: 3) }, .bracketCount,
             "a bracket has an odd number of frames, 3 or more"),
            ("bracket of 1", plan { $0.exposure = .bracket(count: 1, stepThirds: 3) }, .bracketCount,
             "a bracket has an odd number of frames, 3 or more"),
            ("flat bracket", plan { $0.exposure = .bracket(count: 3, stepThirds: 0) }, .bracketStep, "a bracket steps by at least 1/3 stop"),
            ("empty bulb", plan { $0.exposure = .bulb(milliseconds: 0) }, .bulbLength, "a bulb exposure lasts at least 1 ms"),
            ("empty clip", plan { $0.exposure = .video(milliseconds: 0) }, .clipLength, "a clip lasts at least 1 ms"),
            ("long bulb", plan { $0.exposure = .bulb(milliseconds: 1500); $0.minimumGapMs = 300 }, .intervalMs,
             "the interval is too short: each slot needs at least 1s800ms (a 1s500ms bulb exposure plus a 300ms gap)"),
            ("ramp ISO", plan { $0.exposure = .ramp(plan: RampPlan(minISO: 800, maxISO: 400)) }, .rampISO,
             "the ramp's lowest ISO is above its highest"),
            ("ramp gap", plan { $0.exposure = .ramp(plan: RampPlan(gapMs: -1)) }, .rampGap, "the ramp's gap cannot be negative"),
            ("ramp rate", plan { $0.exposure = .ramp(plan: RampPlan(gapMs: 100, maxRate: 0)) }, .rampRate,
             "the ramp's largest rate must be above 0 stops an hour"),
            ("ramp gap over interval", plan { $0.exposure = .ramp(plan: RampPlan(gapMs: 1000)) }, .intervalMs,
             "the interval is too short: each slot needs at least 1s1ms (the 1s gap the ramp leaves after each exposure)"),
        ]
    }()

    @Test("each rule names its field and says what is wrong, as a sentence and after the field's name")
    func rules() {
        #expect(throws: Never.self) { try Self.good.validate() }
        for (name, plan, field, sentence) in Self.cases {
            do {
                try plan.validate()
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.field == field, "\(name)")
                #expect(error.description == sentence, "\(name)")
                #expect(sentence.hasSuffix(error.detail), "\(name): the detail is the sentence's end")
            }
        }
    }

    @Test("a run refuses a plan with the same words, before its camera is asked anything")
    func runRefuses() async throws {
        for (name, plan, _, sentence) in Self.cases {
            let clock = RunClock()
            let camera = ScriptedCamera(clock: clock)
            let run = Timelapse(plan: plan, camera: camera, journal: MemoryJournal(), clock: clock, wallClock: clock.wallClock)
            do {
                _ = try await clock.flowing { try await run.start(cameraName: "test") }
                Issue.record("\(name): started")
            } catch {
                #expect(String(describing: error) == sentence, "\(name)")
            }
            #expect(await camera.shotCount == 0)
        }
    }

    @Test("field paths split into their parts, as a job document nests them")
    func paths() {
        #expect(PlanField.bracketCount.path == ["exposure", "count"])
        #expect(PlanField.intervalMs.path == ["intervalMs"])
    }
}
