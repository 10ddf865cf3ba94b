public import CameraKit
public import Intervalometer
import Prometheus
import UnleashedKit

/// The daemon's numbers for Prometheus: shots, failures, the links and how late frames go out.
///
/// It keeps its own registry rather than the process-wide `MetricsSystem`, which can be
/// bootstrapped once only: two daemons in one test process, or a library that bootstraps it,
/// would otherwise share or fight over one set of numbers.
///
/// Every series is labelled with the camera's name in the daemon (`camera="left"`).
public final class DaemonMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let jobsRunning: Gauge

    /// Upper bounds for ``record(frame:camera:)``'s lateness: a healthy run stays in the
    /// first few (under a few milliseconds); a second means a slot was nearly missed.
    public static let latenessBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    public init() {
        jobsRunning = registry.makeGauge(descriptor: Self.descriptor(
            "unleashed_jobs_running", help: "Jobs (time-lapses, video timers) running now."))
    }

    /// Follows `camera`'s events into the metrics until its event stream ends (when the camera
    /// is closed). It subscribes before it returns, so no event after the call is missed; the
    /// returned task ends with the stream, and cancelling it stops following.
    ///
    /// The camera's counters and lateness histogram are shown from here on, at 0 until
    /// something happens: a series that appears only with its first count hides that count
    /// from Prometheus' `rate()` and `increase()`.
    @discardableResult
    public func observe(camera: any Camera, name: String) async -> Task<Void, Never> {
        for counterName in Self.help.keys { _ = counter(counterName, name) }
        _ = lateness(name)
        let events = await camera.events()
        let ready = await camera.isReady
        linkUp(name).set(ready ? 1.0 : 0.0)
        return Task { [self] in
            var reconnecting = false
            for await event in events {
                switch event {
                case .connection(let state):
                    linkUp(name).set(state == .ready ? 1.0 : 0.0)
                    // One count per lost link, however many attempts it takes to get back.
                    if case .reconnecting = state {
                        if !reconnecting { counter("unleashed_reconnects_total", name).increment() }
                        reconnecting = true
                    } else if state == .ready || state == .idle {
                        reconnecting = false
                    }
                case .shotCompleted:
                    counter("unleashed_shots_total", name).increment()
                case .error:
                    counter("unleashed_camera_errors_total", name).increment()
                default:
                    break
                }
            }
            linkUp(name).set(0.0)
        }
    }

    /// Takes in one frame of a job: a failed one counts as a shot failure, a skipped one as
    /// skipped, and the lateness of one that went out lands in the histogram. The shot itself
    /// is counted from the camera's events by ``observe(camera:name:)``.
    public func record(frame: FrameRecord, camera: String) {
        switch frame.outcome {
        case .taken: break
        case .failed: counter("unleashed_shot_failures_total", camera).increment()
        case .skipped: counter("unleashed_frames_skipped_total", camera).increment()
        }
        if let micros = frame.latenessMicros, frame.outcome != .skipped {
            lateness(camera).record(Double(max(micros, 0)) / 1_000_000)
        }
    }

    /// Counts a shot that failed outside a job (a `shoot` request).
    public func recordShotFailure(camera: String) {
        counter("unleashed_shot_failures_total", camera).increment()
    }

    /// How many jobs run now.
    public func setJobsRunning(_ count: Int) {
        jobsRunning.set(Int64(count))
    }

    /// Every metric in Prometheus' text exposition format, version 0.0.4.
    public func exposition() -> String {
        registry.emitToString()
    }

    private static let help: [String: String] = [
        "unleashed_shots_total": "Pictures the camera reported taken.",
        "unleashed_shot_failures_total": "Shots that failed.",
        "unleashed_frames_skipped_total": "Job frames that passed without a shot (overrun, link down, paused).",
        "unleashed_reconnects_total": "Times the link was lost and the daemon began to reconnect.",
        "unleashed_camera_errors_total": "Errors the camera reported outside any request.",
    ]

    private func counter(_ name: String, _ camera: String) -> Counter {
        registry.makeCounter(descriptor: Self.descriptor(name, help: Self.help[name] ?? ""), labels: [("camera", camera)])
    }

    private func linkUp(_ camera: String) -> Gauge {
        registry.makeGauge(descriptor: Self.descriptor("unleashed_link_up", help: "1 while the camera's link is ready, else 0."),
                           labels: [("camera", camera)])
    }

    private func lateness(_ camera: String) -> ValueHistogram {
        registry.makeValueHistogram(
            descriptor: Self.descriptor("unleashed_frame_lateness_seconds",
                                        help: "How late a job's shot command went out after its slot was due."),
            labels: [("camera", camera)], buckets: Self.latenessBuckets)
    }

    private static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
