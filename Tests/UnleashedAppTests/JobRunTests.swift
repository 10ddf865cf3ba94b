import Daemon
import DaemonClient
import Foundation
import Intervalometer
import Testing
import UnleashedAPI
import UnleashedApp
import UnleashedKit
import UnleashedSimulator

/// A daemon's job through the run controller, against a live control server in this process with
/// the demo camera: what `timelapse` through the daemon and `attach` show and signal.
@Suite(.timeLimit(.minutes(1))) struct JobRunTests {
    /// Runs `body` with a client of a server holding a demo camera as "demo", going by `wallClock`.
    static func withDaemon(wallClock: DaemonClock = DaemonClock(), _ body: (DaemonClient) async throws -> Void) async throws {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let directory = "/tmp/unleashed-jobrun-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cameras = CameraRegistry()
        await cameras.add(demo.camera, name: "demo", source: "demo")
        let jobs = JobManager(journal: try SQLiteJournal(path: directory + "/journal.sqlite"), cameras: cameras, wallClock: wallClock)
        let configuration = DaemonConfiguration.defaults(scope: .system, environment: [:])
        var service = configuration.service
        service.socket = directory + "/control.sock"
        let server = ControlServer(service: service, api: ControlAPI(cameras: cameras, jobs: jobs, access: AccessPolicy(),
                                                                      version: "0.0.0-jobrun", configuration: configuration))
        try await server.start()
        let result: Result<Void, any Error>
        do { result = .success(try await body(DaemonClient(socketPath: service.socket))) } catch { result = .failure(error) }
        await jobs.suspendAll()
        await server.stop()
        try? await demo.finish()
        try result.get()
    }

    @Test func aJobFollowedToItsEndStreamsItsFramesAndItsSummary() async throws {
        try await Self.withDaemon { client in
            let job = try await client.startJob(RunPlan(intervalMs: 100, stop: .frames(3)), camera: "demo")
            let run = JobRun(job, client: client, owned: true)
            let frames = await run.records.reduce(into: [Int]()) { $0.append($1.frame) }
            guard case .ended(let end) = await run.outcome() else { Issue.record("the job did not end"); return }
            #expect(frames == [1, 2, 3])
            #expect(end.id == run.job.id)
            #expect(end.state == "finished")
            #expect(end.summary.taken + end.summary.skipped == 3)
            #expect(await run.current()?.id == run.job.id)
        }
    }

    /// What Ctrl-C and SIGTERM do to a run through the daemon: the job itself is stopped.
    @Test func stoppingAnOwnedJobStopsItInTheDaemon() async throws {
        try await Self.withDaemon { client in
            let job = try await client.startJob(RunPlan(intervalMs: 100, stop: .never), camera: "demo")
            let run = JobRun(job, client: client, owned: true)
            var records = run.records.makeAsyncIterator()
            #expect(await records.next()?.frame == 1)
            await run.stop(reason: "stopped by Ctrl-C")
            guard case .ended(let end) = await run.outcome() else { Issue.record("the job did not end"); return }
            #expect(end.reason.contains("stopped"), "\(end.reason)")
            #expect(try await client.job(run.job.id).state != .running)
        }
    }

    @Test func stoppingAnAttachedJobOnlyStopsFollowingIt() async throws {
        try await Self.withDaemon { client in
            let job = try await client.startJob(RunPlan(intervalMs: 100, stop: .never), camera: "demo")
            let run = JobRun(job, client: client, owned: false)
            var records = run.records.makeAsyncIterator()
            #expect(await records.next() != nil)
            await run.stop(reason: "stopped by Ctrl-C")
            guard case .stoppedFollowing(let id) = await run.outcome() else { Issue.record("still following"); return }
            #expect(id == job.id)
            while await records.next() != nil {}  // finishes, though the job goes on
            #expect(try await client.job(job.id).state == .running)
            try await client.stopJob(job.id)
        }
    }
}
