import CameraKit
import Intervalometer
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// A simulated camera under a modelled sky, on a test's clock: its meter reads the sky, and each
/// picture comes out as bright as the sky and the settings make it (``VirtualCamera``). What a
/// ramped run does to a camera, without the radio in between, so that hours pass in moments.
actor SkyCamera<C: Clock<Duration>>: Camera {
    /// One picture, as it came out.
    struct Picture: Sendable {
        var elapsed: Duration
        /// Stops from mid-grey.
        var brightness: Double
        var exposure: String
        var seconds: Double
        var iso: UInt32
        var aperture: String
    }

    nonisolated let identity: CameraIdentity
    private let clock: C
    private let sky: Daylight
    private let created: C.Instant
    private var camera: VirtualCamera
    private(set) var pictures: [Picture] = []
    private(set) var settingChanges = 0

    /// After how many pictures the meter reports nothing, as a camera whose reading failed.
    private let readingsMissing: Set<Int>
    /// When (from its creation, on the test's clock) the camera is switched off.
    private let offline: Range<Duration>?

    /// `meters`: whether the camera gives light readings (a camera that does not cannot ramp).
    init(clock: C, sky: Daylight, profile: CameraProfile = .nikonLike, settings: [SettingValue] = [], meters: Bool = true,
         readingsMissing: Set<Int> = [], offline: Range<Duration>? = nil) throws {
        self.readingsMissing = readingsMissing
        self.offline = offline
        var capabilities: Capabilities = [.shoot, .bulb, .readSettings, .writeSettings]
        if meters { capabilities.insert(.meteredEV) }
        identity = CameraIdentity(name: "sky", capabilities: capabilities, cameraModel: "simulated")
        self.clock = clock
        self.sky = sky
        created = clock.now
        camera = VirtualCamera(profile: profile)
        for value in settings { try camera.apply(value) }
    }

    private var elapsed: Duration { created.duration(to: clock.now) }

    private func meter() -> ExposureStops {
        ExposureStops(twentyFourths: Int32((sky.ev(at: elapsed) * 24).rounded()))
    }

    private func take(bulb: Duration?) -> Picture? {
        camera.sceneEV = meter()
        guard let brightness = camera.pictureBrightness(bulb: bulb),
              case .shutterSpeed(let speed)? = camera.settings[.shutterSpeed],
              case .iso(let iso)? = camera.settings[.iso], case .aperture(let aperture)? = camera.settings[.aperture] else { return nil }
        let seconds = bulb?.seconds ?? speed.seconds
        return Picture(elapsed: elapsed, brightness: brightness, exposure: bulb.map { "bulb \($0)" } ?? speed.text,
                       seconds: seconds, iso: iso.rawValue, aperture: aperture.text)
    }

    func events() -> AsyncStream<CameraEvent> { AsyncStream { $0.finish() } }
    func status() async throws(CameraError) -> CameraStatus {
        CameraStatus(connection: .ready, moduleBattery: 100, cameraBattery: 100, storage: .ok, shotsRemaining: 10_000,
                     cameraPower: .on, exposureMode: camera.exposureMode, meteredEV: reading, busy: false, shotCounter: pictures.count)
    }
    func settings() async throws(CameraError) -> [SettingDescriptor] { camera.descriptors }
    func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        guard let value = camera.settings[setting] else { throw .settingNotOffered(setting) }
        return value
    }
    func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        do {
            try camera.apply(value)
        } catch {
            throw .settingNotOffered(value.setting)
        }
        settingChanges += 1
        return value
    }
    func focus(hold: Bool) async throws(CameraError) -> FocusResult { .acquired }
    func release() async throws(CameraError) {}
    func shoot() async throws(CameraError) -> Shot {
        guard let picture = take(bulb: nil) else { throw .invalidArgument("no picture at \(camera.settings)") }
        pictures.append(picture)
        return Shot(counter: pictures.count, latency: .zero)
    }
    func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        guard case .shutterSpeed(let speed)? = camera.settings[.shutterSpeed], speed.isBulb else {
            throw .notInBulbMode(current: camera.settings[.shutterSpeed])
        }
        guard let picture = take(bulb: duration) else { throw .invalidArgument("no picture in bulb") }
        try? await clock.sleep(for: duration)
        pictures.append(picture)
        return BulbExposure(shot: Shot(counter: pictures.count, latency: duration), exposed: duration, ending: .deadline)
    }
    func startVideo() async throws(CameraError) { throw .unsupported("video") }
    func stopVideo() async throws(CameraError) -> Duration { throw .unsupported("video") }
    func setTime(_ time: WallTime) async throws(CameraError) {}
    func geotag(_ position: GeoPosition) async throws(CameraError) {}
    func close() async {}
    var isReady: Bool { !(offline?.contains(elapsed) ?? false) }
    var lastMeteredEV: ExposureStops? { reading }
    private var reading: ExposureStops? { readingsMissing.contains(pictures.count) ? nil : meter() }
}
