@testable import Daemon
import Foundation
import Intervalometer
import JSON
import Testing
import UnleashedAPI
import UnleashedProtocol

/// The fleet as a daemon folds it from its broker's messages, for `GET /v1/fleet` and
/// `unleashed fleet status`: no broker here, only the messages.
struct FleetStateTests {
    /// Folds the message in and expects it to be state (or, with `expected` false, not).
    private func taken(_ fleet: inout FleetState, _ topic: String, payload: [UInt8], expected: Bool = true,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let wasState = fleet.take(topic: topic, payload: payload)
        #expect(wasState == expected, "\(topic)", sourceLocation: sourceLocation)
    }

    private func bytes(_ value: JSONValue) -> [UInt8] { Array(value.data) }

    private func job(_ id: Int64, _ state: JobState, frames: [FrameRecord]) -> [UInt8] {
        bytes(JobDocument(id: id, camera: "left", cameras: ["left"], kind: .timelapse, state: state, plan: RunPlan(intervalMs: 500, stop: .never),
                          t0UnixMs: 1_764_000_000_000, reason: nil, summary: RunSummary(frames: frames), lastFrame: frames.last).json)
    }

    private func frame(_ slot: Int, _ outcome: FrameOutcome, camera: String? = nil) -> FrameRecord {
        FrameRecord(frame: slot, scheduledMs: Int64(slot - 1) * 500, outcome: outcome, camera: camera)
    }

    private func frameMessage(_ record: FrameRecord, job: Int64) -> [UInt8] {
        bytes(JobEvent.frame(record, job: job).data)
    }

    @Test("hosts, clocks, cameras, jobs and their slots fold into the document; the rig's slots span the running hosts")
    func folds() throws {
        var fleet = FleetState(prefix: "unleashed")
        for node in ["north", "south"] {
            taken(&fleet, "unleashed/\(node)/availability", payload: Array("online".utf8))
            taken(&fleet, "unleashed/\(node)/clock", payload: bytes(["synchronised": true, "estimatedErrorMs": .number(0.5), "maximumErrorMs": 2]))
            taken(&fleet, "unleashed/\(node)/cameras/left/state", payload: bytes(["name": "left", "connection": "ready"]))
            taken(&fleet, "unleashed/\(node)/cameras/left/run", payload: bytes(["running": true, "frames": 3]))
        }
        let north = [frame(1, .taken), frame(2, .taken), frame(3, .failed)]
        taken(&fleet, "unleashed/north/jobs/4", payload: job(4, .running, frames: []))
        for record in north { taken(&fleet, "unleashed/north/jobs/4/frames", payload: frameMessage(record, job: 4)) }
        taken(&fleet, "unleashed/north/jobs/4", payload: job(4, .running, frames: north))
        taken(&fleet, "unleashed/south/jobs/9", payload: job(9, .running, frames: [frame(1, .taken)]))
        taken(&fleet, "unleashed/south/jobs/9/frames", payload: frameMessage(frame(1, .taken), job: 9))

        let document = fleet.document(connected: true, node: "north")
        #expect(document.hosts.map(\.node) == ["north", "south"])
        let host = try #require(document.hosts.first)
        #expect(host.online && host.clock?.synchronised == true && host.clock?.estimatedErrorMs == 0.5)
        #expect(host.cameras == [FleetHost.Camera(name: "left", connection: "ready", running: true, frames: 3)])
        #expect(host.jobs.map(\.id) == [4] && host.jobs[0].slot == 3 && host.jobs[0].taken == 2 && host.jobs[0].failed == 1)
        #expect(host.jobs[0].recent == [.init(slot: 1, taken: 1), .init(slot: 2, taken: 1), .init(slot: 3, failed: 1)])
        #expect(document.rig == FleetRig(lowestSlot: 1, highestSlot: 3))
        // The document is what the API declares.
        #expect(try FleetDocument(json: document.json) == document)

        // `fleet status --json`'s shape, from the same fold.
        let status = try #require(fleet.statusJSON.objectValue?["south"]?.objectValue)
        #expect(status["availability"] == "online" && status["jobs"]?.objectValue?["9"] != nil)
        #expect(status["cameras"]?.objectValue?["left"]?.objectValue?["run"]?.objectValue?["frames"] == 3)
    }

    @Test("a rig's cameras count into one slot; a cleared retained message removes what it held; another host's goodbye shows offline")
    func slotsAndClearing() throws {
        var fleet = FleetState(prefix: "rig/a")
        taken(&fleet, "rig/a/h1/jobs/2", payload: job(2, .running, frames: []))
        for record in [frame(1, .taken, camera: "left"), frame(1, .skipped, camera: "right"), frame(2, .taken, camera: "left"), frame(2, .taken, camera: "right")] {
            taken(&fleet, "rig/a/h1/jobs/2/frames", payload: frameMessage(record, job: 2))
        }
        taken(&fleet, "rig/a/h1/cameras/left/state", payload: bytes(["name": "left", "connection": "ready"]))
        var host = try #require(fleet.document(connected: true, node: "h1").hosts.first)
        #expect(host.jobs.first?.recent == [.init(slot: 1, taken: 1, skipped: 1), .init(slot: 2, taken: 2)])
        #expect(!host.online, "no availability heard yet")

        taken(&fleet, "rig/a/h1/cameras/left/state", payload: [])
        taken(&fleet, "rig/a/h1/availability", payload: Array("offline".utf8))
        host = try #require(fleet.document(connected: false, node: "h1").hosts.first)
        #expect(host.cameras.isEmpty && !host.online)
    }

    @Test("bounded: 24 slots a job, the running jobs and the two newest ended ones a host; frames of an unknown job are dropped")
    func bounded() throws {
        var fleet = FleetState(prefix: "unleashed")
        taken(&fleet, "unleashed/h/jobs/1", payload: job(1, .running, frames: []))
        for slot in 1...100 { _ = fleet.take(topic: "unleashed/h/jobs/1/frames", payload: frameMessage(frame(slot, .taken), job: 1)) }
        _ = fleet.take(topic: "unleashed/h/jobs/77/frames", payload: frameMessage(frame(1, .taken), job: 77))
        var recent = try #require(fleet.document(connected: true, node: "h").hosts.first?.jobs.first?.recent)
        #expect(recent.count == FleetState.recentSlots && recent.first?.slot == 77 && recent.last?.slot == 100)
        for id in Int64(2)...Int64(8) { _ = fleet.take(topic: "unleashed/h/jobs/\(id)", payload: job(id, .finished, frames: [])) }
        #expect(fleet.hosts["h"]?.jobs.keys.sorted() == [1, 7, 8])
        #expect(fleet.hosts["h"]?.recent.keys.sorted() == [1])
        recent = try #require(fleet.document(connected: true, node: "h").hosts.first?.jobs.first?.recent)
        #expect(recent.count == 24)
        // Its run over, the host shows its latest job.
        _ = fleet.take(topic: "unleashed/h/jobs/1", payload: job(1, .finished, frames: []))
        let shown = try #require(fleet.document(connected: true, node: "h").hosts.first)
        #expect(shown.jobs.map(\.id) == [8])
        #expect(fleet.document(connected: true, node: "h").rig == nil)
    }

    @Test("topics outside the prefix, commands, fleet commands and garbage are not state; garbage does not trap")
    func refuses() {
        var fleet = FleetState(prefix: "unleashed")
        taken(&fleet, "other/h/availability", payload: Array("online".utf8), expected: false)
        taken(&fleet, "unleashed/fleet/shoot", payload: Array("{}".utf8), expected: false)
        taken(&fleet, "unleashed/h/cameras/left/shoot", payload: [], expected: false)
        taken(&fleet, "unleashed/h/jobs/x", payload: [], expected: false)
        taken(&fleet, "unleashed/h/jobs/1/frames", payload: Array("not json".utf8), expected: false)
        taken(&fleet, "unleashed/h/clock", payload: [0xFF, 0xFE])
        taken(&fleet, "unleashed/h/jobs/3", payload: Array("{\"id\": \"x\"}".utf8))
        let document = fleet.document(connected: true, node: "h")
        #expect(document.hosts.first?.clock == nil && document.hosts.first?.jobs == [])
    }
}
