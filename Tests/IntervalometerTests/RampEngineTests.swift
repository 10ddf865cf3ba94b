import CameraKit
import Foundation
import Intervalometer
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// Holy-grail runs through the modelled sky at 52.5° N, 13.4° E: every picture judged as a
/// photographer would, every setting checked against what the run allows.
@Suite("exposure ramping through sunsets and a sunrise")
struct RampEngineTests {
    static let latitude = 52.5
    static let longitude = 13.4
    static let interval = Duration.seconds(10)
    static let gap = Duration.seconds(2)

    /// Three hours from `start` (UTC, ISO 8601), on a mirrorless body at f/2.8 up to ISO 6400.
    static func rehearsal(_ start: String) -> RampRehearsal {
        let unix = ISO8601DateFormatter().date(from: start)!.timeIntervalSince1970
        let sky = Daylight(latitude: latitude, longitude: longitude, startUnixSeconds: unix)
        let limits = RampRehearsal.limits(profile: .nikonLike, maxISO: 6400, apertures: ["f/2.8"], gap: gap)
        return RampRehearsal(sky: sky, limits: limits, interval: interval, length: .seconds(3 * 3600))
    }

    static let scenes = [
        ("a June sunset", "2026-06-21T18:30:00Z"),
        ("a December sunset", "2026-12-21T13:30:00Z"),
        ("a December sunrise", "2026-12-21T05:00:00Z"),
    ]

    @Test("the modelled sky covers the day and the night the runs need", arguments: scenes)
    func skySpansTheRun(_ scene: (String, String)) {
        let run = Self.rehearsal(scene.1)
        let evs = stride(from: 0, through: 3 * 3600, by: 60).map { run.sky.ev(at: .seconds($0)) }
        #expect((evs.max() ?? 0) - (evs.min() ?? 0) > 15, "\(scene.0): more than 15 stops between day and night")
    }

    @Test("no black or blown frame, every setting within the limits, the exposure never longer than the interval allows",
          arguments: scenes)
    func rampStaysInsideTheLimits(_ scene: (String, String)) throws {
        let run = Self.rehearsal(scene.1)
        let frames = run.run(.engine)
        #expect(frames.count == 1081, "\(scene.0): a frame every 10 s for 3 hours")
        for frame in frames {
            #expect(!frame.isClipped, "\(scene.0) at \(frame.elapsed): brightness \(frame.brightness) with \(frame.exposure.text)")
            #expect(frame.exposure.seconds <= (Self.interval - Self.gap).seconds + 0.0005, "\(frame.exposure.text) does not fit")
            #expect(frame.exposure.iso.rawValue >= 100 && frame.exposure.iso.rawValue <= 6400)
            #expect(frame.exposure.aperture.text == "f/2.8")
            if let bulb = frame.exposure.bulbMilliseconds { #expect(bulb >= 1000, "bulb only where a third of a stop is coarse") }
        }
        let quality = RampQuality(frames)
        #expect(quality.p95Error < 0.5, "\(scene.0): p95 error \(quality.p95Error)")
        #expect(quality.largestJump <= 1.0 / 3 + 0.01, "\(scene.0): a jump of \(quality.largestJump)")
        #expect((quality.largestBulbJump ?? 0) <= 0.1, "\(scene.0): a jump of \(quality.largestBulbJump ?? 0) in bulb")
        #expect(frames.contains { $0.exposure.bulbMilliseconds != nil }, "\(scene.0): the night is timed in bulb")
    }

    @Test("a ramped time-lapse on the test clock: 3 hours at 10 s, every picture exposed within the limits and recorded",
          arguments: scenes)
    func rampedRunOnRunClock(_ scene: (String, String)) async throws {
        let clock = RunClock()
        let sky = Self.rehearsal(scene.1).sky
        let camera = try SkyCamera(clock: clock, sky: sky)
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(1081),
                           exposure: .ramp(plan: RampPlan(maxISO: 6400, apertures: ["f/2.8"], gapMs: Self.gap.wholeMilliseconds)))
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "sky")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.count == 1081 && frames.allSatisfy { $0.outcome == .taken }, "\(scene.0): \(frames.filter { $0.outcome != .taken }.prefix(3))")
        let pictures = await camera.pictures
        #expect(pictures.count == 1081)
        for picture in pictures {
            #expect(picture.brightness > RampRehearsal.Frame.black && picture.brightness < RampRehearsal.Frame.white,
                    "\(scene.0) at \(picture.elapsed): \(picture.brightness) with \(picture.exposure) ISO \(picture.iso)")
            #expect(picture.seconds <= 8.0005, "the shutter fits the 10 s interval less the 2 s gap: \(picture.exposure)")
            #expect(picture.iso >= 100 && picture.iso <= 6400 && picture.aperture == "f/2.8")
        }
        for (before, after) in zip(pictures, pictures.dropFirst()) {
            #expect(abs(after.brightness - before.brightness) <= 1.0 / 3 + 0.05,
                    "\(scene.0): a jump at \(after.elapsed) from \(before.exposure) to \(after.exposure)")
        }
        let ramps = frames.compactMap(\.ramp)
        #expect(ramps.count == 1081, "every frame carries what the ramp decided")
        #expect(ramps.allSatisfy { abs($0.residualEV) <= 1.0 / 6 + 0.01 && $0.intervalMs == 10_000 })
        #expect(frames.contains { $0.exposure?.hasPrefix("bulb ") == true }, "the night is timed in bulb")
        #expect(await camera.settingChanges < 1081 * 3, "only the settings that change are sent")
    }

    @Test("a program holds a fixed exposure, then follows the light with an offset that moves between keyframes")
    func programOnRunClock() async throws {
        let program = try RampProgram(json: Data("""
            {"keyframes": [
              {"at": "0s", "mode": "fixed", "shutter": "1/1000", "iso": 100, "aperture": "f/2.8"},
              {"at": "30m", "mode": "auto", "evOffset": 0},
              {"frame": 721, "mode": "auto", "evOffset": -1}
            ]}
            """.utf8), intervalMs: 10_000)
        #expect(program.at(.seconds(4500)).evOffset == -0.5, "halfway between 30 min and 2 h (frame 721): half the offset")
        #expect(program.at(.seconds(3 * 3600)).evOffset == -1)
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(1081), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"], program: program)))
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "sky")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.prefix(180).allSatisfy { $0.exposure == "1/1000 ISO 100 f/2.8" }, "the first 30 minutes hold the fixed exposure")
        #expect(frames[180].exposure != "1/1000 ISO 100 f/2.8", "then the ramp takes over")
        let pictures = await camera.pictures
        let late = pictures.suffix(60)
        #expect(late.allSatisfy { abs($0.brightness - (-1.3 - 1)) < 0.5 },
                "by night the pictures sit 1 EV under the night brightness: \(late.map(\.brightness).prefix(5))")
    }

    /// Three hours of the December sunset at 10 s by day and 30 s by night; the run's records.
    static func nightIntervalRun(_ camera: SkyCamera<RunClock>, clock: RunClock) async throws -> [FrameRecord] {
        let journal = MemoryJournal()
        var ramp = RampPlan(apertures: ["f/2.8"])
        ramp.nightIntervalMs = 30_000
        let plan = RunPlan(intervalMs: 10_000, stop: .duration(milliseconds: 3 * 3_600_000), exposure: .ramp(plan: ramp))
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "sky")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        return try journal.frames(of: ending.run.id)
    }

    @Test("the interval follows the light from 10 s by day to 30 s by night, and the night exposures grow into it")
    func intervalRamp() async throws {
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let frames = try await Self.nightIntervalRun(camera, clock: clock)
        #expect(frames.allSatisfy { $0.outcome == .taken })
        let gaps = zip(frames, frames.dropFirst()).map { $1.scheduledMs - $0.scheduledMs }
        #expect(gaps.first == 10_000 && gaps.last == 30_000, "day \(gaps.first ?? 0) ms, night \(gaps.last ?? 0) ms")
        #expect(zip(gaps, gaps.dropFirst()).allSatisfy { $1 >= $0 }, "a sunset only lengthens the interval")
        #expect(zip(frames, gaps).allSatisfy { $0.ramp?.intervalMs == $1 }, "each slot is due its recorded interval after the one before")
        let pictures = await camera.pictures
        #expect(pictures.allSatisfy { $0.brightness > RampRehearsal.Frame.black && $0.brightness < RampRehearsal.Frame.white })
        #expect((pictures.map(\.seconds).max() ?? 0) > 8.5, "night exposures longer than a 10 s interval would allow")
        #expect(frames.count < 1081, "fewer frames in 3 hours at longer intervals: \(frames.count)")
    }

    @Test("a program's interval keyframes set the interval, moving in a straight line between them")
    func programmedInterval() async throws {
        let program = try RampProgram(json: Data("""
            {"keyframes": [
              {"at": "30m", "interval": "10s"},
              {"at": "1h30m", "evOffset": -0.5, "interval": "40s"}
            ]}
            """.utf8), intervalMs: 5_000)
        #expect(program.at(.seconds(600)).interval == nil, "before the first interval keyframe, the run's own")
        #expect(program.at(.seconds(3600)).interval == .seconds(25), "halfway: halfway between 10 s and 40 s")
        #expect(program.at(.seconds(7200)).interval == .seconds(40))
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 5_000, stop: .duration(milliseconds: 3 * 3_600_000),
                           exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"], program: program)))
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "sky")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.allSatisfy { $0.outcome == .taken })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $1.scheduledMs - $0.scheduledMs == $0.ramp?.intervalMs },
                "each slot is due its recorded interval after the one before")
        for frame in frames {
            let interval = try #require(frame.ramp?.intervalMs)
            let wanted = program.at(.milliseconds(frame.scheduledMs)).interval?.wholeMilliseconds ?? 5_000
            #expect(interval == wanted, "at \(frame.scheduledMs) ms")
        }
        #expect(frames.last?.ramp?.intervalMs == 40_000)
        let pictures = await camera.pictures
        #expect(pictures.allSatisfy { $0.brightness > RampRehearsal.Frame.black && $0.brightness < RampRehearsal.Frame.white })
        #expect((pictures.map(\.seconds).max() ?? 0) > 8.5, "night exposures grow into the longer interval")
    }

    @Test("a program whose intervals leave no room is refused before the first frame", arguments: [
        (#"{"keyframes": [{"at": "1h", "interval": "2s"}]}"#, "the program's 2s interval must be longer than the 2s gap"),
        // The interval shrinks from 30 s to 10 s while the 15 s bulb exposure holds.
        (#"{"keyframes": [{"at": "0s", "mode": "fixed", "bulbMs": 15000, "iso": 800, "aperture": "f/2.8", "interval": "30s"},"#
            + #"{"at": "1h", "interval": "10s"}]}"#,
         "program keyframe at 0s: bulb 15000ms ISO 800 f/2.8 does not fit the interval less the 2s gap"),
    ])
    func programmedIntervalsWithoutRoom(_ text: String, _ message: String) async throws {
        let program = try RampProgram(json: Data(text.utf8), intervalMs: 10_000)
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(3), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"], program: program)))
        await #expect {
            _ = try await clock.flowing {
                try await Timelapse(plan: plan, camera: camera, journal: MemoryJournal(), clock: clock, wallClock: { 1_700_000_000_000 })
                    .start(cameraName: "sky")
            }
        } throws: { error in
            guard case .invalidPlan(let refusal)? = error as? TimelapseError else { return false }
            return refusal == message
        }
    }

    @Test("slots passed over while the camera is off are spaced by the ramped interval, not the plan's")
    func passedOverSlotsKeepTheRampedInterval() async throws {
        let clock = RunClock()
        // Off for ten minutes after sunset, when the interval has ramped past 20 s.
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky,
                                   offline: .seconds(9000) ..< .seconds(9600))
        let frames = try await Self.nightIntervalRun(camera, clock: clock)
        let skipped = frames.filter { $0.outcome == .skipped }
        let before = try #require(frames.last { $0.outcome == .taken && $0.scheduledMs < 9_000_000 }?.ramp?.intervalMs)
        #expect(before > 20_000, "the interval had ramped well past the plan's 10 s: \(before) ms")
        #expect(abs(skipped.count - Int(600_000 / before)) <= 1, "ten minutes at \(before) ms: \(skipped.count) slots passed over")
        var interval = Int64(10_000)
        for (frame, next) in zip(frames, frames.dropFirst()) {
            interval = frame.ramp?.intervalMs ?? interval
            #expect(next.scheduledMs - frame.scheduledMs == interval, "frame \(next.frame), \(next.outcome)")
        }
    }

    @Test("a resumed ramped run builds its ramp again and carries on ramping")
    func resumedRamp() async throws {
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(30), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"])))
        // As the journal holds a run interrupted before its first frame.
        let record = try journal.begin(plan: plan, t0UnixMs: 1_700_000_000_000, camera: "sky")
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .resume(record)
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: record.id)
        #expect(frames.count == 30 && frames.allSatisfy { $0.outcome == .taken && $0.ramp != nil }, "\(frames.prefix(2))")
    }

    @Test("a rig ramps each camera by its own meter, on one schedule whose interval fits every camera's exposure")
    func rigRampsEachCamera() async throws {
        let clock = RunClock()
        let clear = Self.rehearsal(Self.scenes[1].1).sky
        var cloudy = clear
        cloudy.cloudStops = 2
        // Two bodies with their own ladders, one under passing clouds: their meters disagree.
        let cameras = [try SkyCamera(clock: clock, sky: clear), try SkyCamera(clock: clock, sky: cloudy, profile: .sonyLike)]
        let rig = try #require(Rig([RigCamera(name: "clear", camera: cameras[0]), RigCamera(name: "cloudy", camera: cameras[1])]))
        // Shutter speeds only, as the run was first written for a clock on which two bulb
        // exposures at once each moved the time, one after the other.
        var ramp = RampPlan(maxISO: 6400, apertures: ["f/2.8"], bulbFromMs: nil, gapMs: Self.gap.wholeMilliseconds)
        ramp.nightIntervalMs = 20_000
        let plan = RunPlan(intervalMs: 10_000, stop: .duration(milliseconds: 3 * 3_600_000), exposure: .ramp(plan: ramp))
        let journal = MemoryJournal()
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, rig: rig, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "rig")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.allSatisfy { $0.outcome == .taken && $0.ramp != nil }, "\(frames.filter { $0.outcome != .taken }.prefix(2))")
        let slots = Dictionary(grouping: frames, by: \.frame).sorted { $0.key < $1.key }.map(\.value)
        #expect(slots.allSatisfy { Set($0.compactMap(\.camera)) == ["clear", "cloudy"] }, "a record per camera per slot")
        for (slot, next) in zip(slots, slots.dropFirst()) {
            let longest = slot.compactMap(\.ramp?.intervalMs).max()
            #expect(next[0].scheduledMs - slot[0].scheduledMs == longest, "slot \(slot[0].frame): the longest interval either ramp asked for")
        }
        #expect(slots.contains { $0[0].exposure != $0[1].exposure }, "each camera follows its own meter")
        for camera in cameras {
            let pictures = await camera.pictures
            #expect(pictures.count == slots.count)
            #expect(pictures.allSatisfy { $0.brightness > RampRehearsal.Frame.black && $0.brightness < RampRehearsal.Frame.white })
            for (before, after) in zip(pictures, pictures.dropFirst()) {
                #expect(abs(after.brightness - before.brightness) <= 1.0 / 3 + 0.05, "a jump at \(after.elapsed)")
            }
        }
        #expect((await cameras[0].pictures.map(\.seconds).max() ?? 0) > 8.5, "night exposures grow into the longer interval")
    }

    @Test("slots without a reading keep the exposure the ramp holds, and the run goes on")
    func missingReadingsHoldTheExposure() async throws {
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky, readingsMissing: [100, 101, 102])
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(200), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"])))
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan, camera: camera, journal: journal, clock: clock, wallClock: { 1_700_000_000_000 })
                .start(cameraName: "sky")
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.count == 200 && frames.allSatisfy { $0.outcome == .taken && $0.ramp != nil },
                "\(frames.filter { $0.outcome != .taken }.prefix(2))")
        let held = frames[100...102]
        #expect(held.allSatisfy { $0.ramp?.rate == 0 && $0.exposure == frames[99].exposure }, "held: \(held.map { $0.exposure ?? "" })")
        let pictures = await camera.pictures
        for (before, after) in zip(pictures, pictures.dropFirst()) {
            #expect(abs(after.brightness - before.brightness) <= 1.0 / 3 + 0.05, "a jump at \(after.elapsed)")
        }
    }

    @Test("a camera that gives no light readings cannot ramp, and the run says so before its first frame")
    func rampNeedsAMeter() async throws {
        let clock = RunClock()
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky, meters: false)
        let plan = RunPlan(intervalMs: 10_000, stop: .frames(3), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"])))
        await #expect {
            _ = try await clock.flowing {
                try await Timelapse(plan: plan, camera: camera, journal: MemoryJournal(), clock: clock, wallClock: { 1_700_000_000_000 })
                    .start(cameraName: "sky")
            }
        } throws: { error in
            guard case .invalidPlan(let message)? = error as? TimelapseError else { return false }
            return message.contains("this camera gives none")
        }
        #expect(await camera.pictures.isEmpty)
    }

    @Test("a ramped run interrupted and resumed carries on its ramp: the same rate, the same exposure, its interval")
    func interruptedRampCarriesOn() async throws {
        let clock = RunClock()
        let origin = clock.now
        let wallClock: @Sendable () -> Int64 = { 1_700_000_000_000 + origin.duration(to: clock.now).wholeMilliseconds }
        let camera = try SkyCamera(clock: clock, sky: Self.rehearsal(Self.scenes[1].1).sky)
        let program = try RampProgram(json: Data(#"{"keyframes": [{"at": "0s", "interval": "20s"}]}"#.utf8), intervalMs: 10_000)
        func plan(frames: Int) -> RunPlan {
            RunPlan(intervalMs: 10_000, stop: .frames(frames), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"], program: program)))
        }
        // The first 30 frames, then the run as a crash leaves it: still running, in the journal.
        let before = MemoryJournal()
        let first = try await clock.flowing {
            try await Timelapse(plan: plan(frames: 30), camera: camera, journal: before, clock: clock, wallClock: wallClock)
                .start(cameraName: "sky")
        }
        let journal = MemoryJournal()
        let record = try journal.begin(plan: plan(frames: 60), t0UnixMs: first.run.t0UnixMs, camera: "sky")
        for frame in try before.frames(of: first.run.id) { try journal.append(frame, to: record.id) }
        let ending = try await clock.flowing {
            try await Timelapse(plan: plan(frames: 60), camera: camera, journal: journal, clock: clock, wallClock: wallClock)
                .resume(record)
        }
        #expect(ending.state == .finished, "\(ending.reason)")
        let frames = try journal.frames(of: record.id)
        #expect(frames.count == 60 && frames.allSatisfy { $0.outcome == .taken }, "\(frames.filter { $0.outcome != .taken }.prefix(2))")
        let (last, next) = (frames[29], frames[30])
        #expect(next.scheduledMs == last.scheduledMs + 20_000, "due its recorded interval after the last frame before the crash")
        let (lastRamp, nextRamp) = (try #require(last.ramp), try #require(next.ramp))
        #expect(nextRamp.rate != 0 && abs(nextRamp.rate - lastRamp.rate) < 3,
                "the rate carries on: \(lastRamp.rate) then \(nextRamp.rate) EV an hour")
        #expect(abs(nextRamp.targetEV - lastRamp.targetEV) < 0.1, "\(lastRamp.targetEV) then \(nextRamp.targetEV)")
        let pictures = await camera.pictures
        #expect(abs(pictures[30].brightness - pictures[29].brightness) <= 1.0 / 3 + 0.05)
    }

    @Test("a program file that is wrong says where", arguments: [
        (#"{"keyframes": []}"#, "keyframes: empty"),
        (#"{}"#, "keyframes: missing"),
        (#"{"keyframes": [{"at": "soon"}]}"#, "keyframes[0].at: 'soon' is not a duration"),
        (#"{"keyframes": [{"at": "0s"}, {"at": "1h", "mode": "fixed", "iso": 100, "aperture": "f/8"}]}"#, "keyframes[1]: a fixed keyframe needs exactly one of shutter"),
        (#"{"keyframes": [{"at": "1h"}, {"at": "30m"}]}"#, "in time order"),
        (#"{"keyframes": [{"at": "0s", "evOffset": 9}]}"#, "keyframes[0].evOffset: must be a number of stops between -5 and 5"),
        (#"{"keyframes": [{"at": "0s", "interval": "soon"}]}"#, "keyframes[0].interval: must be a duration of 100ms or more"),
        (#"{"keyframes": [{"at": "0s", "interval": 30}]}"#, "keyframes[0].interval: expected a string"),
        (#"{"keyframes": [{"at": "0s", "mode": "manual"}]}"#, "keyframes[0].mode"),
        (#"{"keyframes": [{"at": "0s", "iso": -1, "mode": "fixed"}]}"#, "keyframes[0].iso: expected a whole number"),
        (#"{"keyframes": [{"at": "0s", "shutter": "1/500"}]}"#, "keyframes[0].shutter: belongs to a fixed keyframe"),
        (#"{"keyframes": [{"at": "0s", "evoffset": 1}]}"#, "keyframes[0].evoffset: unknown member"),
        (#"{"frames": []}"#, "frames: unknown member; did you mean keyframes?"),
        (#"[1, 2]"#, "not a JSON object"),
        (#"{"keyframes": "#, "not a JSON object like"),
    ])
    func programErrors(_ text: String, _ message: String) {
        #expect {
            try RampProgram(json: Data(text.utf8), intervalMs: 10_000)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("a fixed exposure set by day goes black by night: the rehearsal can tell a bad ramp")
    func fixedExposureFails() {
        let quality = RampQuality(Self.rehearsal(Self.scenes[1].1).run(.fixed))
        #expect(quality.clipped > 100)
        #expect(quality.settingChanges == 0)
    }

    @Test("the allocator uses the time first, then the ISO; ladder steps are whole thirds of a stop")
    func allocationByPriority() throws {
        let limits = RampRehearsal.limits(profile: .nikonLike, maxISO: 6400, apertures: ["f/2.8"], gap: .seconds(2))
        let allocator = ExposureAllocator(limits: limits)
        let day = try #require(allocator.exposure(for: 13, interval: .seconds(10)))
        #expect(day.iso.rawValue == 100 && day.bulbMilliseconds == nil)
        #expect(abs(day.ev100 - 13) < 1e-9, "f/2.8 (3), 1/1000 (−10): \(day.text)")
        let brighter = try #require(allocator.exposure(for: 13 + 1.0 / 3, interval: .seconds(10)))
        #expect(abs(brighter.ev100 - day.ev100 - 1.0 / 3) < 1e-9)
        let night = try #require(allocator.exposure(for: -5.5, interval: .seconds(10)))
        #expect(night.seconds <= 8 && night.bulbMilliseconds != nil && night.iso.rawValue > 100, "\(night.text)")
        #expect(abs(night.ev100 - -5.5) < 0.01, "bulb time makes up for the ISO step exactly: \(night.ev100)")
        let beyond = try #require(allocator.exposure(for: -12, interval: .seconds(10)))
        #expect(beyond.iso.rawValue == 6400 && beyond.bulbMilliseconds == 8000, "clamped at the limits: \(beyond.text)")
        #expect(allocator.exposure(for: 0, interval: .seconds(1)) == nil, "an interval shorter than the gap leaves no exposure")
    }

    @Test("the simulated camera renders a picture as the rehearsal does: scene light against the exposure set")
    func virtualCameraBrightness() throws {
        var camera = VirtualCamera(profile: .nikonLike)
        for text in ["f/2.8", "1/1000", "100"] {
            let setting: SettingID = text.hasPrefix("f/") ? .aperture : text.contains("/") ? .shutterSpeed : .iso
            try camera.apply(try #require(SettingValue(setting: setting, text: text)))
        }
        camera.sceneEV = ExposureStops(twentyFourths: 13 * 24)
        #expect(camera.pictureBrightness() == 0, "f/2.8, 1/1000, ISO 100 is EV 13")
        camera.sceneEV = ExposureStops(twentyFourths: 12 * 24)
        #expect(camera.pictureBrightness() == -1, "a stop less light, a stop darker")
        try camera.apply(.shutterSpeed(.bulb))
        camera.sceneEV = ExposureStops(twentyFourths: -2 * 24)
        #expect(abs((camera.pictureBrightness(bulb: .seconds(2)) ?? 99) - -4) < 1e-9, "EV −2 at f/2.8, 2 s, ISO 100 (EV 2): 4 stops under")
        #expect(camera.pictureBrightness() == nil, "bulb needs a time")
    }

    @Test("clouds darken the modelled sky by up to the stops asked, smoothly, the same for the same seed")
    func clouds() {
        let clear = Self.rehearsal(Self.scenes[0].1).sky
        var cloudy = clear
        cloudy.cloudStops = 2
        cloudy.cloudSeed = 7
        let minutes = stride(from: 0, through: 180 * 60, by: 10).map { Duration.seconds($0) }
        let losses = minutes.map { clear.ev(at: $0) - cloudy.ev(at: $0) }
        #expect(losses.allSatisfy { $0 >= 0 && $0 <= 2 }, "clouds only take light away, at most 2 stops")
        #expect((losses.max() ?? 0) > 0.5, "and they do take some")
        #expect(zip(losses, losses.dropFirst()).allSatisfy { abs($1 - $0) < 0.12 }, "eased: at most about 0.1 EV in 10 s")
        var again = clear
        again.cloudStops = 2
        again.cloudSeed = 7
        #expect(minutes.allSatisfy { again.ev(at: $0) == cloudy.ev(at: $0) })
    }

    @Test("the sun stands where published tables put it: sunset in Berlin at midsummer and midwinter")
    func solarPosition() {
        // At the published sunset the sun's centre is 0.833° below the horizon without
        // refraction, which lifts it by about 0.4° there: −0.43° as seen.
        let june = ISO8601DateFormatter().date(from: "2026-06-21T19:33:00Z")!.timeIntervalSince1970
        let december = ISO8601DateFormatter().date(from: "2026-12-21T14:54:00Z")!.timeIntervalSince1970
        #expect(abs(SolarPosition(unixSeconds: june, latitude: 52.52, longitude: 13.405).elevation - -0.43) < 0.15)
        #expect(abs(SolarPosition(unixSeconds: december, latitude: 52.52, longitude: 13.405).elevation - -0.43) < 0.15)
        let noon = ISO8601DateFormatter().date(from: "2026-06-21T11:07:00Z")!.timeIntervalSince1970
        let high = SolarPosition(unixSeconds: noon, latitude: 52.52, longitude: 13.405)
        #expect(abs(high.elevation - 61) < 0.3, "90 − 52.5 + 23.44: \(high.elevation)")
        #expect(abs(high.azimuth - 180) < 2, "due south at solar noon: \(high.azimuth)")
    }
}
