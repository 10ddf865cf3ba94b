import CameraProtocols
public import GATT

/// What every simulated body keeps whatever its brand: the connection it talks to, and the
/// switches a test or `unleashed-sim` flips (asleep, pairing mode, the remote menu setting).
public struct BodyBasics: Sendable {
    /// Where the current connection takes what the body sends; nil while no client is linked.
    public private(set) var deliver: (@Sendable (BodySignal) -> Void)?
    public var asleep = false
    public var pairingOpen: Bool
    public var remoteEnabled = true
    public var picturesTaken = 0
    /// The latest writes the camera took or refused, oldest first (the last ``writeLogLimit``).
    public private(set) var writes: [(characteristic: GATTCharacteristicID, value: [UInt8])] = []
    /// Every write since the body was made, whatever ``writes`` still holds.
    public private(set) var writeCount = 0
    /// How many writes ``writes`` keeps, so that a long demo does not grow it for ever.
    public static let writeLogLimit = 256

    public init(pairingOpen: Bool = true) {
        self.pairingOpen = pairingOpen
    }

    public var isLinked: Bool { deliver != nil }

    /// Notes a write a client made, taken or refused.
    public mutating func record(_ value: [UInt8], to characteristic: GATTCharacteristicID) {
        writeCount += 1
        writes.append((characteristic, value))
        if writes.count > Self.writeLogLimit { writes.removeFirst(writes.count - Self.writeLogLimit) }
    }

    public mutating func connected(_ deliver: @escaping @Sendable (BodySignal) -> Void) {
        self.deliver = deliver
    }

    public mutating func disconnected() {
        deliver = nil
    }

    /// Notifies (or indicates) `value` on `characteristic` to the linked client, if any.
    public func send(_ value: [UInt8], on characteristic: GATTCharacteristicID) {
        deliver?(.value(characteristic, value))
    }

    /// Drops the link from the camera's side and forgets the connection.
    public mutating func dropLink(_ reason: String) {
        deliver?(.dropLink(reason: reason))
        deliver = nil
    }

    /// Falls asleep: the link drops and connections are refused until ``wake()``.
    public mutating func sleep() {
        asleep = true
        dropLink("the camera went to sleep")
    }

    public mutating func wake() {
        asleep = false
    }
}
