public import CameraKit
public import CameraProtocols
public import GATT

/// A Fujifilm X or GFX camera driven as its phone app drives it: shutter, half-press focus,
/// bulb by holding the full press, and positions for its pictures.
///
/// The camera never confirms a picture over Bluetooth (no notification follows a press in the
/// published captures), so ``shoot(_:)`` returns once the camera acknowledged the release write
/// and the shot counter counts presses sent. Focus is not reported either: a half-press returns
/// ``FocusResult/acquired`` once the camera took it.
public struct FujifilmDriver: CameraRemoteDriver {
    /// The pairing generation, from the camera's advertisement at the first pairing (the app
    /// stores it with the camera): the basic token or the secure serial.
    public let generation: Fujifilm.Generation
    /// The name the camera lists this remote under.
    public let remoteName: String
    /// How long the basic handshake waits for the camera's registration notification before it
    /// carries on without (cameras that already know the remote may not send it).
    public let registrationWait: Duration
    /// How long a half-press without hold is kept before the release.
    public let focusTime: Duration

    public init(generation: Fujifilm.Generation, remoteName: String = "unleashed", registrationWait: Duration = .seconds(5),
                focusTime: Duration = .milliseconds(500)) {
        self.generation = generation
        self.remoteName = remoteName
        self.registrationWait = registrationWait
        self.focusTime = focusTime
    }

    /// The driver for the camera `recognized` from its advertisement; nil when it showed no
    /// token or serial (a basic camera whose registration is closed, seen for the first time).
    public init?(recognized: RecognizedCamera, remoteName: String = "unleashed") {
        guard recognized.brand == .fujifilm, let generation = Fujifilm.generation(fromToken: recognized.token) else { return nil }
        self.init(generation: generation, remoteName: remoteName)
    }

    public var remoteProtocol: any CameraRemoteProtocol.Type { Fujifilm.self }
    public var capabilities: Capabilities { [.shoot, .focus, .bulb, .geotag] }
    /// The shutter is written; the camera does not report the picture.
    public var confirmsShots: Bool { false }

    /// The camera's notifications, subscribed before the pairing writes so that its registration
    /// notification cannot come before the wait for it. A secure camera's optional ones are
    /// subscribed in the handshake, where a camera without them is no failure.
    public var subscriptions: [GATTCharacteristicID] {
        let common = [Fujifilm.indication1, Fujifilm.indication2, Fujifilm.configured, Fujifilm.geotagRequest]
        switch generation {
        case .basic: return common + [Fujifilm.indication3]
        // Notification 3 too, which furble subscribes to among the required ones (FujifilmSecure.cpp).
        case .secure: return common + Fujifilm.secureRequiredNotifications + [Fujifilm.secureThirdNotification, Fujifilm.geotagSyncInterval]
        }
    }

    static let pairing = "pairing with the camera"

    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        let name = Array(remoteName.utf8)
        switch generation {
        case .basic(let token):
            let registered = await remote.expect(Fujifilm.configured) {
                (try? Fujifilm.Notification.parse($0, on: Fujifilm.configured)) == .configured
            }
            try await remote.write(token, to: Fujifilm.pairingToken, for: Self.pairing)
            try await remote.write(name, to: Fujifilm.remoteName, for: Self.pairing)
            do {
                _ = try await registered.wait(for: "the camera's registration", timeout: registrationWait)
            } catch .timedOut {
                // furble too carries on without it; the shutter writes show whether it took.
            }
        case .secure:
            let read = try await remote.read(Fujifilm.secureStatus, for: Self.pairing)
            let status: Fujifilm.SecureStatus
            do {
                status = try Fujifilm.SecureStatus(decoding: read)
            } catch {
                throw .device(DeviceFailure(.failed, "\(Self.pairing) failed: \(error)"))
            }
            try await remote.write(status.acknowledgement, to: Fujifilm.secureStatus, for: Self.pairing)
            try await remote.write(name, to: Fujifilm.secureRemoteName, for: Self.pairing)
            for optional in Fujifilm.secureOptionalNotifications {
                if await remote.link.offers(optional) { try? await remote.link.subscribe(optional) }
            }
            try await remote.write(Fujifilm.SyncInterval.standard.bytes, to: Fujifilm.geotagSyncInterval, for: Self.pairing)
        }
        return nil
    }

    public func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal] {
        switch try? Fujifilm.Notification.parse(message, on: characteristic) {
        case .positionRequested?: [.positionRequested]
        default: []
        }
    }

    /// A refused pairing write means the camera does not know this remote (another token, or
    /// registration closed): say where to register it.
    public func explain(_ error: ATTError, during operation: String) -> CameraError? {
        guard operation == Self.pairing else { return nil }
        return .device(DeviceFailure(.permissionDenied, "the camera refused this remote (\(error)); it is not registered with it: "
            + Fujifilm.howToPair))
    }

    /// Presses and releases the shutter; returns when the camera acknowledged both (no picture
    /// confirmation exists in this protocol).
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        try await send(.press, remote, for: "shoot")
        try await send(.release, remote, for: "shoot")
    }

    /// Half-presses; without `hold`, releases after ``focusTime``. The camera does not say whether
    /// it found focus.
    public func focus(_ remote: RemoteContext, hold: Bool) async throws(CameraError) -> FocusResult {
        try await send(.focus, remote, for: "focus")
        if !hold {
            try await remote.sleep(for: focusTime)
            try await send(.release, remote, for: "focus")
        }
        return .acquired
    }

    public func release(_ remote: RemoteContext) async throws(CameraError) {
        try await send(.release, remote, for: "release")
    }

    /// Holds the full press: in bulb mode the shutter stays open until ``closeShutter(_:)``.
    public func openShutter(_ remote: RemoteContext) async throws(CameraError) {
        try await send(.press, remote, for: "bulb")
    }

    public func closeShutter(_ remote: RemoteContext) async throws(CameraError) {
        try await send(.release, remote, for: "bulb")
    }

    /// Writes the position at once; the camera also asks for one (``RemoteSignal/positionRequested``)
    /// at the interval the secure handshake set.
    public func geotag(_ remote: RemoteContext, _ position: GeoPosition) async throws(CameraError) {
        let fix = Fujifilm.GeotagFix(latitude: position.latitude, longitude: position.longitude, altitude: position.altitude,
                                     fixTimeMilliseconds: position.fixTime)
        try await remote.write(fix.bytes, to: Fujifilm.geotag, for: "geotag")
    }

    private func send(_ action: Fujifilm.ShutterAction, _ remote: RemoteContext, for operation: String) async throws(CameraError) {
        for bytes in action.writes {
            try await remote.write(bytes, to: Fujifilm.shutter, for: operation)
        }
    }
}
