import CameraKit
import Foundation
import Intervalometer
import JSON
import Testing
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// docs/api/openapi.yaml against the documents the API writes: each sample, with every optional
/// member filled in, must validate against its schema and use no member the schema does not
/// name (``APIContract``). The routes are checked against what the daemon serves, in DaemonTests.
@Suite("docs/api/openapi.yaml describes the documents")
struct OpenAPIContractTests {
    /// Runs the checker on `samples` (schema name and document); its report.
    static func check(_ samples: [(String, JSONValue)]) throws -> (status: Int32, report: String) {
        try APIContract.check(samples: samples)
    }

    /// One of each document, from a demo camera's real values and the journal's records.
    static func samples() async throws -> [(String, JSONValue)] {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let camera = demo.camera
        let status = try await camera.status()
        let settings = try await camera.settings()
        let shot = try await camera.shoot()
        _ = try await camera.set(.shutterSpeed(.bulb))
        let exposure = try await camera.bulb(.milliseconds(20))
        try await demo.finish()

        let frame = FrameRecord(frame: 3, part: 1, scheduledMs: 10_000, sentMs: 10_001, completedMs: 10_090, latenessMicros: 850,
                                outcome: .taken, error: nil, exposure: "1/125", meteredEV: "+12", shotCounter: 7, camera: "a",
                                commandSpreadMicros: 120, completionSpreadMicros: 900,
                                ramp: RampRecord(targetEV: 11.5, sceneEV: 12, residualEV: 0.5, rate: 0.2, intervalMs: 5000))
        let failed = FrameRecord(frame: 4, scheduledMs: 15_000, outcome: .failed, error: "the camera is busy")
        let summary = RunSummary(frames: [frame, failed])
        let plans = [
            RunPlan(intervalMs: 5000, stop: .frames(50)),
            RunPlan(intervalMs: 10_000, stop: .duration(milliseconds: 600_000), exposure: .bulb(milliseconds: 2000),
                    overrun: .defer, minimumGapMs: 500, hook: "/bin/true", hookTimeoutMs: 3000),
            RunPlan(intervalMs: 5000, stop: .until(unixMilliseconds: 1_763_900_000_000), exposure: .bracket(count: 3, stepThirds: 3)),
            RunPlan(intervalMs: 20_000, stop: .never, exposure: .video(milliseconds: 5000)),
            RunPlan(intervalMs: 20_000, stop: .frames(10), exposure: .ramp(plan: RampPlan(apertures: ["f/2.8"], gapMs: 1000))),
        ]
        let job = JobDocument(id: 5, camera: "demo", cameras: ["demo"], kind: .timelapse, state: .finished, plan: plans[1], t0UnixMs: 1_763_900_000_000,
                              reason: "all slots done", summary: summary, lastFrame: frame)
        let run = RunRecord(id: 5, plan: plans[0], t0UnixMs: 1_763_900_000_000, camera: "demo", state: .finished, endReason: "done")
        let interrupted = JobDocument(id: 4, camera: "garden", cameras: ["garden"], kind: .timelapse, state: .suspended, plan: plans[0],
                                      t0UnixMs: 1_763_800_000_000, reason: "interrupted; it resumes when the daemon holds camera garden",
                                      summary: summary, lastFrame: frame, resumable: false,
                                      resumeRefusal: "job 4 runs on camera garden, which the daemon does not hold; connect it, then resume the job")
        var resumable = interrupted
        (resumable.resumable, resumable.resumeRefusal) = (true, nil)
        var resumed = resumable
        (resumed.state, resumed.reason, resumed.resumable) = (.running, nil, false)

        let corrected = HostClockState(synchronised: false, nowUnixMs: 1_764_405_123_456, correction: .init(
            offsetMs: 7_203_000, takenUnixMs: 1_764_405_000_000, client: "browser 'Pixel 7' (k3x9)", webClient: "k3x9"))
        let ownClock = HostClockState(synchronised: true, nowUnixMs: 1_764_405_000_000, correction: nil)
        var samples: [(String, JSONValue)] = [
            ("DaemonStatus", DaemonStatus(version: "1.0", uptimeSeconds: 1.5, cameras: [
                .init(name: "demo", source: "simulated", status: status, error: nil),
                .init(name: "b", source: "AA:BB:CC:DD:EE:FF", status: nil, error: "the link is down"),
            ], clock: corrected).json),
            ("GET /v1/clock 200", ownClock.json),
            ("GET /v1/clock 200", HostClockState(synchronised: true, nowUnixMs: 1, correction: .init(
                offsetMs: -1500, takenUnixMs: 1, client: "uid 1000 on the socket", webClient: nil)).json),
            ("PUT /v1/clock body", ClockReading(unixMs: 1_764_405_000_000).json),
            ("PUT /v1/clock 200", ClockOffer(reason: .hostNotSynchronised, message: "taken", differenceMs: 7_203_000, clock: corrected).json),
            ("PUT /v1/clock 200", ClockOffer(reason: .hostAgrees, message: "kept", differenceMs: 12, clock: ownClock).json),
            ("GET /v1/groups 200", GroupList(groups: [.init(name: "rig", cameras: ["a", "b"])]).json),
            ("Fleet", FleetDocument(enabled: true, connected: true, node: "north", hosts: [
                FleetHost(node: "north", online: true, clock: HostClock(synchronised: true, estimatedErrorMs: 0.4, maximumErrorMs: 12),
                          cameras: [.init(name: "left", connection: "ready", running: true, frames: 3), .init(name: "right", connection: nil, running: false, frames: 0)],
                          jobs: [.init(id: 7, state: .running, camera: "left", slot: 3, taken: 3, failed: 0, skipped: 0,
                                       recent: [.init(slot: 2, taken: 1), .init(slot: 3, taken: 1, failed: 1)])]),
                FleetHost(node: "south", online: false, clock: nil, cameras: [], jobs: []),
            ], rig: FleetRig(lowestSlot: 3, highestSlot: 3)).json),
            ("GET /v1/fleet 200", FleetDocument(enabled: false, connected: false, node: nil, hosts: [], rig: nil).json),
            ("GET /v1/cameras 200", CameraList(cameras: [.init(name: "demo", source: "simulated", identity: camera.identity)]).json),
            ("GET /v1/cameras/{camera} 200", CameraDocument(name: "demo", source: "simulated", identity: camera.identity, status: status).json),
            ("POST /v1/cameras body", ConnectRequest(module: "AA:BB:CC:DD:EE:FF").json),
            ("POST /v1/cameras 201", ConnectedCamera(name: "a", source: "AA:BB:CC:DD:EE:FF", connected: true,
                                                     identity: camera.identity, status: status).json),
            ("DELETE /v1/cameras/{camera} 200", ConnectedCamera(name: "a", source: "AA:BB:CC:DD:EE:FF", connected: false).json),
            ("GET /v1/cameras/{camera}/settings 200", SettingList(settings: settings).json),
            ("PUT /v1/cameras/{camera}/settings/{setting} body", SettingChange(settings[0].value).json),
            ("POST /v1/cameras/{camera}/shoot 200", shot.json),
            ("POST /v1/cameras/{camera}/bulb body", BulbRequest(milliseconds: 2000).json),
            ("POST /v1/cameras/{camera}/bulb 200", exposure.json),
            ("POST /v1/cameras/{camera}/focus body", FocusRequest(hold: true).json),
            ("POST /v1/cameras/{camera}/focus 200", FocusResult.acquired.json),
            ("POST /v1/cameras/{camera}/video/stop 200", VideoClipLength(milliseconds: 12_000).json),
            ("PUT /v1/cameras/{camera}/time body", WallTime(unixMilliseconds: 1_763_900_000_123, utcOffsetMinutes: 60).json),
            ("PUT /v1/cameras/{camera}/geotag body",
             GeoPosition(latitude: 47.37, longitude: 8.54, altitude: 408, fixTime: 1_763_900_000_000).json),
            ("JobRequest", JobSubmission(plan: plans[1], camera: "demo", startDelay: .seconds(2)).json),
            ("JobRequest", JobSubmission(plan: plans[0], cameras: ["a", "b"]).json),
            ("POST /v1/jobs/{id}/stop body", StopWhen.afterFrame.json),
            ("Job", job.json),
            ("GET /v1/jobs 200", JobList(jobs: [job, interrupted, resumable]).json),
            ("POST /v1/jobs/{id}/resume 200", resumed.json),
            ("Error", ErrorDocument(status: 404, message: "there is no job 9").json),
            ("GET /v1/cameras/{camera}/pictures 200", PictureList(pictures: [
                .init(name: "DSC_0042.jpg", bytes: 8_123_456, cameraPath: "/store/DCIM/DSC_0042.JPG", frame: 12, shotCounter: 42,
                      saved: Date(timeIntervalSince1970: 1_795_600_000)),
                .init(name: "DSC_0043.nef", bytes: 20_000_000, cameraPath: "/store/DCIM/DSC_0043.NEF", frame: nil, shotCounter: 43,
                      saved: Date(timeIntervalSince1970: 1_795_600_001)),
            ]).json),
            ("POST /v1/web/codes body", PairingCodeRequest(role: "viewer").json),
            ("POST /v1/web/codes 201", PairingCodeDocument(code: "402617", role: "viewer", expires: Date(timeIntervalSince1970: 1_795_600_000),
                                                           url: "http://192.168.1.20:8080/#code=402617").json),
            ("PairingCode", PairingCodeDocument(code: "402617", role: "operator", expires: Date(timeIntervalSince1970: 1_795_600_000), url: nil).json),
            ("GET /v1/web/clients 200", WebClientList(clients: [.init(id: "10f1e71a", name: "Chrome on Android", role: "operator",
                                                                       paired: Date(timeIntervalSince1970: 1_795_600_000))]).json),
        ]
        samples += settings.map { ("SettingDescriptor", $0.json) }
        samples += plans.map { ("Plan", $0.apiJSON) }
        samples += CameraJSONTests.errors.map { ("Error", ErrorDocument($0).json) }
        // The event streams, each event as a client's SSE parser gives it: its name and data.
        let cameraEvents = CameraJSONTests.events.map { CameraEventMessage(camera: "demo", event: $0) }
        samples += cameraEvents.map { ("CameraStreamEvent", Self.event($0.eventName, $0.data)) }
        let jobEvents: [JobEvent] = [
            .frame(frame, job: 5), .end(run: run, state: .finished, reason: "done", summary: summary),
            .streamError(message: "follow again"),
        ]
        samples += jobEvents.map { ("JobStreamEvent", Self.event($0.eventName, $0.data)) }
        let snapshot = LiveSnapshot(
            nowUnixMs: 1_795_600_000_000,
            status: DaemonStatus(version: "1.0", uptimeSeconds: 1.5, cameras: [.init(name: "demo", source: "simulated", status: status, error: nil)],
                                 clock: ownClock),
            cameras: CameraList(cameras: [.init(name: "demo", source: "simulated", identity: camera.identity)]),
            groups: GroupList(groups: [.init(name: "rig", cameras: ["a", "b"])]), jobs: JobList(jobs: [job]),
            recentFrames: [.init(run: 5, frames: [frame])])
        let liveEvents: [LiveEvent] = [
            .snapshot(snapshot), .job(job), .frame(frame, job: 5),
            .resync(reason: "the daemon's cameras changed; open the stream again"), .heartbeat(nowUnixMs: 1_795_600_000_000),
        ] + cameraEvents.map(LiveEvent.camera)
        samples += liveEvents.map { ("LiveStreamEvent", Self.event($0.eventName, $0.data)) }
        return samples
    }

    /// One Server-Sent Event as the checker takes it.
    static func event(_ name: String, _ data: JSONValue) -> JSONValue { ["event": .string(name), "data": data] }

    @Test("every document validates against its schema and uses only the members it names", .timeLimit(.minutes(1)))
    func documentsMatch() async throws {
        let (status, report) = try Self.check(try await Self.samples())
        #expect(status == 0, "\(report)")
    }

    @Test("a member the YAML does not name and a wrong type are each reported", .timeLimit(.minutes(1)))
    func checkerFails() async throws {
        var job = try #require(try await Self.samples().first { $0.0 == "Job" }?.1.objectValue)
        job["startedBy"] = "someone"
        let added = try Self.check([("Job", .object(job))])
        #expect(added.status == 1)
        #expect(added.report.contains("'.startedBy' is written by the document but not declared in the YAML"), "\(added.report)")

        let mistyped = try Self.check([("GET /v1/groups 200", ["groups": [["name": "rig", "cameras": "a"]]])])
        #expect(mistyped.status == 1)

        // An event a stream does not name, and one without a member its name requires.
        let unnamed = try Self.check([("LiveStreamEvent", Self.event("flash", ["camera": "demo"]))])
        #expect(unnamed.status == 1)
        #expect(unnamed.report.contains("the YAML names no event 'flash' on this stream"), "\(unnamed.report)")
        let incomplete = try Self.check([("CameraStreamEvent", Self.event("busy", ["camera": "demo"]))])
        #expect(incomplete.status == 1)
        #expect(incomplete.report.contains("'busy' is a required property"), "\(incomplete.report)")

    }
}
