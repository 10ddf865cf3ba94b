import CameraProtocols
public import GATT

/// A body whose connection, sleep and menu switches are its ``BodyBasics``: the lifecycle
/// members of ``SimulatedCameraBody`` come from here, so that a brand's body writes only what
/// its brand does (its GATT writes and reads, and what it forgets when a link ends).
public protocol BasicsBackedBody: SimulatedCameraBody {
    var basics: BodyBasics { get set }
    /// A client linked: what the camera knows of a connection starts afresh.
    func linkStarted()
    /// The link went away (closed, dropped, or the camera slept): buttons come up, and what
    /// the camera knew of that connection is forgotten.
    func linkEnded()
}

extension BasicsBackedBody {
    /// Most bodies keep nothing per connection.
    public func linkStarted() {}

    public var picturesTaken: Int { basics.picturesTaken }
    /// Every write since the body was made.
    public var writeCount: Int { basics.writeCount }
    /// The latest writes, oldest first (``BodyBasics/writeLogLimit``).
    public var writes: [(characteristic: GATTCharacteristicID, value: [UInt8])] { basics.writes }
    public var isConnectable: Bool { !basics.asleep }
    /// Whether a client is linked now.
    public var isLinked: Bool { basics.isLinked }

    public func connected(_ deliver: @escaping @Sendable (BodySignal) -> Void) {
        basics.connected(deliver)
        linkStarted()
    }

    public func disconnected() {
        basics.disconnected()
        linkEnded()
    }

    /// Drops the link as the camera does on its own (an invalid command, a power switch).
    public func dropLink(_ reason: String) {
        basics.dropLink(reason)
        linkEnded()
    }

    public func sleep() {
        basics.sleep()
        linkEnded()
    }

    public func wake() { basics.wake() }
    public func setPairingMode(_ open: Bool) { basics.pairingOpen = open }
    public func setRemoteEnabled(_ enabled: Bool) { basics.remoteEnabled = enabled }
}
