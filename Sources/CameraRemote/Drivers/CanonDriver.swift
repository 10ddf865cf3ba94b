public import CameraKit
public import CameraProtocols

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

    public func refusalDetail(for capability: Capabilities) -> String? {
        switch capability {
        case .geotag: "geotags need the camera's smartphone pairing (smart-device mode); in Remote mode it takes no position"
        default: nil
        }
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
