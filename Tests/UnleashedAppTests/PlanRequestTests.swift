import CameraKit
import Foundation
import Intervalometer
import Testing
import UnleashedApp

/// How the words of `timelapse` and `video` become a plan, or a refusal naming what to change,
/// without launching the CLI.
@Suite struct PlanRequestTests {
    /// Noon today, so that 11:00 has passed and 13:00 has not.
    private static let noon = Calendar.current.date(bySettingHour: 12, minute: 0, second: 0, of: Date())!

    static func timelapse(_ interval: String?, frames: Int? = 3, _ edit: (inout PlanRequest) -> Void = { _ in }) -> PlanRequest {
        var request = PlanRequest()
        request.interval = interval
        request.schedule.frames = frames
        edit(&request)
        return request
    }

    private static func refusal<Value>(_ make: () throws(PlanRefusal) -> Value) -> PlanRefusal? {
        do throws(PlanRefusal) {
            _ = try make()
            return nil
        } catch {
            return error
        }
    }

    @Test("a time-lapse's options make its plan: interval, stop, exposure, overrun, gap, start delay")
    func plan() throws {
        let request = Self.timelapse("5s", frames: 10) {
            $0.bracket = "5x2/3ev"
            $0.schedule.overrun = "burst"
            $0.schedule.gap = "300ms"
            $0.schedule.start.startIn = "1m"
        }
        let planned = try request.plan(now: Self.noon)
        #expect(planned.plan == RunPlan(intervalMs: 5000, stop: .frames(10), exposure: .bracket(count: 5, stepThirds: 2),
                                        overrun: .burst, minimumGapMs: 300))
        #expect(planned.delay == .seconds(60))
        #expect(planned.notices.isEmpty)
        var ramp = Self.timelapse("10s") {
            $0.ramp = ["auto"]
            $0.minISO = 200
            $0.rampGap = "3s"
            $0.nightInterval = "30s"
        }
        guard case .ramp(let rampPlan) = try ramp.plan(now: Self.noon).plan.exposure else { Issue.record("not a ramp"); return }
        #expect(rampPlan.minISO == 200 && rampPlan.gapMs == 3000 && rampPlan.nightIntervalMs == 30_000)
        ramp.schedule.frames = nil
        ramp.schedule.duration = "2h"
        #expect(try ramp.plan(now: Self.noon).plan.stop == .duration(milliseconds: 7_200_000))
    }

    @Test("a ramp program is read from its file; one that cannot be read is refused as programFile")
    func program() {
        let request = Self.timelapse("5s") { $0.ramp = ["program", "/plans/sunset.json"] }
        let refused = Self.refusal { () throws(PlanRefusal) in
            try request.plan(now: Self.noon) { _ in throw CocoaError(.fileNoSuchFile) }
        }
        #expect(refused?.code == "programFile")
        #expect(refused?.message.hasPrefix("--ramp program: cannot read /plans/sunset.json") == true, "\(String(describing: refused))")
    }

    @Test("plans that cannot be written are refused, naming what to change", arguments: [
        (timelapse(nil), "say how often to shoot: --interval 5s"),
        (timelapse("1s", frames: nil), "say when to stop"),
        (timelapse("1s") { $0.bracket = "4x1ev" }, "is not a bracket"),
        (timelapse("1s") { $0.schedule.overrun = "later" }, "choose skip, defer or burst"),
        (timelapse("1s", frames: nil) { $0.schedule.until = "25:00" }, "is not a time of day"),
        (timelapse("5s") { $0.ramp = ["sunset"] }, "is not a ramp; write --ramp auto or --ramp program FILE"),
        (timelapse("5s") { ($0.ramp, $0.bulb) = (["auto"], "1s") }, "choose one of --bulb, --bracket and --ramp"),
        (timelapse("5s") { ($0.ramp, $0.minISO, $0.maxISO) = (["auto"], 800, 400) }, "--min-iso 800 is above --max-iso 400"),
        (timelapse("5s") { $0.rampGap = "1s" }, "--ramp-gap goes with --ramp"),
        (timelapse("5s", frames: 0), "--frames: a run needs at least 1 slot"),
        (timelapse("5s") { $0.schedule.hookTimeout = "5s" }, "--hook-timeout is the time limit of --hook"),
        (timelapse("5s") { ($0.schedule.start.startIn, $0.schedule.start.startAt) = ("1s", "10:00") }, "choose --start-in or --start-at"),
        (timelapse("25h"), "--interval: 25h is too long; it can be at most a day (24h)"),
        (timelapse("1s") { $0.schedule.start.startIn = "8761h" }, "--start-in: 8761h is too long; a run starts within a year (8760h)"),
        (timelapse("1s", frames: nil) { $0.schedule.duration = "99999999999999h" }, "--duration: '99999999999999h' is too long to be counted"),
        (timelapse("24h", frames: Int.max), "too long a run to be counted"),
        (timelapse("5s") { ($0.ramp, $0.nightInterval) = (["auto"], "30h") }, "--night-interval: 30h is too long"),
    ])
    func refused(request: PlanRequest, message: String) {
        let refused = Self.refusal { () throws(PlanRefusal) in try request.plan(now: Self.noon) }
        #expect(refused?.message.contains(message) == true, "\(String(describing: refused))")
    }

    @Test("a word that is not a duration is refused as invalidDuration, one that is not a time of day as usage")
    func codes() {
        #expect(Self.refusal { () throws(PlanRefusal) in try Self.timelapse("soon").plan(now: Self.noon) }?.code == "invalidDuration")
        #expect(Self.refusal { () throws(PlanRefusal) in try Self.timelapse("1s", frames: nil) { $0.schedule.until = "noon" }.plan(now: Self.noon) }?
            .code == "usage")
        #expect(Self.refusal { () throws(PlanRefusal) in try PlanText.duration("99999999999999h", for: "bulb") }
            == PlanRefusal("bulb: '99999999999999h' is too long to be counted in milliseconds; write a duration like 30s, 1m30s or 2h",
                           code: "invalidDuration"))
    }

    @Test("a time of day that has passed today is told: --start-at starts tomorrow, --until stops tomorrow")
    func laterDay() throws {
        let start = try Self.timelapse("1s") { $0.schedule.start.startAt = "11:00" }.plan(now: Self.noon)
        #expect(start.delay == .seconds(23 * 3600))
        #expect(start.notices.map(\.message) == ["--start-at 11:00 is tomorrow: 11:00 has passed today, so the run starts tomorrow at 11:00"])
        let until = try Self.timelapse("1s", frames: nil) { $0.schedule.until = "11:00" }.plan(now: Self.noon)
        #expect(until.notices.map(\.message) == ["--until 11:00 is tomorrow: the run stops at the first 11:00 after it starts, tomorrow"])
        #expect(until.plan.stop == .until(unixMilliseconds: Int64(Self.noon.addingTimeInterval(23 * 3600).timeIntervalSince1970 * 1000)))
        let today = try Self.timelapse("1s", frames: nil) { $0.schedule.until = "13:00" }.plan(now: Self.noon)
        #expect(today.notices.isEmpty)
    }

    @Test("video record is a one-clip run; video clips a clip in every slot; bad lengths are refused")
    func video() throws {
        let record = try StartRequest(startIn: "2s").recording("30s", now: Self.noon)
        #expect(record.plan == RunPlan(intervalMs: 30_000, stop: .frames(1), exposure: .video(milliseconds: 30_000)))
        #expect(record.delay == .seconds(2))
        var schedule = ScheduleRequest()
        schedule.frames = 4
        #expect(try schedule.clips("5s", every: "1m", now: Self.noon).plan
            == RunPlan(intervalMs: 60_000, stop: .frames(4), exposure: .video(milliseconds: 5000)))
        let refusals: [(() throws(PlanRefusal) -> PlannedRun, String)] = [
            ({ () throws(PlanRefusal) in try schedule.clips("0s", every: "5s", now: Self.noon) }, "video clips: the duration must be longer than 0"),
            ({ () throws(PlanRefusal) in try schedule.clips("1s", every: "25h", now: Self.noon) }, "--every: 25h is too long; it can be at most a day"),
            ({ () throws(PlanRefusal) in try ScheduleRequest().clips("1s", every: "5s", now: Self.noon) }, "say when to stop"),
            ({ () throws(PlanRefusal) in try StartRequest().recording("later", now: Self.noon) }, "is not a duration"),
            ({ () throws(PlanRefusal) in try StartRequest().recording("25h", now: Self.noon) }, "video record: 25h is too long; it can be at most a day"),
            ({ () throws(PlanRefusal) in try StartRequest(startIn: "9000h").recording("1s", now: Self.noon) }, "--start-in: 9000h is too long"),
            ({ () throws(PlanRefusal) in try StartRequest(startIn: "1s", startAt: "10:00").recording("1s", now: Self.noon) },
             "choose --start-in or --start-at"),
        ]
        for (make, message) in refusals {
            #expect(Self.refusal(make)?.message.contains(message) == true, "\(message)")
        }
    }

    @Test("--resume refuses any option that would change the stored plan, naming it")
    func resumeConflict() {
        #expect(PlanRequest().resumeConflict == nil)
        #expect(Self.timelapse(nil, frames: nil) { $0.bulb = "1s" }.resumeConflict?.message
            == "--bulb cannot be changed on --resume: the run continues with the plan it was started with")
        #expect(Self.timelapse(nil, frames: nil) { $0.schedule.overrun = "defer" }.resumeConflict?.message.hasPrefix("--overrun") == true)
    }

    @Test("brackets: an odd count of 3 or more, steps in thirds of a stop")
    func brackets() {
        #expect(PlanRequest.bracket("3x1ev") == .bracket(count: 3, stepThirds: 3))
        #expect(PlanRequest.bracket("5X2/3EV") == .bracket(count: 5, stepThirds: 2))
        for text in ["4x1ev", "1x1ev", "3x0ev", "3x1/2ev", "3x1", "ax1ev"] { #expect(PlanRequest.bracket(text) == nil, "\(text)") }
    }

    @Test("geotag reads signed numbers and refuses words that are options, not numbers, or out of range")
    func geotag() throws {
        let moment = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try GeoPosition(words: ["--", "-33.8568", "151.2153", "5"], now: moment)
            == GeoPosition(latitude: -33.8568, longitude: 151.2153, altitude: 5, fixTime: 1_700_000_000_000))
        let refusals = [
            (["--fast", "1"], PlanRefusal("unknown option '--fast'; `unleashed geotag --help` lists the options")),
            (["north", "1"], PlanRefusal("latitude 'north' is not a number", code: "invalidArgument")),
            (["91", "1"], PlanRefusal("latitude must be between -90 and 90 degrees", code: "invalidArgument")),
            (["1"], PlanRefusal("geotag takes a latitude, a longitude and optionally an altitude, e.g. unleashed geotag -33.8568 151.2153 5")),
        ]
        for (words, refusal) in refusals {
            #expect(Self.refusal { () throws(PlanRefusal) in try GeoPosition(words: words, now: moment) } == refusal)
        }
    }

    @Test("time sync: the host's time and offset, the offset written as +HH:MM")
    func wallTime() throws {
        let zone = try #require(TimeZone(secondsFromGMT: -(5 * 3600 + 30 * 60)))
        let time = WallTime(Date(timeIntervalSince1970: 1_700_000_000.25), in: zone)
        #expect(time == WallTime(unixMilliseconds: 1_700_000_000_250, utcOffsetMinutes: -330))
        #expect(time.offsetText == "-05:30")
        #expect(WallTime(unixMilliseconds: 0, utcOffsetMinutes: 120).offsetText == "+02:00")
    }
}
