public import CameraProtocols

/// What a camera's link reports: values it notified or indicated, and the link's end.
public enum GATTLinkEvent: Hashable, Sendable {
    /// A notification or indication on a characteristic the client subscribed to.
    case value(GATTCharacteristicID, [UInt8])
    /// The link went down; nothing more arrives on it.
    case disconnected(reason: String)
}

/// Why a GATT operation failed.
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The link is down.
    case notConnected(String)
    /// The camera has no such characteristic (not resolved, or another mode or firmware).
    case missing(GATTCharacteristicID)
    /// The camera refused with an ATT error.
    case refused(ATTError)
    /// The camera needs a bond first.
    case notPaired
    /// No answer in time.
    case timedOut(String)
    /// Anything else, in the link's words.
    case failed(String)

    public var description: String {
        switch self {
        case .notConnected(let why): "not connected: \(why)"
        case .missing(let id): "the camera has no characteristic \(id.characteristic) in service \(id.service)"
        case .refused(let error): "the camera refused (\(error))"
        case .notPaired: "the camera is not paired with this computer"
        case .timedOut(let what): "no answer to \(what) in time"
        case .failed(let why): why
        }
    }
}

/// A connected camera's GATT client, with its services resolved: BlueZ's in production, an
/// in-memory one against a simulated body in demo mode and tests. Brand drivers use only this.
public protocol GATTLink: Sendable {
    /// Whether the camera offers `characteristic`.
    func offers(_ characteristic: GATTCharacteristicID) async -> Bool
    /// Writes a value; with `withResponse`, waits for the camera's acknowledgement (ATT Write
    /// Request), which is how a refusal (an ATT error) is learnt.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError)
    /// Reads a value.
    func read(_ characteristic: GATTCharacteristicID) async throws(GATTError) -> [UInt8]
    /// Turns on notifications or indications (whichever it offers); values then arrive on ``events``.
    func subscribe(_ characteristic: GATTCharacteristicID) async throws(GATTError)
    /// Values and the link's end. One consumer.
    var events: AsyncStream<GATTLinkEvent> { get }
    /// The ATT MTU: values written are at most `mtu - 3` bytes.
    var mtu: Int { get }
    /// Takes the link down; idempotent.
    func close() async
}

/// Finds one camera and links to it, for each connection attempt.
public protocol GATTLinkProvider: Sendable {
    /// Returns when the camera is known to be there (bonded, or seen advertising) within
    /// `timeout`; throws ``GATTError/notConnected(_:)`` naming what was looked for otherwise.
    func discover(timeout: Duration) async throws(GATTError)
    /// Connects and resolves services.
    func connect() async throws(GATTError) -> any GATTLink
}
