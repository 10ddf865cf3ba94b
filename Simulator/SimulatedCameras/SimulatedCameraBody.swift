public import CameraProtocols
public import GATT

/// What a simulated camera sends without being asked, or does to its link.
public enum BodySignal: Hashable, Sendable {
    /// A notification or indication on `characteristic` (delivered only to a subscribed client).
    case value(GATTCharacteristicID, [UInt8])
    /// The camera drops the link (it went to sleep, was switched off, walked out of range).
    case dropLink(reason: String)
}

/// A camera's side of its Bluetooth LE remote protocol, for demo mode and the fake bluetoothd:
/// its GATT database and advertisement, and what it does with each write and read. Each brand's
/// body keeps the behaviour the brand's cameras are known for (busy and encoding states, sleep,
/// refusals with the brand's ATT errors), so that drivers meet it before they meet hardware.
///
/// Bodies hold no I/O: a link (in memory or the fake bluetoothd) carries writes in, and the
/// body hands what it sends unasked to the `deliver` of the connection it was given.
public protocol SimulatedCameraBody: Actor {
    nonisolated var brand: CameraBrand { get }
    /// The model it says it is (in its advertisement or its answers).
    nonisolated var model: String { get }
    /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    nonisolated var address: String { get }
    /// The GATT database a client finds after service discovery.
    nonisolated var services: [GATTServiceLayout] { get }
    /// Whether characteristics may be used only over a bonded (encrypted) link.
    nonisolated var requiresBond: Bool { get }

    /// What it advertises now: it changes with pairing mode and sleep.
    func advertisement() -> AdvertisementData
    /// Whether it accepts a connection now (false while asleep or off).
    var isConnectable: Bool { get }
    /// A client connected; the body sends its notifications and link drops to `deliver` until
    /// ``disconnected()``.
    func connected(_ deliver: @escaping @Sendable (BodySignal) -> Void)
    /// The client closed the link. A body that drops the link itself (``BodySignal/dropLink(reason:)``)
    /// forgets the connection as it sends the signal, without this call.
    func disconnected()
    /// A client wrote `value`; throws the ATT error the camera answers with.
    func write(_ value: [UInt8], to characteristic: GATTCharacteristicID) throws(ATTError)
    /// A client read a characteristic.
    func read(_ characteristic: GATTCharacteristicID) throws(ATTError) -> [UInt8]

    /// Pictures taken since it was made: what a test checks against the records.
    var picturesTaken: Int { get }

    // Behaviour a test or `unleashed-sim` switches.

    /// Goes to sleep: drops the link and stops accepting connections until ``wake()``.
    func sleep()
    func wake()
    /// Opens or closes pairing mode (the camera's menu item).
    func setPairingMode(_ open: Bool)
    /// Switches the camera's remote-control menu setting; off, remote writes are refused the
    /// way the brand refuses them.
    func setRemoteEnabled(_ enabled: Bool)
}
