import Daemon
import DaemonClient
import Foundation
import Intervalometer
import Testing
import UnleashedTestSupport
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The typed client's methods against a live control server with the demo camera and a
/// journal: each operation answers its document, and a refusal comes back as the daemon's error.
@Suite("typed daemon client")
struct TypedClientTests {
    /// Runs `body` with a client of a server holding a demo camera as "demo", a group and jobs.
    private static func withServer<T>(cameraName: String = "demo", _ body: (DaemonClient, Demo) async throws -> T) async throws -> T {
        let (demo, journal, cameras, directory) = try await JobTests.managerParts()
        if cameraName != "demo" {
            _ = await cameras.remove(named: "demo")
            await cameras.add(demo.camera, name: cameraName, source: "demo")
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let jobs = JobManager(journal: journal, cameras: cameras)
        var configuration = DaemonConfiguration.defaults(scope: .system, environment: [:])
        configuration.groups = [DaemonConfiguration.Group(name: "rig", cameras: ["demo"])]
        var service = configuration.service
        service.socket = directory + "/run/control.sock"
        let server = ControlServer(service: service, api: ControlAPI(cameras: cameras, jobs: jobs, access: AccessPolicy(),
                                                                      version: "0.0.0-typed", configuration: configuration))
        try await server.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(DaemonClient(socketPath: service.socket), demo)) } catch { result = .failure(error) }
        await jobs.suspendAll()
        await server.stop()
        try? await demo.finish()
        return try result.get()
    }

    @Test("the daemon's status, groups, cameras and one camera's settings read as documents", .timeLimit(.minutes(1)))
    func reads() async throws {
        try await Self.withServer { client, demo in
            let status = try await client.status()
            #expect(status.version == "0.0.0-typed")
            #expect(status.cameras.map(\.name) == ["demo"])
            #expect(status.cameras.first?.status == (try await demo.camera.status()))
            #expect(status.cameras.first?.error == nil)
            #expect(try await client.groups() == [GroupList.Group(name: "rig", cameras: ["demo"])])
            #expect(try await client.cameras() == [CameraList.Entry(name: "demo", source: "demo", identity: demo.camera.identity)])
            let camera = try await client.camera("demo")
            #expect(camera.identity == demo.camera.identity)
            let settings = try await client.settings(camera: "demo")
            #expect(settings == (try await demo.camera.settings()))
            let iso = try #require(settings.first { $0.setting == .iso })
            #expect(try await client.value(of: .iso, camera: "demo") == iso.value)
            let other = try #require(iso.choices.last { $0 != iso.value })
            #expect(try await client.set(other, camera: "demo") == other)
            #expect(try await client.shoot(camera: "demo").counter == 1)
        }
    }

    @Test("a job started, followed to its end as typed events, listed, and a running one paused and stopped",
          .timeLimit(.minutes(1)))
    func jobs() async throws {
        try await Self.withServer { client, _ in
            let job = try await client.startJob(RunPlan(intervalMs: 100, stop: .frames(3)), camera: "demo")
            #expect(job.camera == "demo")
            #expect(job.plan == RunPlan(intervalMs: 100, stop: .frames(3)))
            var frames: [Int] = []
            var ended: (state: JobState, summary: RunSummary)?
            var subscribed = false
            for try await message in client.jobEvents(job.id) {
                switch message {
                case .subscribed: subscribed = true
                case .event(.frame(let record, let id)):
                    #expect(id == job.id)
                    frames.append(record.frame)
                case .event(.end(let run, let state, _, let summary)):
                    #expect(run.id == job.id)
                    ended = (state, summary)
                case .event(.streamError(let message)): Issue.record("the stream ended early: \(message)")
                }
            }
            #expect(subscribed)
            #expect(frames == [1, 2, 3])
            #expect(ended?.state == .finished)
            // A loaded machine may skip a slot; every slot is recorded either way.
            #expect(ended.map { $0.summary.taken + $0.summary.skipped } == 3)
            #expect(try await client.jobs().map(\.id) == [job.id])
            #expect(try await client.job(job.id).state == .finished)

            let forever = try await client.startJob(RunPlan(intervalMs: 200, stop: .never))
            #expect(try await client.pauseJob(forever.id).state == .paused)
            #expect(try await client.continueJob(forever.id).state != .paused)
            #expect(try await client.stopJob(forever.id, when: .now).id == forever.id)
            var last = try await client.job(forever.id)
            _ = try await eventually(every: .milliseconds(50)) {
                last = try await client.job(forever.id)
                return last.reason != nil
            }
            #expect(last.reason?.contains("stopped by") == true, "\(last)")
        }
    }

    @Test("refusals come back as the daemon's errors, a camera's as the camera error", .timeLimit(.minutes(1)))
    func refusals() async throws {
        try await Self.withServer { client, _ in
            let unknownJob = await #expect(throws: DaemonClientError.self) { try await client.job(99) }
            #expect(unknownJob == .http(status: 404, code: "404", message: "there is no job 99", camera: nil))
            let noConnector = await #expect(throws: DaemonClientError.self) { try await client.connect(module: "AA:BB:CC:DD:EE:FF") }
            if case .http(409, _, let message, nil)? = noConnector {
                #expect(message == "this daemon cannot connect modules on request")
            } else {
                Issue.record("expected 409, got \(String(describing: noConnector))")
            }
            let notBulb = await #expect(throws: DaemonClientError.self) { try await client.bulb(.milliseconds(100), camera: "demo") }
            if case .http(409, "notInBulbMode", _, .notInBulbMode?)? = notBulb {} else {
                Issue.record("expected notInBulbMode, got \(String(describing: notBulb))")
            }
            let released = try await client.disconnect(camera: "demo")
            #expect(released == ConnectedCamera(name: "demo", source: "demo", connected: false))
            let left = try await client.cameras()
            #expect(left.isEmpty)
        }
    }

    @Test("a camera whose name needs percent-encoding in the path is found by every route, forgetting it included", .timeLimit(.minutes(1)))
    func encodedName() async throws {
        try await Self.withServer(cameraName: "left wing") { client, _ in
            #expect(try await client.camera("left wing").identity == client.cameras().first?.identity)
            #expect(try await client.shoot(camera: "left wing").counter == 1)
            let released = try await client.disconnect(camera: "left wing")
            #expect(released == ConnectedCamera(name: "left wing", source: "demo", connected: false))
            #expect(try await client.cameras().isEmpty)
        }
    }
}
