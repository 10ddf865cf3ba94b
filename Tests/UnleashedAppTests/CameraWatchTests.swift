import CameraKit
import Clocks
import Testing
import UnleashedApp
import UnleashedProtocol

@Suite struct CameraWatchTests {
    @Test("--for ends the watch when its time has passed, though the camera's events go on")
    func endsAtTheLimit() async {
        let (events, camera) = AsyncStream.makeStream(of: CameraEvent.self)
        camera.yield(.busy(true))
        let clock = TestClock<Duration>()
        let watched = CameraWatch.events(events, for: .seconds(30), clock: clock)
        var iterator = watched.makeAsyncIterator()
        #expect(await iterator.next() == .busy(true))
        // The clock moves once the watch sleeps on it (however soon its task gets to that).
        let moving = Task {
            while !Task.isCancelled {
                await clock.advance(by: .seconds(30))
                await Task.yield()
            }
        }
        #expect(await iterator.next() == nil)
        moving.cancel()
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
