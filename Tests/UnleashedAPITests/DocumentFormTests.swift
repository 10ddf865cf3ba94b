import CameraKit
import Foundation
import Intervalometer
import JSON
import Testing
import UnleashedAPI

/// Documents are read through `Decodable` by ``StrictJSONDecoder``: a failure names the member by
/// its whole path, and a member a newer daemon has added is let be. Those written through
/// `Codable` write the members they always did.
@Suite("Documents through Codable")
struct DocumentFormTests {
    static let status = CameraStatus(connection: .ready, moduleBattery: 80, cameraBattery: nil, storage: .ok, shotsRemaining: 10,
                                     cameraPower: .on, exposureMode: .manual, meteredEV: .zero, busy: false, shotCounter: 3)

    @Test("a camera value inside a document is named by its path from the document")
    func nestedPaths() throws {
        guard case .object(var members) = Self.status.json else { Issue.record("not an object"); return }
        members["busy"] = nil
        let document: JSONValue = ["version": "1.0", "uptimeSeconds": .number(1.5), "cameras": [
            ["name": "a", "source": "demo", "status": Self.status.json, "error": nil],
            ["name": "b", "source": "demo", "status": .object(members), "error": nil],
        ]]
        #expect(throws: JSONShapeError(path: "status.cameras[1].status.busy", problem: "missing")) { try DaemonStatus(json: document) }
        #expect(throws: JSONShapeError(path: "identity.capabilities[1]", problem: "'teleport' is not a capability")) {
            try CameraIdentity(json: ["name": "cam", "capabilities": ["shoot", "teleport"]])
        }
        #expect(throws: JSONShapeError(path: "body.pictures[0].saved", problem: "'yesterday' is not an ISO 8601 time")) {
            try PictureList(json: ["pictures": [["name": "a.jpg", "bytes": 1, "cameraPath": "/a.jpg", "shotCounter": 1, "saved": "yesterday"]]])
        }
    }

    @Test("a member a newer daemon adds is let be; an event or a number this one cannot read is refused")
    func newerDaemons() throws {
        #expect(try CameraStatus(json: Self.status.json.merging(["lensTemperature": 31])) == Self.status)
        let camera = CameraDocument(name: "a", source: "demo", identity: CameraIdentity(name: "cam", capabilities: [.shoot], cameraModel: nil),
                                    status: Self.status)
        #expect(try CameraDocument(json: camera.json.merging(["owner": "north"])) == camera)
        #expect(throws: JSONShapeError(path: "flash", problem: "'flash' is not a camera event")) {
            try CameraEvent(name: "flash", fields: [:])
        }
        #expect(throws: JSONShapeError(path: "shot.latencyMs", problem: "expected milliseconds")) {
            try Shot(json: ["counter": 1, "latencyMs": .number(1e13), "confirmedByCounter": true])
        }
    }

    @Test("an error's code is a camera's word or the daemon's HTTP status")
    func errorCodes() throws {
        #expect(try ErrorDocument(json: ErrorDocument(status: 404, message: "there is no job 9").json)
            == ErrorDocument(code: "404", message: "there is no job 9"))
        let refusal = ErrorDocument(.refused("shoot", .busy, message: nil))
        #expect(try ErrorDocument(json: refusal.json) == refusal)
    }

    @Test("documents and events written through Codable write the members they always did")
    func writtenForms() throws {
        #expect(GroupList(groups: [.init(name: "rig", cameras: ["a", "b"])]).json == ["groups": [["name": "rig", "cameras": ["a", "b"]]]])
        #expect(VideoClipLength(milliseconds: 12_000).json == ["ms": 12_000])
        #expect(JobEvent.streamError(message: "follow again").data == ["message": "follow again"])
        #expect(LiveEvent.resync(reason: "cameras changed").data == ["reason": "cameras changed"])
        #expect(LiveEvent.heartbeat(nowUnixMs: 1_795_600_000_000).data == ["nowUnixMs": 1_795_600_000_000])

        let frame = FrameRecord(frame: 3, scheduledMs: 10_000, outcome: .taken)
        let summary = RunSummary(frames: [frame])
        let run = RunRecord(id: 5, plan: RunPlan(intervalMs: 5000, stop: .frames(50)), t0UnixMs: 1_763_900_000_000, camera: "demo",
                            state: .finished, endReason: "done")
        let end = JobEvent.end(run: run, state: .finished, reason: "done", summary: summary)
        #expect(end.data == ["run": JSONValue(encoding: run), "state": "finished", "reason": "done", "summary": JSONValue(encoding: summary)])
        #expect(JobEvent.frame(frame, job: 5).data == JSONValue(encoding: frame).merging(["run": 5]))
        for event in [end, .frame(frame, job: 5), .streamError(message: "follow again")] {
            #expect(try JobEvent(eventName: event.eventName, data: event.data) == event)
        }
        for event in [LiveEvent.frame(frame, job: 5), .resync(reason: "cameras changed"), .heartbeat(nowUnixMs: 1)] {
            #expect(try LiveEvent(eventName: event.eventName, data: event.data) == event)
        }
        let snapshot = LiveSnapshot(nowUnixMs: 1, status: DaemonStatus(version: "1.0", uptimeSeconds: 2, cameras: []), cameras: CameraList(cameras: []),
                                    groups: GroupList(groups: []), jobs: JobList(jobs: []), recentFrames: [.init(run: 5, frames: [frame])])
        #expect(snapshot.json["recentFrames"] == [["run": 5, "frames": [JSONValue(encoding: frame)]]])
        #expect(try LiveSnapshot(json: snapshot.json) == snapshot)
    }
}
