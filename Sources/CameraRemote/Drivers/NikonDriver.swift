public import CameraKit
public import CameraProtocols
public import GATT

/// A Nikon camera driven as its ML-L7 remote: the four-stage handshake, then "take a photo".
///
/// That is all remote mode offers: no half-press, no held shutter, no position and no video, so
/// those are refused before anything is sent. The camera does not confirm a picture either:
/// ``shoot(_:)`` returns once it acknowledged the release write.
public struct NikonDriver: CameraRemoteDriver {
    /// Who this remote is to the camera; the app stores it, since the camera answers only the
    /// remote it paired with.
    public let deviceID: Nikon.DeviceID
    /// The rest of the stage-1 identity (furble stores it with the device ID).
    public let nonce: UInt32

    /// How long each handshake stage waits for the camera: a silent camera is one paired with
    /// another remote, so this is long enough for a slow body (furble waits 10 s; a Z6III takes
    /// seconds to reconnect).
    public let answerTimeout: Duration

    /// A fixed nonce for a remote that was given none.
    public static let standardNonce: UInt32 = 0x554E_4C44

    public init(deviceID: Nikon.DeviceID = .standard, nonce: UInt32 = NikonDriver.standardNonce, answerTimeout: Duration = .seconds(10)) {
        self.deviceID = deviceID
        self.nonce = nonce
        self.answerTimeout = answerTimeout
    }

    public var remoteProtocol: any CameraRemoteProtocol.Type { Nikon.self }
    public var capabilities: Capabilities { [.shoot] }
    /// The remote button is written; the camera does not report the picture.
    public var confirmsShots: Bool { false }
    /// The remote indication first, then the handshake's, as the ML-L7 does.
    public var subscriptions: [GATTCharacteristicID] { [Nikon.remoteIndication, Nikon.pairing] }

    public func handshake(_ remote: RemoteContext) async throws(CameraError) -> String? {
        let acknowledged = await remote.expect(Nikon.pairing) { $0.first == 2 }
        try await remote.write(Nikon.PairingMessage.identify(deviceID, nonce: nonce).bytes, to: Nikon.pairing, for: "pairing")
        let answer: [UInt8]
        do {
            answer = try await acknowledged.wait(for: "the camera's answer to this remote", timeout: answerTimeout)
        } catch .timedOut {
            throw .device(DeviceFailure(.permissionDenied, "the camera did not answer this remote (device ID \(deviceID)): it is paired "
                + "with another remote, or not waiting for one; to pair it with this one: \(Nikon.howToPair)"))
        }
        guard (try? Nikon.PairingMessage(decoding: answer)) == .acknowledge else {
            throw .device(DeviceFailure(.unsupported, "the camera answered as for a smartphone (SnapBridge), which this remote cannot "
                + "finish; set it to connect to a remote: \(Nikon.howToPair)"))
        }
        let serial = await remote.expect(Nikon.pairing) { $0.first == 4 }
        try await remote.write(Nikon.PairingMessage.confirm.bytes, to: Nikon.pairing, for: "pairing")
        let last = try await serial.wait(for: "the camera's last pairing stage", timeout: answerTimeout)
        guard case .serial? = try? Nikon.PairingMessage(decoding: last) else {
            throw .device(DeviceFailure(.failed, "the camera's last pairing stage was not what a remote expects: \(MalformedMessage.unknown(.nikon, of: "stage 4", last))"))
        }
        return nil
    }

    /// Presses and releases the button; returns when the camera acknowledged both writes.
    public func shoot(_ remote: RemoteContext) async throws(CameraError) {
        try await remote.write(Nikon.RemoteButton.press.bytes, to: Nikon.shutter, for: "shoot")
        try await remote.write(Nikon.RemoteButton.release.bytes, to: Nikon.shutter, for: "shoot")
    }
}
