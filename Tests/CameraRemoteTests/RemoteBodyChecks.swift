import CameraKit
import CameraRemote
import Intervalometer
import SimulatedCameras
import Testing

/// Checks every brand's driver passes against its simulated body, the same way.
enum RemoteBodyChecks {
    /// The body sleeps (the link drops and the camera refuses a shot), wakes, and the camera
    /// reconnects by itself and shoots again; `camera` has taken no picture yet.
    static func reconnectsAfterSleep(_ camera: RemoteCamera, _ body: any SimulatedCameraBody) async throws {
        _ = try await camera.shoot()
        let events = await camera.events()
        await body.sleep()
        for await event in events {
            if case .connection(let state) = event, state != .ready { break }
        }
        await #expect(throws: CameraError.self) { try await camera.shoot() }
        await body.wake()
        try await camera.waitUntilReady(timeout: .seconds(5))
        _ = try await camera.shoot()
        #expect(await body.picturesTaken == 2)
    }

    /// A 20-frame time-lapse 50 ms apart: every slot taken on its deadline, every picture on the body.
    static func twentyFrameTimelapse(_ camera: RemoteCamera, _ body: any SimulatedCameraBody) async throws {
        let journal = MemoryJournal()
        let run = Timelapse(plan: RunPlan(intervalMs: 50, stop: .frames(20)), camera: camera, journal: journal,
                            clock: ContinuousClock(), wallClock: { 1_700_000_000_000 })
        let ending = try await run.start(cameraName: camera.identity.name)
        let frames = try journal.frames(of: ending.run.id)
        #expect(frames.map(\.frame) == Array(1...20))
        #expect(frames.allSatisfy { $0.outcome == .taken }, "\(frames.filter { $0.outcome != .taken })")
        #expect(frames.allSatisfy { $0.scheduledMs == Int64($0.frame - 1) * 50 })
        #expect(await body.picturesTaken == 20)
    }
}
