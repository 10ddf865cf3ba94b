import DaemonClient
import Foundation
import JSON
import Testing
import UnleashedAPI

/// What `unleashed fleet` prints from the hosts' documents, and its exit status.
struct FleetSummaryTests {
    /// Hosts' answers as they come off the broker, read with the type the bridge writes them with.
    private func answers(_ documents: JSONValue...) throws -> [FleetAnswer] {
        let clock: JSONValue = ["synchronised": true, "estimatedErrorMs": .number(0.5), "maximumErrorMs": 8]
        return try documents.map { try StrictJSONDecoder().decode(FleetAnswer.self, from: $0.merging(["clock": clock])) }
    }

    private func host(_ slot: Int, state: String = "running", synchronised: Bool = true) -> JSONValue {
        [
            "availability": "online",
            "clock": ["synchronised": .bool(synchronised), "estimatedErrorMs": .number(0.4), "maximumErrorMs": 12],
            "cameras": ["cam": ["state": ["name": "cam", "connection": "ready", "moduleBattery": 80],
                                "run": ["running": .bool(state == "running"), "frames": .integer(Int64(slot))]]],
            "jobs": ["1": ["state": "finished", "summary": ["taken": 20, "failed": 0, "skipped": 0], "lastFrame": ["frame": 20]],
                     "2": ["state": .string(state), "summary": ["taken": .integer(Int64(slot)), "failed": 0, "skipped": 0],
                           "lastFrame": ["frame": .integer(Int64(slot))]]],
        ]
    }

    @Test("status shows each host, its cameras and running jobs, and the slots the rig has reached")
    func status() {
        let text = FleetShotSummary.statusText(["host1": host(12), "host2": host(11, synchronised: false)])
        #expect(text.contains("host1: online  clock ±0.4 ms"))
        #expect(text.contains("host2: online  clock NOT synchronised (estimate 0.4 ms)"))
        #expect(text.contains("  cam: ready, module 80%, time-lapse, 12 frames"))
        #expect(text.contains("  job 2 running: slot 12, 12 taken, 0 failed, 0 skipped"))
        #expect(!text.contains("job 1"), "a finished job is shown only when nothing runs")
        #expect(text.hasSuffix("rig: slots 11 to 12 (host1 12, host2 11)"))
        #expect(FleetShotSummary.statusText(["host1": host(12), "host2": host(12)]).hasSuffix("rig: every running host at slot 12"))
        let idle = FleetShotSummary.statusText(["host1": host(20, state: "finished")])
        #expect(idle.contains("job 2 finished: slot 20") && !idle.contains("rig:"))
        #expect(FleetShotSummary.statusText([:]).hasPrefix("No host on the broker"))
    }

    @Test("a stop lists each host's jobs stopped, says when nothing ran, and exits 65 when a job would not stop")
    func stop() throws {
        let stopped: JSONValue = ["node": "a", "accepted": true, "stopped": [["job": 4, "cameras": ["left", "right"], "frames": 12, "lastSlot": 12]]]
        let idle: JSONValue = ["node": "b", "accepted": true, "stopped": []]
        let stuck: JSONValue = ["node": "c", "accepted": true, "stopped": [], "failed": [["job": 9, "error": "job 9 is not running"]]]
        let summary = FleetShotSummary(at: Date(), answers: try answers(stopped, idle))
        #expect(summary.status == 0)
        #expect(summary.stopText == "Stop: 2 hosts answered\n  a: job 4 on left, right stopped after slot 12, 12 taken\n  b: nothing was running")
        let failing = FleetShotSummary(at: Date(), answers: try answers(stopped, stuck))
        #expect(failing.status == 65)
        #expect(failing.stopText.hasSuffix("c: job 9 did not stop: job 9 is not running"))
        #expect(FleetShotSummary(at: Date(), answers: []).stopText.hasPrefix("No host answered the stop"))
    }

    @Test("a shot's exit status: 0 when every host fired every camera, 65 when one refused or failed, 69 when none answered")
    func shotStatus() throws {
        let fired: JSONValue = ["node": "a", "accepted": true, "shots": [["camera": "cam", "ok": true, "answeredAfterAtMs": 61, "shot": ["counter": 3]]]]
        let failed: JSONValue = ["node": "b", "accepted": true, "shots": [["camera": "cam", "ok": false, "error": "the camera is busy"]]]
        let refused: JSONValue = ["node": "c", "accepted": false, "reason": "no group north on this host"]
        let at = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(FleetShotSummary(at: at, answers: try answers(fired)).status == 0)
        #expect(FleetShotSummary(at: at, answers: try answers(fired, failed)).status == 65)
        #expect(FleetShotSummary(at: at, answers: try answers(fired, refused)).status == 65)
        #expect(FleetShotSummary(at: at, answers: []).status == 69)
        let text = FleetShotSummary(at: at, answers: try answers(fired, failed, refused)).text
        #expect(text.contains("a: clock ±0.5 ms  cam #3 (confirmed 61 ms after the time)"))
        #expect(text.contains("b: clock ±0.5 ms  cam failed: the camera is busy"))
        #expect(text.contains("c: refused: no group north on this host"))
    }
}
