public import DBus
public import FakeBlueZ

/// The project's fake bluetoothd in the test's own process, on a private bus of its own: the one
/// way tests and benchmarks start it in-process, where they read its counters and log directly.
/// (``SimulatedBluetooth`` runs the same fake as the `unleashed-sim bluez` program.)
public struct InProcessBlueZ: Sendable {
    public let bus: PrivateBus
    public let fake: FakeBlueZ

    /// Starts a bus and the fake on it, configured by `configuration` (short timings by default).
    public static func start(_ configuration: FakeBlueZ.Configuration = FakeBlueZ.Configuration(timing: .quick)) async throws -> InProcessBlueZ {
        let bus = try await PrivateBus()
        let fake = FakeBlueZ(configuration: configuration)
        try await fake.start(bus: .address(bus.address))
        return InProcessBlueZ(bus: bus, fake: fake)
    }

    /// The bus, as a D-Bus client names it.
    public var address: DBusConnection.Bus { .address(bus.address) }
}
