public import GATT

/// What a device's link reports: values it notified or indicated, writes refused after the fact,
/// and the link's end.
public enum GATTLinkEvent: Hashable, Sendable {
    /// A notification or indication on a characteristic the client subscribed to.
    case value(GATTCharacteristicID, [UInt8])
    /// A write that ``GATTLink/send(_:to:)`` had already handed on was refused afterwards: the
    /// device did not get it. Only links that learn such a write's outcome later report it.
    case writeFailed(GATTCharacteristicID, GATTError)
    /// The link went down; nothing more arrives on it.
    case disconnected(reason: String)
}

/// Why a GATT operation failed.
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The link is down.
    case notConnected(String)
    /// The device has no such characteristic (not resolved, or another mode or firmware).
    case missing(GATTCharacteristicID)
    /// The device refused with an ATT error.
    case refused(ATTError)
    /// The device needs a bond first.
    case notPaired
    /// No answer in time.
    case timedOut(String)
    /// Anything else, in the link's words.
    case failed(String)

    /// Says "the device": the same link carries a module's protocol and every camera brand's,
    /// and the connection above it names which one it is.
    public var description: String {
        switch self {
        case .notConnected(let why): "not connected: \(why)"
        case .missing(let id): "the device has no characteristic \(id.characteristic) in service \(id.service)"
        case .refused(let error): "the device refused (\(error))"
        case .notPaired: "the device is not paired with this computer"
        case .timedOut(let what): "no answer to \(what) in time"
        case .failed(let why): why
        }
    }
}

/// A connected device's GATT client, with its services resolved: BlueZ's in production, an
/// in-memory one against a simulated module or camera in demo mode and tests. Every protocol
/// over Bluetooth (the module's, each camera brand's) goes through this one link.
public protocol GATTLink: Sendable {
    /// Whether the device offers `characteristic`.
    func offers(_ characteristic: GATTCharacteristicID) async -> Bool
    /// Writes a value; with `withResponse`, waits for the device's acknowledgement (ATT Write
    /// Request), which is how a refusal (an ATT error) is learnt.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError)
    /// Writes values without response (ATT Write Commands), in order, with no value of another
    /// call between them: the packets of one message. It may return once they are on their way
    /// and report a refusal later, as ``GATTLinkEvent/writeFailed(_:_:)``. It runs on the caller's
    /// executor, so that a stream of packets costs no hand-over to another thread.
    nonisolated(nonsending) func send(_ values: [[UInt8]], to characteristic: GATTCharacteristicID) async throws(GATTError)
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

/// A link that reads notifications on a thread of its own and can hand one characteristic's
/// values straight to a receiver there, with no stream and no task between: for a session that
/// runs on that same thread.
public protocol DirectGATTLink: GATTLink {
    /// The thread the link reads its notifications on; nil when it reads them elsewhere.
    var readingThread: ExecutorThread? { get }
    /// From now on values of `characteristic` go to `receive`, called on ``readingThread`` as
    /// each is read, instead of to ``GATTLink/events``; everything else still comes on
    /// ``GATTLink/events``.
    func deliverValues(of characteristic: GATTCharacteristicID, to receive: @escaping @Sendable ([UInt8]) -> Void)
}

/// Finds one device (a module, a camera) and links to it, for each connection attempt. BlueZ
/// implements it for real devices, the simulators for demo mode and tests; a connection calls
/// these in order and decides what to do when one fails.
public protocol GATTLinkProvider: Sendable {
    /// Returns when the device is known to be there (bonded, or seen advertising) within
    /// `timeout`; throws ``GATTError/notConnected(_:)`` naming what was looked for otherwise.
    func discover(timeout: Duration) async throws(GATTError)
    /// Connects and resolves services.
    func connect() async throws(GATTError) -> any GATTLink
    /// The thread the connection, its sessions and its device run on, for links whose
    /// notifications arrive on a descriptor that thread polls: the notification and the request
    /// waiting for it are then one thread's work. Nil (the default) runs them on Swift's shared pool.
    var executor: ExecutorThread? { get }
}

extension GATTLinkProvider {
    public var executor: ExecutorThread? { nil }
}
