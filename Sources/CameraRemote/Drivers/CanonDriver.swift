public import CameraKit
public import CameraProtocols
public import GATT

/// Drives a Canon EOS camera in its Remote Bluetooth mode, as a BR-E1 remote (``Canon``):
/// shoot, focus, and video (the same press in movie mode).
///
/// The camera sends nothing back in this mode, so nothing is confirmed: ``shoot(_:)`` returns
/// once the release is written, ``focus(_:hold:)`` reports ``FocusResult/acquired`` once the
/// half-press is written, and a camera whose drive mode is not Remote/Timed accepts every press
/// and takes no picture, which this driver cannot notice. It takes no geotags: those need the
/// camera's smartphone pairing (smart-device mode).
public struct CanonDriver: CameraRemoteDriver {
    public var remoteProtocol: any CameraRemoteProtocol.Type { Canon.self }
    public var capabilities: Capabilities { [.shoot, .focus, .video] }
    /// The remote's buttons are written; the camera says nothing back of a picture.
    public var confirmsShots: Bool { false }
    public var subscriptions: [GATTCharacteristicID] { [] }

    /// The name the camera lists this remote under; it must stay the same between connections.
    public var remoteName: String
    /// How long a button is held before it is let go (a BR-E1 press).
    public var pressTime: Duration

    public init(remoteName: String = "unleashed", pressTime: Duration = .milliseconds(200)) {
        self.remoteName = remoteName
        self.pressTime = pressTime
    }

    /// Identifies this remote by name; the camera accepts it while its remote pairing screen
    /// is open, and afterwards when it already knows the name.
    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        try await remote.write(Canon.RemoteIdentify(name: remoteName).bytes, to: Canon.remotePairing, for: Self.pairing)
        return nil
    }

    public func explain(_ error: ATTError, during operation: String) -> CameraError? {
        guard [ATTError.insufficientAuthentication, .insufficientEncryption, .writeNotPermitted].contains(error) else { return nil }
        return .device(DeviceFailure(.permissionDenied,
            "the Canon camera has not paired this computer as its remote (\(error) during \(operation)); \(Canon.howToPair)"))
    }

    /// Presses and lets go of the release. Unconfirmed: the camera reports nothing in remote
    /// mode, so this returns once the button is up, whether or not a picture was taken.
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        try await press(.shutterPress, then: .allReleased, remote, for: "shoot")
    }

    /// Holds autofocus; unconfirmed, so the result is ``FocusResult/acquired`` once written.
    public func focus(_ remote: RemoteContext, hold: Bool) async throws(CameraError) -> FocusResult {
        if hold {
            try await remote.write(Canon.RemoteControl.focusPress.bytes, to: Canon.remoteControl, for: "focus")
        } else {
            try await press(.focusPress, then: .allReleased, remote, for: "focus")
        }
        return .acquired
    }

    public func release(_ remote: RemoteContext) async throws(CameraError) {
        try await remote.write(Canon.RemoteControl.allReleased.bytes, to: Canon.remoteControl, for: "releasing the buttons")
    }

    /// The release pressed in movie mode: the camera (in movie mode) starts recording.
    public func startVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await press(.moviePress, then: .movieReleased, remote, for: "starting video")
    }

    /// The same press again stops it.
    public func stopVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await press(.moviePress, then: .movieReleased, remote, for: "stopping video")
    }

    // MARK: -

    static let pairing = "pairing with the camera"

    /// Holds `down` for ``pressTime``, then writes `up`; `up` goes out even when the wait is cut short.
    private func press(_ down: Canon.RemoteControl, then up: Canon.RemoteControl, _ remote: RemoteContext,
                       for operation: String) async throws(CameraError) {
        try await remote.write(down.bytes, to: Canon.remoteControl, for: operation)
        let held: CameraError?
        do {
            try await remote.sleep(for: pressTime)
            held = nil
        } catch {
            held = error
        }
        try await remote.write(up.bytes, to: Canon.remoteControl, for: operation)
        if let held { throw held }
    }
}

/// Drives a Canon EOS camera in its smart-device mode, as the Camera Connect app does
/// (``Canon``): shoot and video confirmed by the camera's shooting-state reports, and geotags.
/// It has no half-press and no bulb.
///
/// The first connection waits (up to ``pairingTimeout``) for the person to press OK in the
/// camera's pairing dialog; later ones are accepted because ``clientID`` stays the same, which
/// is why the app stores it and passes it in.
public struct CanonSmartDriver: CameraRemoteDriver {
    public var remoteProtocol: any CameraRemoteProtocol.Type { Canon.self }
    public var capabilities: Capabilities { [.shoot, .video, .geotag] }
    /// The shooting state goes back to idle once the picture is taken.
    public var confirmsShots: Bool { true }
    public var subscriptions: [GATTCharacteristicID] { [Canon.handshakeName, Canon.shootingState, Canon.locationStatus] }

    /// The stable 16-byte id the camera knows this computer by.
    public var clientID: [UInt8]
    /// The name shown in the camera's pairing dialog and list.
    public var name: String
    /// How long the handshake waits for the person's answer on the camera.
    public var pairingTimeout: Duration

    /// An id for when the app has none stored yet; any fixed 16 bytes serve, as long as they
    /// do not change between connections.
    public static let defaultClientID: [UInt8] = Array("unleashed-remote".utf8)

    public init(clientID: [UInt8] = CanonSmartDriver.defaultClientID, name: String = "unleashed", pairingTimeout: Duration = .seconds(60)) {
        self.clientID = clientID.count == 16 ? clientID : Array((clientID + [UInt8](repeating: 0, count: 16)).prefix(16))
        self.name = name
        self.pairingTimeout = pairingTimeout
    }

    /// Announces this computer, sends its id, name and type, waits for the person's answer,
    /// finishes the handshake and switches the camera to shooting.
    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        let answer = await remote.expect(Canon.handshakeName) { (try? Canon.PairingAnswer(decoding: $0)) != nil }
        let messages: [Canon.SmartIdentify] = [.announce(name: name), .identity(clientID), .nickname(name),
                                               .deviceType(Canon.SmartIdentify.androidDevice)]
        do {
            for message in messages {
                try await remote.write(message.bytes, to: message.characteristic, for: CanonDriver.pairing)
            }
        } catch {
            await answer.cancel()
            throw error
        }
        let reply: [UInt8]
        do {
            reply = try await answer.wait(for: "the pairing confirmation on the camera", timeout: pairingTimeout)
        } catch .timedOut {
            throw .device(DeviceFailure(.permissionDenied, "nobody confirmed the pairing on the Canon camera within "
                + "\(pairingTimeout.shortDescription); press OK in its pairing dialog when connecting"))
        }
        guard (try? Canon.PairingAnswer(decoding: reply)) == .accepted else {
            throw .device(DeviceFailure(.permissionDenied, "the pairing was declined on the Canon camera"))
        }
        try await remote.write(Canon.SmartIdentify.finish.bytes, to: Canon.handshakeControl, for: CanonDriver.pairing)
        try await remote.write(Canon.SessionCommand.shooting.bytes, to: Canon.sessionCommand, for: "switching the camera to shooting")
        return nil
    }

    public func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal] {
        switch characteristic {
        case Canon.shootingState:
            switch try? Canon.ShootingState(decoding: message) {
            case .focusAcquired?: [.focus(true)]
            case .recording?: [.recording(true)]
            default: []
            }
        case Canon.locationStatus:
            (try? Canon.LocationState(decoding: message)) == .setup ? [.positionRequested] : []
        default:
            []
        }
    }

    /// Presses and releases the shutter; the camera reports focus and then the picture. A
    /// picture reported without focus first is a failed autofocus (``CameraError/focusFailed``).
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        let first = await remote.expect(Canon.shootingState) { Self.state($0).map { [.focusAcquired, .idle].contains($0) } ?? false }
        let taken = await remote.expect(Canon.shootingState) { Self.state($0) == .idle }
        do throws(CameraError) {
            try await remote.write(Canon.SmartShutter.press.bytes, to: Canon.shootingButtons, for: "shoot")
            try await remote.write(Canon.SmartShutter.release.bytes, to: Canon.shootingButtons, for: "shoot")
            guard Self.state(try await first.wait(for: "shoot")) == .focusAcquired else { throw .focusFailed }
            _ = try await taken.wait(for: "shoot")
        } catch {
            await first.cancel()
            await taken.cancel()
            if case .timedOut(_, let after) = error { throw .shotNotReported(after: after) }
            throw error
        }
    }

    public func startVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await video(.startVideo, until: .recording, remote, for: "starting video")
    }

    public func stopVideo(_ remote: RemoteContext) async throws(CameraError) {
        try await video(.stopVideo, until: .idle, remote, for: "stopping video")
    }

    /// Turns the location link on (the camera answers that it wants positions), then sends the fix.
    public func geotag(_ remote: RemoteContext, _ position: GeoPosition) async throws(CameraError) {
        let wanted = await remote.expect(Canon.locationStatus) { (try? Canon.LocationState(decoding: $0)) == .wanted }
        do {
            try await remote.write(Canon.locationAcknowledge, to: Canon.locationData, for: "geotag")
            _ = try await wanted.wait(for: "geotag")
        } catch {
            await wanted.cancel()
            throw error
        }
        try await remote.write(Canon.GeoFix(position).bytes, to: Canon.locationData, for: "geotag")
    }

    private static func state(_ message: [UInt8]) -> Canon.ShootingState? { try? Canon.ShootingState(decoding: message) }

    private func video(_ button: Canon.SmartShutter, until state: Canon.ShootingState, _ remote: RemoteContext,
                       for operation: String) async throws(CameraError) {
        let report = await remote.expect(Canon.shootingState) { Self.state($0) == state }
        do {
            try await remote.write(button.bytes, to: Canon.shootingButtons, for: operation)
            _ = try await report.wait(for: operation)
        } catch {
            await report.cancel()
            throw error
        }
    }
}
