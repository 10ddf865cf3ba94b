import CameraKit
import CommandCore
import DaemonClient
import Intervalometer
import Testing
import UnleashedApp
import UnleashedProtocol

/// What a run's display, last line and failure say, computed from records without a terminal.
@Suite struct RunReportTests {
    private let plan = RunPlan(intervalMs: 1000, stop: .frames(10))

    @Test func progressCountsRecordsAndTellsTheSlotAndTheTimeLeft() {
        var progress = RunProgress(plan: plan)
        let start = ContinuousClock.now
        progress.learn(t0UnixMs: 50_000, now: start, wallMs: 50_000)
        progress.note(FrameRecord(frame: 1, scheduledMs: 0, latenessMicros: 300, outcome: .taken), now: start, wallMs: 50_000)
        progress.note(FrameRecord(frame: 2, scheduledMs: 1000, latenessMicros: 200, outcome: .taken), now: start, wallMs: 51_000)
        progress.note(FrameRecord(frame: 3, scheduledMs: 2000, outcome: .skipped, error: "busy"), now: start, wallMs: 52_000)
        #expect(progress.t0 == start)
        #expect((progress.taken, progress.failed, progress.skipped) == (2, 0, 1))
        #expect(progress.lastLatenessMicros == 200 && progress.maxLatenessMicros == 300)
        #expect(progress.last?.frame == 3)
        #expect(progress.totalSlots == 10)
        #expect(progress.nextDue == .milliseconds(3000))
        #expect(progress.fractionOfInterval(at: .milliseconds(2500)) == 0.5)
        #expect(progress.remaining(at: .milliseconds(2500)) == .milliseconds(6500))
    }

    @Test func progressWithoutT0EstimatesItFromTheFirstRecordAndCountsSlotsUntilAnInstant() {
        var progress = RunProgress(plan: RunPlan(intervalMs: 1000, stop: .until(unixMilliseconds: 20_500)))
        #expect(progress.totalSlots == nil)
        let now = ContinuousClock.now
        progress.note(FrameRecord(frame: 1, scheduledMs: 0, sentMs: 10, completedMs: 500, outcome: .taken), now: now, wallMs: 10_500)
        #expect(progress.t0UnixMs == 10_000)
        #expect(progress.t0 == now - .milliseconds(500))
        #expect(progress.totalSlots == 11)
    }

    @Test func aRunsLastLineAndItsJSON() {
        let summary = RunSummary(frames: [FrameRecord(frame: 1, scheduledMs: 0, latenessMicros: 1500, outcome: .taken)])
        let end = RunEnd(id: 7, state: "finished", reason: "all slots done", summary: summary, recoveryFile: "/tmp/r.jsonl")
        #expect(RunReport.text(end) == "Run 7 finished (all slots done): 1 taken, 0 failed, 0 skipped; "
            + "lateness p50 1.500 ms, p99 1.500 ms, max 1.500 ms")
        let run = RunReport.json(end).objectValue?["run"]?.objectValue
        #expect(run?["id"] == .integer(7))
        #expect(run?["recoveryFile"] == .string("/tmp/r.jsonl"))
        #expect(run?["summary"]?.objectValue?["taken"] == .integer(1))
    }

    @Test func aRunsFailureHasItsCodeAndExitStatus() {
        let short = CameraFailure(.intervalTooShort(minimumMs: 2300, reason: "a 2s bulb exposure"))
        #expect((short.code, short.status.rawValue, short.extra) == ("intervalTooShort", 64, ["minimumMs": .integer(2300)]))
        #expect(CameraFailure(.owned("run 3 is shot by process 12")).status.rawValue == 75)
        #expect(CameraFailure(.stoppedBeforeStart("stopped while waiting")).status.rawValue == ExitStatus.interrupted.rawValue)
        let busy = CameraError.readOnly(.iso)
        #expect(CameraFailure(TimelapseError.camera(busy)).code == busy.code)
        #expect(CameraFailure(TimelapseError.camera(busy)).status.rawValue == busy.exitStatus)
        #expect(RunEnd.Verdict.journalFailed.exitStatus == 74)
        #expect(RunEnd.Verdict.refused.exitStatus == 65)
    }
}

@Suite struct RunFailureOfDaemonTests {
    @Test func aDaemonsRefusalReadsByItsHTTPStatus() {
        let forbidden = CameraFailure(.http(status: 403, code: "forbidden", message: "a viewer cannot stop jobs", camera: nil))
        #expect((forbidden.code, forbidden.message, forbidden.status.rawValue) == ("forbidden", "a viewer cannot stop jobs", 77))
        #expect(CameraFailure(.http(status: 409, code: "cameraBusy", message: "busy", camera: nil)).status.rawValue == 65)
        #expect(CameraFailure(.http(status: 404, code: "404", message: "there is no job 9", camera: nil)).status.rawValue == 64)
        #expect(CameraFailure(.http(status: 503, code: "x", message: "down", camera: nil)).status.rawValue == 69)
        #expect(CameraFailure(.notReachable(socket: "/run/s", reason: "refused")).code == "noDaemon")
        let camera = CameraError.readOnly(.iso)
        #expect(CameraFailure(.http(status: 409, code: camera.code, message: "", camera: camera)).status.rawValue == camera.exitStatus)
    }
}
