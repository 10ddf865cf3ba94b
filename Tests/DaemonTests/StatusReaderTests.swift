import CameraKit
import Daemon
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedTestSupport

/// A camera that counts its status reads, which answer at once or, `held`, wait until the test
/// calls ``answerReads()``, and reports a shot as an event when a test calls
/// ``reportShot()``.
private actor CountingCamera: Camera {
    nonisolated let identity = CameraIdentity(name: "counting", capabilities: [.shoot], cameraModel: "counting")
    nonisolated let hub = CameraEventHub()
    private var held: Bool
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private(set) var reads = 0
    private var counter = 0

    init(held: Bool = false) {
        self.held = held
    }

    /// Lets the held reads answer, and every later one at once.
    func answerReads() {
        held = false
        for reader in waiting { reader.resume() }
        waiting = []
    }

    func reportShot() {
        counter += 1
        hub.yield(.shotCompleted(counter: counter, cameraTime: nil))
    }

    func events() -> AsyncStream<CameraEvent> { hub.subscribe() }
    func status() async throws(CameraError) -> CameraStatus {
        reads += 1
        let counter = counter
        if held { await withCheckedContinuation { waiting.append($0) } }
        return CameraStatus(connection: .ready, moduleBattery: 90, cameraBattery: 80, storage: .ok, shotsRemaining: 100,
                            cameraPower: .on, exposureMode: .manual, meteredEV: nil, busy: false, shotCounter: counter)
    }
    func settings() async throws(CameraError) -> [SettingDescriptor] { [] }
    func value(of setting: SettingID) async throws(CameraError) -> SettingValue { throw .settingNotOffered(setting) }
    func set(_ value: SettingValue) async throws(CameraError) -> SettingValue { throw .settingNotOffered(value.setting) }
    func focus(hold: Bool) async throws(CameraError) -> FocusResult { throw .unsupported("focus") }
    func release() async throws(CameraError) {}
    func shoot() async throws(CameraError) -> Shot { throw .unsupported("shoot") }
    func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure { throw .unsupported("bulb") }
    func startVideo() async throws(CameraError) { throw .unsupported("video") }
    func stopVideo() async throws(CameraError) -> Duration { throw .unsupported("video") }
    func setTime(_ time: WallTime) async throws(CameraError) {}
    func geotag(_ position: GeoPosition) async throws(CameraError) {}
    func close() async { hub.finish() }
    var isReady: Bool { true }
    var lastMeteredEV: ExposureStops? { nil }
}

@Suite("status reads shared by the API's clients")
struct StatusReaderTests {
    @Test("50 clients asking at once share one read of the camera, and get the same answer")
    func concurrentRequestsShareARead() async throws {
        // The read is held on the radio until all 50 have asked.
        let camera = CountingCamera(held: true)
        let reader = StatusReader(camera: camera)
        let asked = Observed(0)
        let answers = try await withThrowingTaskGroup(of: CameraStatus.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    asked.update { $0 += 1 }
                    return try await reader.status()
                }
            }
            try await asked.wait("all 50 to ask", until: { $0 == 50 })
            try #require(await eventually { await camera.reads == 1 }, "the first to ask reads")
            await camera.answerReads()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 50)
        #expect(Set(answers).count == 1)
        #expect(await camera.reads == 1)
    }

    @Test("an answer is reused while nothing changes; after a change from the API the camera is read again")
    func reuseUntilChanged() async throws {
        let camera = CountingCamera()
        let reader = StatusReader(camera: camera)
        _ = try await reader.status()
        _ = try await reader.status()
        #expect(await camera.reads == 1)
        await reader.changed()
        _ = try await reader.status()
        #expect(await camera.reads == 2)
    }

    @Test("an event from the camera makes the next answer a fresh read that shows it")
    func eventsInvalidate() async throws {
        let camera = CountingCamera()
        // Time stands still for the reader: no answer ages out, so only the event can drop it.
        let frozen = ContinuousClock.now
        let reader = StatusReader(camera: camera, now: { frozen })
        #expect(try await reader.status().shotCounter == 0)
        await camera.reportShot()
        // The event reaches the reader on its own task.
        let seen = try await eventually { try await reader.status().shotCounter == 1 }
        #expect(seen, "the event dropped the answer read before it")
    }

    @Test("an answer read while a change came in is not reused")
    func changeDuringARead() async throws {
        let camera = CountingCamera(held: true)
        let reader = StatusReader(camera: camera)
        async let first = reader.status()
        // The read is under way (and held there) when the change comes in.
        try #require(await eventually { await camera.reads == 1 })
        await reader.changed()
        await camera.answerReads()
        _ = try await first
        _ = try await reader.status()
        #expect(await camera.reads == 2)
    }

    @Test("a shot through the API shows in the very next status answer")
    func shotThroughTheAPI() async throws {
        try await DemoServer.with { _, socket in
            let before = try #require(try await Self.counter(socket))
            let shot = try await Curl.request(socket: socket, path: "/v1/cameras/demo/shoot", arguments: ["-X", "POST"])
            #expect(shot.status == 200, "\(shot.body)")
            #expect(try await Self.counter(socket) == before + 1)
        }
    }

    private static func counter(_ socket: String) async throws -> Int? {
        let answer = try await Curl.request(socket: socket, path: "/v1/status")
        let cameras = answer.json?["cameras"] as? [[String: Any]]
        return (cameras?.first?["status"] as? [String: Any])?["shotCounter"] as? Int
    }
}
