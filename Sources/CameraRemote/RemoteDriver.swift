public import CameraKit
public import CameraProtocols
public import GATT

/// One brand's remote protocol as operations: which bytes go where and what to wait for. A
/// driver holds no I/O and no state between calls; everything it sends and waits for goes
/// through a ``RemoteContext``, so the same driver runs over BlueZ and over a simulated body.
///
/// An operation the brand's remote lacks is never sent: ``BLECamera`` checks
/// ``capabilities`` first and refuses with ``offered``.
public protocol CameraRemoteDriver: Sendable {
    /// The brand's protocol description (services, advertisement).
    var remoteProtocol: any CameraRemoteProtocol.Type { get }
    /// What this remote can do.
    var capabilities: Capabilities { get }
    /// The characteristics to subscribe to on every connection (cameras such as GoPro do not
    /// remember subscriptions).
    var subscriptions: [GATTCharacteristicID] { get }
    /// How often ``keepAlive(_:)`` runs while connected; nil when the camera needs none and a
    /// lost link is learnt from the link itself.
    var keepAliveInterval: Duration? { get }

    /// Joins several notification packets into messages, for protocols that split them (GoPro);
    /// nil when every notification is a whole message.
    func makeAssembler(for characteristic: GATTCharacteristicID) -> (any MessageAssembler)?

    /// Runs after subscribing, on every connection: identification, pairing tokens, claiming
    /// control, waiting for readiness. Returns the model, when the camera tells it.
    func handshake(_ remote: RemoteContext) async throws(CameraError) -> String?
    /// Proves the camera is still there and keeps it awake; a throw means the link is lost.
    func keepAlive(_ remote: RemoteContext) async throws(CameraError)
    /// What a message the camera sent outside any request means (busy, recording, focus).
    func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal]
    /// Turns a refusal into words naming the camera setting to change, when the brand's refusal
    /// codes say why (Sony's 0x90: the remote setting is off); nil leaves the generic message.
    func explain(_ error: ATTError, during operation: String) -> CameraError?

    /// Whether ``shoot(_:)`` returns on the camera's word that a picture was taken; false for a
    /// protocol with no shot feedback, whose shots are reported "sent, not confirmed".
    var confirmsShots: Bool { get }

    /// Takes one picture; returns when the camera confirmed it, or at once when this protocol
    /// has no confirmation (``confirmsShots`` false: the latency is the write's).
    func shoot(_ remote: RemoteContext) async throws(CameraError)
    /// Half-presses; with `hold` keeps it pressed until ``release(_:)``.
    func focus(_ remote: RemoteContext, hold: Bool) async throws(CameraError) -> FocusResult
    /// Releases every button.
    func release(_ remote: RemoteContext) async throws(CameraError)
    /// Presses and holds the shutter (bulb), until ``closeShutter(_:)``.
    func openShutter(_ remote: RemoteContext) async throws(CameraError)
    func closeShutter(_ remote: RemoteContext) async throws(CameraError)
    func startVideo(_ remote: RemoteContext) async throws(CameraError)
    func stopVideo(_ remote: RemoteContext) async throws(CameraError)
    func setTime(_ remote: RemoteContext, _ time: WallTime) async throws(CameraError)
    func geotag(_ remote: RemoteContext, _ position: GeoPosition) async throws(CameraError)
}

/// A camera-side signal a driver recognised in a message.
public enum RemoteSignal: Hashable, Sendable {
    /// The camera is busy (or no longer).
    case busy(Bool)
    /// Recording started or stopped.
    case recording(Bool)
    /// Focus acquired or lost.
    case focus(Bool)
    /// The shutter opened (true) or is ready again (false).
    case shutterActive(Bool)
    /// A picture was taken.
    case pictureTaken
    /// Battery percentage.
    case battery(Int)
    /// The camera asks for a position (geotag request).
    case positionRequested
}

/// Joins notification packets into whole messages.
public protocol MessageAssembler: Sendable {
    /// Takes one packet; returns a message when it completes one. Throws for a packet that
    /// cannot belong to any message (the assembler resets).
    mutating func accept(_ packet: [UInt8]) throws(MalformedMessage) -> [UInt8]?
}


extension CameraRemoteDriver {
    public var brand: CameraBrand { remoteProtocol.brand }
    public var keepAliveInterval: Duration? { nil }
    public func makeAssembler(for characteristic: GATTCharacteristicID) -> (any MessageAssembler)? { nil }
    public func keepAlive(_ remote: RemoteContext) async throws(CameraError) {}
    public func events(from message: [UInt8], on characteristic: GATTCharacteristicID) -> [RemoteSignal] { [] }
    public func explain(_ error: ATTError, during operation: String) -> CameraError? { nil }
    public func focus(_ remote: RemoteContext, hold: Bool) async throws(CameraError) -> FocusResult { throw unsupported("focus") }
    public func release(_ remote: RemoteContext) async throws(CameraError) {}
    public func openShutter(_ remote: RemoteContext) async throws(CameraError) { throw unsupported("bulb") }
    public func closeShutter(_ remote: RemoteContext) async throws(CameraError) { throw unsupported("bulb") }
    public func startVideo(_ remote: RemoteContext) async throws(CameraError) { throw unsupported("video") }
    public func stopVideo(_ remote: RemoteContext) async throws(CameraError) { throw unsupported("video") }
    public func setTime(_ remote: RemoteContext, _ time: WallTime) async throws(CameraError) { throw unsupported("time sync") }
    public func geotag(_ remote: RemoteContext, _ position: GeoPosition) async throws(CameraError) { throw unsupported("geotag") }

    /// The refusal for an operation this remote lacks, naming what it offers.
    public func unsupported(_ operation: String) -> CameraError {
        RemoteOffer.refusal(operation, brand: brand, offers: capabilities)
    }
}

/// The words for what a camera's remote offers.
public enum RemoteOffer {
    /// The operations, in the CLI's words, that a remote with `capabilities` offers.
    public static func names(_ capabilities: Capabilities) -> [String] {
        let words: [(Capabilities, String)] = [
            (.shoot, "shoot"), (.focus, "focus"), (.bulb, "bulb"), (.video, "video"),
            (.setTime, "time sync"), (.geotag, "geotag"), (.readSettings, "settings"),
        ]
        return words.filter { capabilities.contains($0.0) }.map(\.1)
    }

    /// Where a camera has, in another of its modes, an operation its remote lacks: added to
    /// the refusal, so that the person learns how to get it.
    static let otherModes: [CameraBrand: [String: String]] = [
        .canon: ["geotag": "geotags need the camera's smartphone pairing (smart-device mode); in Remote mode it takes no position"],
    ]

    /// `bulb is not offered by a Nikon camera's Bluetooth remote; it offers: shoot`.
    public static func refusal(_ operation: String, brand: CameraBrand, offers capabilities: Capabilities) -> CameraError {
        let elsewhere = otherModes[brand]?[operation].map { " (\($0))" } ?? ""
        return .device(DeviceFailure(.unsupported,
            "\(operation) is not offered by a \(brand.displayName) camera's Bluetooth remote; it offers: "
                + names(capabilities).joined(separator: ", ") + elsewhere))
    }
}
