import CameraKit
import Foundation
import Intervalometer
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedSimulator
@testable import Daemon

/// The metrics as Prometheus scrapes them: `GET /metrics` on the socket, with a demo camera.
@Suite("metrics")
struct MetricsTests {
    /// The value of the sample `series` (name and labels as written) in an exposition.
    static func sample(_ series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    static func withServer<T>(metrics: DaemonMetrics, camera: any Camera, _ body: (String) async throws -> T) async throws -> T {
        let top = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: top) }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = top + "/run/control.sock"
        let registry = CameraRegistry()
        await registry.add(camera, name: "demo", source: "demo")
        let api = ControlAPI(cameras: registry, jobs: JobManager(), access: AccessPolicy(), version: "0", metrics: metrics)
        let server = ControlServer(service: service, api: api)
        try await server.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(service.socket)) } catch { result = .failure(error) }
        await server.stop()
        return try result.get()
    }

    @Test("GET /metrics counts the demo camera's shots, shows its link up, and is text format 0.0.4")
    func shotsThroughTheSocket() async throws {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let metrics = DaemonMetrics()
        let following = await metrics.observe(camera: demo.camera, name: "demo")
        try await Self.withServer(metrics: metrics, camera: demo.camera) { socket in
            let before = try await Curl.request(socket: socket, path: "/metrics")
            #expect(before.status == 200)
            #expect(Self.sample("unleashed_link_up{camera=\"demo\"}", in: before.body) == 1)
            // Every counter is there from the start, at 0, so that Prometheus sees the first count.
            for counter in ["shots_total", "shot_failures_total", "frames_skipped_total", "reconnects_total", "camera_errors_total"] {
                #expect(Self.sample("unleashed_\(counter){camera=\"demo\"}", in: before.body) == 0, "\(counter): \(before.body)")
            }
            #expect(Self.sample("unleashed_frame_lateness_seconds_count{camera=\"demo\"}", in: before.body) == 0)
            #expect(Self.sample("unleashed_jobs_running", in: before.body) == 0)

            _ = try await demo.camera.shoot()
            _ = try await demo.camera.shoot()
            // The events reach the metrics on their own task: wait for them, for a while.
            var shots: Double?
            _ = await eventually {
                shots = Self.sample("unleashed_shots_total{camera=\"demo\"}", in: metrics.exposition())
                return shots == 2
            }
            #expect(shots == 2)
            let after = try await Curl.request(socket: socket, path: "/metrics")
            #expect(Self.sample("unleashed_shots_total{camera=\"demo\"}", in: after.body) == 2)
            #expect(after.body.contains("# TYPE unleashed_shots_total counter"))
            #expect(after.body.contains("# TYPE unleashed_link_up gauge"))

            let typed = try await AccessTests.run(
                ["/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{content_type}", "--unix-socket", socket, "http://localhost/metrics"])
            #expect(typed.hasPrefix("text/plain; version=0.0.4"))
        }
        try await demo.finish()
        // The stream ended with the camera: the task ends and the link shows down.
        await following.value
        #expect(Self.sample("unleashed_link_up{camera=\"demo\"}", in: metrics.exposition()) == 0)
    }

    @Test("job frames: failures and skips count, lateness lands in the buckets, jobs running is a gauge")
    func frames() {
        let metrics = DaemonMetrics()
        metrics.record(frame: FrameRecord(frame: 1, scheduledMs: 0, sentMs: 0, latenessMicros: 700, outcome: .taken), camera: "left")
        metrics.record(frame: FrameRecord(frame: 2, scheduledMs: 1000, sentMs: 1030, latenessMicros: 30_000, outcome: .taken), camera: "left")
        metrics.record(frame: FrameRecord(frame: 3, scheduledMs: 2000, sentMs: 2000, latenessMicros: 200, outcome: .failed), camera: "left")
        metrics.record(frame: FrameRecord(frame: 4, scheduledMs: 3000, outcome: .skipped), camera: "left")
        metrics.setJobsRunning(2)
        let text = metrics.exposition()
        #expect(Self.sample("unleashed_shot_failures_total{camera=\"left\"}", in: text) == 1)
        #expect(Self.sample("unleashed_frames_skipped_total{camera=\"left\"}", in: text) == 1)
        #expect(Self.sample("unleashed_jobs_running", in: text) == 2)
        #expect(Self.sample("unleashed_frame_lateness_seconds_count{camera=\"left\"}", in: text) == 3)
        #expect(Self.sample("unleashed_frame_lateness_seconds_bucket{camera=\"left\",le=\"0.0005\"}", in: text) == 1)
        #expect(Self.sample("unleashed_frame_lateness_seconds_bucket{camera=\"left\",le=\"0.001\"}", in: text) == 2)
        #expect(Self.sample("unleashed_frame_lateness_seconds_bucket{camera=\"left\",le=\"0.05\"}", in: text) == 3)
        #expect(Self.sample("unleashed_frame_lateness_seconds_bucket{camera=\"left\",le=\"+Inf\"}", in: text) == 3)
        let sum = Self.sample("unleashed_frame_lateness_seconds_sum{camera=\"left\"}", in: text) ?? 0
        #expect(abs(sum - 0.0309) < 1e-9)
    }
}
