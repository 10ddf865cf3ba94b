import CameraKit
import CameraRemote
import Intervalometer
import SimulatedCameras
import Testing

/// Checks every brand's driver passes against its simulated body, the same way.
enum RemoteBodyChecks {
    /// Generous limits: they cost nothing when the body answers at once, and keep the tests
    /// passing on a machine busy enough to hold a task back for seconds.
    static let timing = RemoteTiming(scanTimeout: .seconds(10), stepTimeout: .seconds(5), handshakeTimeout: .seconds(20))

    /// Whether the connection has failed an attempt since it lost the camera: it is retrying.
    static func retried(_ camera: BLECamera) async -> Bool {
        if case .reconnecting(let attempt, _) = await camera.connectionState { return attempt >= 2 }
        return false
    }

    /// The body sleeps (the link drops and the camera refuses a shot), wakes, and the camera
    /// reconnects by itself and shoots again; `camera` has taken no picture yet.
    static func reconnectsAfterSleep(_ camera: BLECamera, _ body: any SimulatedCameraBody) async throws {
        _ = try await camera.shoot()
        let events = await camera.events()
        await body.sleep()
        for await event in events {
            if case .connection(let state) = event, state != .ready { break }
        }
        await #expect(throws: CameraError.self) { try await camera.shoot() }
        await body.wake()
        try await camera.waitUntilReady(timeout: .seconds(30))
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 2)
    }

    /// A 20-frame time-lapse 50 ms apart: every slot taken, on the schedule, every picture on
    /// the body. Slots a busy machine makes late are shot at once (burst) rather than skipped,
    /// so that the count does not depend on the machine's load.
    static func twentyFrameTimelapse(_ camera: BLECamera, _ body: any SimulatedCameraBody) async throws {
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 50, stop: .frames(20), overrun: .burst), camera: camera, journal: journal,
                            clock: ContinuousClock(), wallClock: { 1_700_000_000_000 })
        let ending = try await run.start(cameraName: camera.identity.name)
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...20))
        #expect(frames.allSatisfy { $0.outcome == .taken }, "\(frames.filter { $0.outcome != .taken })")
        #expect(frames.allSatisfy { $0.scheduledMs == Int64($0.frame - 1) * 50 })
        #expect(await body.picturesTaken == 20)
    }
}
