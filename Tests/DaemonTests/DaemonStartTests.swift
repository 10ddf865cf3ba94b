import CameraKit
import Daemon
import DaemonClient
import Foundation
import Intervalometer
import Logging
import ServiceLifecycle
import Testing
import UnleashedSimulator
import UnleashedTestSupport

/// The daemon's start-up as systemd sees it, through a notify socket standing in for systemd's,
/// with one configured module that never answers (switched off, or bluetoothd down).
@Suite("daemon start-up with a module absent", .timeLimit(.minutes(1)))
struct DaemonStartTests {
    /// Holds `nik` (the simulator) at once and never reaches `absent`: its attempts go on until
    /// the daemon stops, as a module out of range keeps its scan and retries going.
    struct OneAbsent: CameraOpening, CameraConnecting {
        let present: any Camera

        func openConfigured(into registry: CameraRegistry, configuration: DaemonConfiguration, logger: Logger) async {
            await registry.add(present, name: "nik", source: "simulated")
            let never = AsyncStream<Void> { _ in }
            for await _ in never {}
        }

        func connect(_ wanted: String, configuration: DaemonConfiguration) async throws(CameraConnectError)
            -> (name: String, camera: any Camera, source: String) {
            throw CameraConnectError("no module answers here")
        }
    }

    @Test("ready while a module is absent; the run interrupted on the camera that is held resumes; a graceful shutdown ends the service")
    func readyWithAbsentModule() async throws {
        let directory = "/tmp/unleashed-start-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = DaemonConfiguration.defaults(scope: .system, environment: [:])
        configuration.service.socket = directory + "/run/control.sock"
        configuration.service.journal = directory + "/journal.sqlite"
        configuration.modules = [DaemonConfiguration.Module(name: "nik", address: "AA:BB:CC:DD:EE:01"),
                                 DaemonConfiguration.Module(name: "absent", address: "AA:BB:CC:DD:EE:02")]
        // A run interrupted on nik, as a daemon stopped in the middle of it leaves it.
        let journal = try SQLiteJournal(path: configuration.service.journal)
        let interrupted = try journal.begin(plan: RunPlan(intervalMs: 200, stop: .never),
                                            t0UnixMs: Int64(Date().timeIntervalSince1970 * 1000), camera: "nik")
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let shots = await demo.camera.events()
        let notify = try NotifySocket(abstract: false)
        let fixed = configuration
        let service = DaemonService(configuration: configuration, version: "0.0.0-start", cameras: OneAbsent(present: demo.camera),
                                    reload: { fixed }, notifier: SystemdNotifier(environment: ["NOTIFY_SOCKET": notify.address]),
                                    logger: Logger(label: "test.start"))
        let group = ServiceGroup(configuration: .init(services: [service], logger: Logger(label: "test.start")))
        let running = Task { try await group.run() }

        #expect(await notify.next()?.hasPrefix("READY=1") == true)
        // The resumed run takes its frames on nik, though 'absent' never connects.
        for await event in shots {
            if case .shotCompleted = event { break }
        }
        let client = DaemonClient(socketPath: configuration.service.socket)
        #expect(try await client.job(interrupted.id).state == .running)

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(await notify.next() == "STOPPING=1")
        #expect(try journal.run(interrupted.id)?.state == .running, "suspended, to resume at the next start")
        try? await demo.finish()
    }
}
