import CameraKit
import Intervalometer
import UnleashedKit
import UnleashedProtocol

/// A camera whose every picture takes the time a test says, on the test's clock, and whose video
/// stop fails as often as a test says; nothing else about it is simulated.
actor ScriptedCamera<C: Clock<Duration>>: Camera {
    nonisolated let identity: CameraIdentity
    private let clock: C
    private let shotTime: @Sendable (Int) -> Duration
    /// How a picture's time passes: a sleep on the clock, unless the test moves the clock itself.
    private let passTime: (@Sendable (Duration) async -> Void)?
    private(set) var shotCount = 0
    /// When each picture's command arrived, measured on the clock from the camera's creation.
    private(set) var triggeredAt: [Duration] = []
    private let created: C.Instant
    /// When each recording started and stopped, on the same scale as ``triggeredAt``.
    private(set) var videoStarts: [Duration] = []
    private(set) var videoStops: [Duration] = []
    /// Every attempt to stop a recording, the failed ones included.
    private(set) var stopAttempts = 0
    private var failingStops: Int
    var isRecording: Bool { videoStarts.count > videoStops.count }

    /// - Parameters:
    ///   - shotTime: how long picture `n` (from 1) takes.
    ///   - failingStops: how many attempts to stop a recording fail (with a timeout) before
    ///     one succeeds; `Int.max` for never.
    ///   - passTime: moves the clock by a picture's time (a ``RunClock``'s advance), so that
    ///     the run's own waits are the only sleeps on it; nil sleeps on the clock.
    init(clock: C, shotTime: @escaping @Sendable (Int) -> Duration = { _ in .zero },
         capabilities: Capabilities = [.shoot, .readSettings, .video], failingStops: Int = 0,
         passTime: (@Sendable (Duration) async -> Void)? = nil) {
        self.passTime = passTime
        identity = CameraIdentity(name: "scripted", capabilities: capabilities, cameraModel: "scripted")
        self.clock = clock
        self.shotTime = shotTime
        self.failingStops = failingStops
        created = clock.now
    }

    func events() -> AsyncStream<CameraEvent> { AsyncStream { $0.finish() } }
    func status() async throws(CameraError) -> CameraStatus {
        CameraStatus(connection: .ready, moduleBattery: 100, cameraBattery: 100, storage: .ok, shotsRemaining: 1000,
                     cameraPower: .on, exposureMode: .manual, meteredEV: nil, busy: false, shotCounter: shotCount)
    }
    func settings() async throws(CameraError) -> [SettingDescriptor] { [] }
    func value(of setting: SettingID) async throws(CameraError) -> SettingValue { .shutterSpeed(ShutterSpeed(seconds: 1, per: 1000)!) }
    func set(_ value: SettingValue) async throws(CameraError) -> SettingValue { value }
    func focus(hold: Bool) async throws(CameraError) -> FocusResult { .acquired }
    func release() async throws(CameraError) {}
    func shoot() async throws(CameraError) -> Shot {
        triggeredAt.append(created.duration(to: clock.now))
        shotCount += 1
        let number = shotCount
        let time = shotTime(number)
        if time > .zero {
            if let passTime { await passTime(time) } else { try? await clock.sleep(for: time) }
        }
        return Shot(counter: number, latency: time)
    }
    func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure { throw .unsupported("bulb") }
    func startVideo() async throws(CameraError) {
        guard !isRecording else { throw .refused("videoStart", .busy, message: "already recording") }
        videoStarts.append(created.duration(to: clock.now))
    }
    func stopVideo() async throws(CameraError) -> Duration {
        stopAttempts += 1
        if failingStops > 0 {
            failingStops -= 1
            throw .timedOut("videoStop", after: .seconds(1))
        }
        guard let start = videoStarts.last, isRecording else { throw .refused("videoStop", .invalidArgument, message: "not recording") }
        let now = created.duration(to: clock.now)
        videoStops.append(now)
        return now - start
    }
    func setTime(_ time: WallTime) async throws(CameraError) {}
    func geotag(_ position: GeoPosition) async throws(CameraError) {}
    func close() async {}
    var isReady: Bool { true }
    var lastMeteredEV: ExposureStops? { nil }
}
