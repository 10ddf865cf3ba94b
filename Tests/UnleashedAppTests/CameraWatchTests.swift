import CameraKit
import Testing
import UnleashedApp
import UnleashedProtocol
import UnleashedTestSupport

@Suite struct CameraWatchTests {
    @Test("--for ends the watch when its time has passed, though the camera's events go on")
    func endsAtTheLimit() async throws {
        let (events, camera) = AsyncStream.makeStream(of: CameraEvent.self)
        camera.yield(.busy(true))
        let clock = RunClock()
        let watched = CameraWatch.events(events, for: .seconds(30), clock: clock)
        var iterator = watched.makeAsyncIterator()
        #expect(await iterator.next() == .busy(true))
        // The clock moves once the watch sleeps on it (however soon its task gets to that).
        let next = try await clock.flowing { await iterator.next() }
        #expect(next == nil)
        #expect(clock.now == RunClock.Instant().advanced(by: .seconds(30)), "ended by its limit, not by the camera")
        camera.finish()
    }

    @Test("each event's --json members, by name")
    func documents() {
        let shot = CameraWatch.document(.shotCompleted(counter: 12, cameraTime: 1_700_000_000_250))
        #expect(shot.name == "shotCompleted")
        #expect(shot.members == ["counter": .integer(12), "cameraTime": .string("2023-11-14T22:13:20.250Z")])
        let battery = CameraWatch.document(.battery(module: 80, camera: nil))
        #expect(battery.name == "battery" && battery.members == ["module": .integer(80)])
    }
}
