/// The operations every camera backend offers: the Unleashed module, a USB-tethered camera
/// through libgphoto2, a camera behind a daemon. Commands, the intervalometer and the daemon are
/// written against this protocol only.
///
/// Each operation either succeeds or throws a ``CameraError`` that says why, in words a person
/// can act on; none hangs: each has a time limit.
public protocol Camera: Actor {
    /// What the camera (and the module, if any) said about itself when it connected.
    nonisolated var identity: CameraIdentity { get }

    /// A new subscription to the camera's events, starting now. Each call gives an independent
    /// stream; it ends when the camera is closed.
    func events() -> AsyncStream<CameraEvent>

    /// The state of the camera and its link now.
    func status() async throws(CameraError) -> CameraStatus

    /// Every setting with the values the camera offers now.
    func settings() async throws(CameraError) -> [SettingDescriptor]

    /// One setting's value now.
    func value(of setting: SettingID) async throws(CameraError) -> SettingValue

    /// Changes a setting after checking that the camera offers the value; returns the value in
    /// effect.
    func set(_ value: SettingValue) async throws(CameraError) -> SettingValue

    /// Presses the shutter button half-way and waits for focus; with `hold`, keeps it pressed
    /// until ``release()``.
    func focus(hold: Bool) async throws(CameraError) -> FocusResult

    /// Releases every button held by ``focus(hold:)``.
    func release() async throws(CameraError)

    /// Takes one picture at the camera's shutter speed and waits until the camera reports it.
    func shoot() async throws(CameraError) -> Shot

    /// Takes one bulb exposure of `duration`. The shutter is closed however this ends: at the
    /// deadline, when the calling task is cancelled, on an error, or when the link drops.
    func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure

    /// Starts recording video.
    func startVideo() async throws(CameraError)

    /// Stops recording video; returns the length of the clip.
    func stopVideo() async throws(CameraError) -> Duration

    /// Sets the camera's clock.
    func setTime(_ time: WallTime) async throws(CameraError)

    /// Gives the camera the position to record in the pictures that follow.
    func geotag(_ position: GeoPosition) async throws(CameraError)

    /// Ends the connection; the event streams finish.
    func close() async

    /// Whether a command sent now would go out at once (the link is up). Schedulers check it
    /// so that a slot is recorded as missed instead of waiting for a reconnection.
    var isReady: Bool { get async }

    /// Gets ready for a shot at a deadline: does now what would otherwise delay the trigger
    /// (a module reads its shot counter and shutter speed once), so that a command released at
    /// the deadline goes out at once. Returns ``isReady``.
    func prepareShot() async -> Bool

    /// Whether ``shoot(at:)`` now presses on the camera's own clock: a module with scheduled
    /// shots (PROTOCOL.md §9.6) whose timer this host has read.
    var schedulesShots: Bool { get async }

    /// Takes one picture with the shutter pressed at `instant` on this host's clock and waits
    /// until the camera reports it. A camera that ``schedulesShots`` is told the instant ahead
    /// and presses on its own timer, so cameras told the same instant fire together however late
    /// each command arrived; any other camera is triggered when the instant comes.
    func shoot(at instant: ContinuousClock.Instant) async throws(CameraError) -> Shot

    /// The last metered EV the camera reported, if it meters.
    var lastMeteredEV: ExposureStops? { get async }

    /// Waits until the work the camera does after its shots (copying pictures to this computer)
    /// is done; returns how many pictures it has reported, as ``CameraEvent/fileSaved(_:)`` or
    /// ``CameraEvent/fileNotSaved(cameraPath:reason:)``, since it was opened. A run calls it
    /// before its `stop` hook so that the hook comes after the last picture's `download`.
    func settle() async -> Int
}

extension Camera {
    /// Backends that copy no pictures have nothing to wait for.
    public func settle() async -> Int { 0 }

    /// Backends with nothing to read ahead only say whether they are ready.
    public func prepareShot() async -> Bool { await isReady }

    /// Backends without a clock of their own are triggered at the instant.
    public var schedulesShots: Bool { false }

    public func shoot(at instant: ContinuousClock.Instant) async throws(CameraError) -> Shot {
        try await waitUntil(instant)
        return try await shoot()
    }

    /// Reads a value as a person typed it for `setting`.
    public nonisolated func parse(_ text: String, for setting: SettingID) throws(CameraError) -> SettingValue {
        guard let value = SettingValue(setting: setting, text: text) else { throw .unreadableValue(setting, text) }
        return value
    }
}

/// Sleeps until `instant` on this host's clock; a cancelled wait is ``CameraError/cancelled``.
package func waitUntil(_ instant: ContinuousClock.Instant) async throws(CameraError) {
    do {
        try await ContinuousClock().sleep(until: instant, tolerance: nil)
    } catch {
        throw .cancelled
    }
}

/// Who answered: the module and the camera behind it.
public struct CameraIdentity: Hashable, Sendable {
    /// What drives a camera. It is part of the identity, so that it crosses the daemon's API
    /// with the rest: a client shows a camera the daemon holds as it shows one it opened.
    public enum Link: Hashable, Sendable {
        /// An Unleashed module on the camera.
        case module
        /// libgphoto2, over USB or PTP/IP.
        case tethered
        /// The camera's own Bluetooth remote, of the brand named by its identifier (`gopro`).
        case ownRemote(brand: String)
    }

    /// The backend's name for the device, e.g. the module's serial number.
    public var name: String
    public var firmwareVersion: String?
    public var protocolVersion: UInt8?
    /// What the device can do; operations it cannot do fail with ``CameraError/unsupported(_:)``.
    public var capabilities: Capabilities
    /// Nil when no camera is attached.
    public var cameraModel: String?
    public var link: Link

    public init(name: String, firmwareVersion: String? = nil, protocolVersion: UInt8? = nil,
                capabilities: Capabilities, cameraModel: String?, link: Link = .module) {
        self.name = name
        self.firmwareVersion = firmwareVersion
        self.protocolVersion = protocolVersion
        self.capabilities = capabilities
        self.cameraModel = cameraModel
        self.link = link
    }
}

/// A snapshot of the module and its camera.
public struct CameraStatus: Hashable, Sendable {
    /// The link to the module when the snapshot was taken.
    public var connection: ConnectionState
    public var moduleBattery: Int?
    public var cameraBattery: Int?
    public var storage: StorageState?
    public var shotsRemaining: Int?
    public var cameraPower: CameraPower
    public var exposureMode: ExposureMode?
    public var meteredEV: ExposureStops?
    public var busy: Bool
    public var shotCounter: Int

    public init(connection: ConnectionState, moduleBattery: Int?, cameraBattery: Int?, storage: StorageState?,
                shotsRemaining: Int?, cameraPower: CameraPower, exposureMode: ExposureMode?,
                meteredEV: ExposureStops?, busy: Bool, shotCounter: Int) {
        self.connection = connection
        self.moduleBattery = moduleBattery
        self.cameraBattery = cameraBattery
        self.storage = storage
        self.shotsRemaining = shotsRemaining
        self.cameraPower = cameraPower
        self.exposureMode = exposureMode
        self.meteredEV = meteredEV
        self.busy = busy
        self.shotCounter = shotCounter
    }
}

/// A picture the camera reported taken.
public struct Shot: Hashable, Sendable {
    /// The camera's count of pictures taken through the module, this one included.
    public var counter: Int
    /// From sending the trigger to learning the picture was taken, measured on this host.
    public var latency: Duration
    /// The camera's clock at the shot, if it told.
    public var cameraTime: UInt64?
    /// True when the camera's report was lost and the shot was confirmed from its counter
    /// instead; ``latency`` then overstates the camera's time.
    public var confirmedByCounter: Bool
    /// Requests to the camera sent again while this picture was taken because no answer came in
    /// time (a lost packet): what held up a shot that took long. 0 where the driver cannot tell.
    public var resent: Int
    /// False when the camera's protocol never says a picture was taken (Nikon's, Fujifilm's,
    /// Canon's basic remote): the trigger was sent and the link took it, nothing more is known,
    /// and ``latency`` is the write's. ``counter`` then counts triggers sent.
    public var confirmed: Bool

    public init(counter: Int, latency: Duration, cameraTime: UInt64? = nil, confirmedByCounter: Bool = false, resent: Int = 0,
                confirmed: Bool = true) {
        self.counter = counter
        self.latency = latency
        self.cameraTime = cameraTime
        self.confirmedByCounter = confirmedByCounter
        self.resent = resent
        self.confirmed = confirmed
    }
}

/// A bulb exposure that ended.
public struct BulbExposure: Hashable, Sendable {
    /// The shot it produced.
    public var shot: Shot
    /// How long the shutter was open, as the module measured it (nil when the module's report
    /// was lost).
    public var exposed: Duration?
    /// How the exposure ended.
    public var ending: Ending

    public enum Ending: String, Hashable, Sendable {
        /// The module closed the shutter at the deadline.
        case deadline
        /// The caller stopped early (its task was cancelled) and the shutter was closed then.
        case stoppedEarly
    }

    public init(shot: Shot, exposed: Duration?, ending: Ending) {
        self.shot = shot
        self.exposed = exposed
        self.ending = ending
    }
}

/// A moment on the wall clock with the local offset, for setting a camera's clock.
public struct WallTime: Hashable, Sendable {
    /// Milliseconds since the Unix epoch, UTC.
    public var unixMilliseconds: UInt64
    /// Minutes east of UTC, -720...840.
    public var utcOffsetMinutes: Int

    public init(unixMilliseconds: UInt64, utcOffsetMinutes: Int) {
        self.unixMilliseconds = unixMilliseconds
        self.utcOffsetMinutes = utcOffsetMinutes
    }
}

/// A position to record in pictures (WGS 84).
public struct GeoPosition: Hashable, Sendable {
    /// Degrees north, -90...90.
    public var latitude: Double
    /// Degrees east, -180...180.
    public var longitude: Double
    /// Metres above mean sea level, -1 000 000...1 000 000.
    public var altitude: Double?
    /// When the fix was taken, milliseconds since the Unix epoch (UTC).
    public var fixTime: UInt64

    public init(latitude: Double, longitude: Double, altitude: Double? = nil, fixTime: UInt64) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.fixTime = fixTime
    }

    /// Why the position cannot be sent, or nil when it can.
    public var problem: String? {
        if !(latitude.isFinite && (-90...90).contains(latitude)) { return "latitude must be between -90 and 90 degrees" }
        if !(longitude.isFinite && (-180...180).contains(longitude)) { return "longitude must be between -180 and 180 degrees" }
        if let altitude, !(altitude.isFinite && (-1_000_000...1_000_000).contains(altitude)) {
            return "altitude must be between -1000000 and 1000000 metres"
        }
        return nil
    }
}

/// Something the camera or its link reported.
public enum CameraEvent: Hashable, Sendable {
    /// The link to the module changed state.
    case connection(ConnectionState)
    case shotCompleted(counter: Int, cameraTime: UInt64?)
    case settingChanged(SettingValue)
    case battery(module: Int, camera: Int?)
    case storage(StorageState, shotsRemaining: Int?)
    case cameraPower(CameraPower)
    case busy(Bool)
    case meteredEV(ExposureStops)
    /// The module closed a bulb exposure at its deadline.
    case bulbDeadlineFired(Duration)
    /// Something failed outside any request.
    case error(FailureReason, message: String?)
    /// Events were lost on the way; the state they carried is re-read when it matters.
    case missedEvents(Int)
    /// A picture was copied to this computer (backends that download).
    case fileSaved(SavedFile)
    /// A picture could not be copied; it is still on the camera at `cameraPath`.
    case fileNotSaved(cameraPath: String, reason: String)
}

/// Why a camera operation failed, worded for the person who asked. Backends translate their own
/// failures (a module's status codes, libgphoto2's errors) into these cases; ``kind`` sorts them
/// for exit statuses and HTTP statuses.
public enum CameraError: Error, Hashable, Sendable {
    case unknownSetting(String)
    case unreadableValue(SettingID, String)
    case settingNotOffered(SettingID)
    case readOnly(SettingID)
    case valueNotOffered(SettingValue, nearest: [SettingValue], offered: [SettingValue])
    /// An argument checked before anything was sent.
    case invalidArgument(String)
    /// The device cannot do this at all.
    case unsupported(String)
    /// The camera tried and could not find focus.
    case focusFailed
    /// Bulb exposures need the shutter speed set to bulb.
    case notInBulbMode(current: SettingValue?)
    /// The camera refused the named operation: busy, off, card full, not attached, …
    case refused(String, FailureReason, message: String?)
    /// No answer to the named operation in time; it may or may not have run.
    case timedOut(String, after: Duration)
    /// The camera accepted the trigger but no picture was confirmed.
    case shotNotReported(after: Duration)
    /// The module could not be reached (or was lost and not regained in time).
    case notConnected(String)
    /// The operation was stopped by its caller.
    case cancelled
    /// A failure below the camera API that fits none of the above, in the backend's words.
    case device(DeviceFailure)
}

extension CameraError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unknownSetting(let name):
            "there is no setting called '\(name)'; settings are: \(SettingID.userNames.joined(separator: ", "))"
        case .unreadableValue(let setting, let text):
            "'\(text)' is not \(English.withArticle("\(setting.displayName) value")); write it like \(setting.valueExample)"
        case .settingNotOffered(let setting):
            "this camera has no \(setting.displayName) setting"
        case .readOnly(let setting):
            "this camera reports \(setting.displayName) but does not let it be changed"
        case .valueNotOffered(let value, let nearest, let offered):
            "\(value.setting.displayName) \(value.text) is not offered by this camera; "
                + (nearest.isEmpty
                    ? "it offers: \(offered.map(\.text).joined(separator: ", "))"
                    : "nearest: \(nearest.map(\.text).joined(separator: ", "))")
        case .invalidArgument(let why):
            why
        case .unsupported(let what):
            "\(what) is not supported by this camera"
        case .focusFailed:
            "the camera could not focus; check the light and the lens, or focus manually"
        case .notInBulbMode(let current):
            "a bulb exposure needs the shutter speed set to bulb (it is \(current?.text ?? "unknown")); "
                + "run: unleashed settings set shutter-speed bulb"
        case .refused(let operation, let reason, let message):
            switch (reason, message) {
            case (.invalidArgument, let message?), (.notSupported, let message?), (.internalError, let message?):
                "the module refused \(operation): \(message)"
            default:
                Self.refusal(operation, reason) + (message.map { " (\($0))" } ?? "")
            }
        case .timedOut(let operation, let after):
            // A module's or a camera's remote alike: the words name neither.
            "no answer to \(operation) within \(after.shortDescription); it may or may not have run"
        case .shotNotReported(let after):
            "the camera accepted the trigger but no picture was confirmed within \(after.shortDescription)"
        case .notConnected(let why):
            "the module is not connected: \(why)"
        case .cancelled:
            "stopped before it finished"
        case .device(let failure):
            failure.message
        }
    }

    private static func refusal(_ operation: String, _ reason: FailureReason) -> String {
        switch reason {
        case .busy: "the camera is busy; try again in a moment"
        case .cameraOff: "the camera is off or asleep; switch it on or half-press the shutter button to wake it"
        case .cardFull: "the memory card is full"
        case .cameraNotAttached: "no camera is attached to the module"
        case .notSupported: "the module does not support \(operation) now"
        case .invalidArgument: "the module refused \(operation) as invalid"
        default: "the module refused \(operation): \(reason)"
        }
    }
}
