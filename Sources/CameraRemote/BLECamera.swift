public import CameraKit
import CameraProtocols
public import UnleashedKit

/// A camera driven through its own Bluetooth LE remote protocol (GoPro, Sony, Canon, Fujifilm,
/// Nikon): the ``Camera`` API on a brand's ``CameraRemoteDriver`` over a ``RemoteConnection``.
///
/// These remotes press buttons; they do not read or change exposure settings, so ``settings()``
/// is empty, and whatever the brand's remote lacks is refused before a byte is sent, naming
/// what it offers. The shot counter counts the pictures taken through this connection.
public actor BLECamera: Camera {
    public nonisolated let identity: CameraIdentity
    /// The brand's driver.
    public nonisolated let driver: any CameraRemoteDriver
    private let connection: RemoteConnection
    private let hub = CameraEventHub()
    private let clock: any Clock<Duration>
    /// Time on ``clock`` since the camera was opened: exposures and clips are timed on the clock
    /// they wait on.
    private let elapsed: @Sendable () -> Duration
    private var pump: Task<Void, Never>?
    private var shotCounter = 0
    private var busy = false
    private var recordingSince: Duration?
    private var cameraBattery: Int?
    private var closed = false

    /// Connects (scanning, subscribing and running the brand's handshake) and returns once the
    /// camera is ready; the connection then keeps itself up, reconnecting after a loss.
    ///
    /// - Parameter name: the camera's name in reports (its Bluetooth name or address).
    public static func open(name: String, provider: any GATTLinkProvider, driver: any CameraRemoteDriver,
                            policy: ReconnectPolicy = ReconnectPolicy(), timing: RemoteTiming = RemoteTiming(),
                            clock: any Clock<Duration> = ContinuousClock(), readyTimeout: Duration = .seconds(30)) async throws(CameraError) -> BLECamera {
        // Opening gives up after the policy's attempts; once open, the camera retries for ever.
        let connection = RemoteConnection(provider: provider, driver: driver, policy: policy, timing: timing, clock: clock)
        await connection.connect()
        do {
            try await connection.waitUntilReady(timeout: readyTimeout)
        } catch {
            await connection.disconnect()
            switch error {
            case .failed(.notFound):
                throw .device(DeviceFailure(.disconnected, "no \(driver.brand.displayName) camera called \(name) was found; "
                    + "check that it is on and in range"))
            case .failed(let failure):
                throw .device(DeviceFailure(.disconnected, "could not connect to the \(driver.brand.displayName) camera \(name): \(failure)"))
            default:
                throw .device(DeviceFailure(.disconnected, "could not connect to the \(driver.brand.displayName) camera \(name): "
                    + error.describing("camera")))
            }
        }
        let model = await connection.model
        let identity = CameraIdentity(name: name, capabilities: driver.capabilities,
                                      cameraModel: model ?? "\(driver.brand.displayName) camera",
                                      link: .ownRemote(brand: driver.brand.rawValue))
        let camera = BLECamera(identity: identity, driver: driver, connection: connection, clock: clock)
        await camera.startPump()
        return camera
    }

    private init(identity: CameraIdentity, driver: any CameraRemoteDriver, connection: RemoteConnection, clock: any Clock<Duration>) {
        self.identity = identity
        self.driver = driver
        self.connection = connection
        self.clock = clock
        elapsed = stopwatch(clock)
    }

    private func startPump() {
        let events = connection.events
        pump = Task { [weak self] in
            for await event in events {
                await self?.handle(event)
            }
        }
    }

    private func handle(_ event: RemoteConnectionEvent) {
        switch event {
        case .state(let state):
            hub.yield(.connection(state))
        case .protocolError(let reason):
            hub.yield(.error(.internalError, message: reason))
        case .signal(let signal):
            switch signal {
            case .busy(let now):
                busy = now
                hub.yield(.busy(now))
            case .battery(let percent):
                cameraBattery = percent
                hub.yield(.battery(module: percent, camera: percent))
            case .recording(let on):
                if !on { recordingSince = nil }
            case .focus, .shutterActive, .pictureTaken, .positionRequested:
                break
            }
        }
    }

    public func events() -> AsyncStream<CameraEvent> { hub.subscribe() }

    public func status() async throws(CameraError) -> CameraStatus {
        let state = await connection.state
        return CameraStatus(connection: state, moduleBattery: nil, cameraBattery: cameraBattery, storage: nil,
                            shotsRemaining: nil, cameraPower: state == .ready ? .on : .sleeping, exposureMode: nil,
                            meteredEV: nil, busy: busy, shotCounter: shotCounter)
    }

    public func settings() async throws(CameraError) -> [SettingDescriptor] { [] }

    /// Camera remotes over Bluetooth press buttons; exposure is set on the camera, so no
    /// setting can be read or changed here.
    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        throw .settingNotOffered(setting)
    }

    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        throw .settingNotOffered(value.setting)
    }

    public func focus(hold: Bool) async throws(CameraError) -> FocusResult {
        let context = try await ready(for: "focus", needs: .focus)
        return try await driver.focus(context, hold: hold)
    }

    public func release() async throws(CameraError) {
        guard identity.capabilities.contains(.focus) else { return }
        try await driver.release(try await connection.currentContext())
    }

    public func shoot() async throws(CameraError) -> Shot {
        let context = try await ready(for: "shoot", needs: .shoot)
        let started = elapsed()
        try await driver.shoot(context)
        shotCounter += 1
        let shot = Shot(counter: shotCounter, latency: elapsed() - started, confirmed: driver.confirmsShots)
        hub.yield(.shotCompleted(counter: shotCounter, cameraTime: nil))
        return shot
    }

    public func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        guard duration > .zero else { throw .invalidArgument("a bulb exposure must be longer than zero") }
        let context = try await ready(for: "bulb", needs: .bulb)
        let started = elapsed()
        try await driver.openShutter(context)
        var ending = BulbExposure.Ending.deadline
        do {
            try await clock.sleep(for: duration)
        } catch {
            ending = .stoppedEarly
        }
        // The shutter closes however the wait ended; a cancelled task still sends the release.
        let closing = Task { [driver] () -> Result<Void, CameraError> in
            do throws(CameraError) {
                try await driver.closeShutter(context)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try await closing.value.get()
        shotCounter += 1
        hub.yield(.shotCompleted(counter: shotCounter, cameraTime: nil))
        let exposed = elapsed() - started
        return BulbExposure(shot: Shot(counter: shotCounter, latency: exposed), exposed: exposed, ending: ending)
    }

    public func startVideo() async throws(CameraError) {
        let context = try await ready(for: "video", needs: .video)
        try await driver.startVideo(context)
        recordingSince = elapsed()
    }

    public func stopVideo() async throws(CameraError) -> Duration {
        let context = try await ready(for: "video", needs: .video)
        try await driver.stopVideo(context)
        defer { recordingSince = nil }
        return recordingSince.map { elapsed() - $0 } ?? .zero
    }

    public func setTime(_ time: WallTime) async throws(CameraError) {
        try await driver.setTime(try await ready(for: "time sync", needs: .setTime), time)
    }

    public func geotag(_ position: GeoPosition) async throws(CameraError) {
        if let problem = position.problem { throw .invalidArgument(problem) }
        try await driver.geotag(try await ready(for: "geotag", needs: .geotag), position)
    }

    public func close() async {
        guard !closed else { return }
        closed = true
        await connection.disconnect()
        pump?.cancel()
        hub.finish()
    }

    public var isReady: Bool {
        get async { await connection.state == .ready }
    }

    public var lastMeteredEV: ExposureStops? { nil }

    /// The connection's state now (for tests and status lines).
    public var connectionState: ConnectionState {
        get async { await connection.state }
    }

    /// Waits until the connection is ready again (after a loss), up to `timeout`.
    public func waitUntilReady(timeout: Duration) async throws(CameraError) {
        do {
            try await connection.waitUntilReady(timeout: timeout)
        } catch {
            throw .device(DeviceFailure(.disconnected, "the camera is not connected: \(error.describing("camera"))"))
        }
    }

    private func ready(for operation: String, needs capability: Capabilities) async throws(CameraError) -> RemoteContext {
        guard identity.capabilities.contains(capability) else { throw refusal(operation) }
        guard !closed else { throw .device(DeviceFailure(.disconnected, "the camera was closed")) }
        return try await connection.currentContext()
    }

    private func refusal(_ operation: String) -> CameraError {
        RemoteOffer.refusal(operation, brand: driver.brand, offers: identity.capabilities)
    }
}
