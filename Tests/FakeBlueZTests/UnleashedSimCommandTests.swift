import DBus
import FakeBlueZ
import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// The built `unleashed-sim` binary, run as a test script or a developer would.
@Suite("unleashed-sim bluez, the executable", .timeLimit(.minutes(1)))
struct UnleashedSimCommandTests {
    @Test("prints ready, serves org.bluez and the control interface, and exits 0 on SIGTERM")
    func servesAndStops() async throws {
        let bus = try await PrivateBus()
        let simulator = try SimulatorProcess(["bluez", "--bus", bus.address, "--modules", "1", "--pairing", "passkey", "--seed", "7"])
        try await simulator.waitForOutput("ready\n")
        let client = try await DBusConnection.open(.address(bus.address))
        let objects = try await client.call(FakeBlueZ.busName, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                                            member: "GetManagedObjects").first?.dictionaryValue ?? [:]
        #expect(objects.keys.sorted() == ["/org/bluez", "/org/bluez/hci0"])
        let modules = try await client.call(FakeBlueZ.controlName, path: FakeBlueZ.controlPath, interface: FakeBlueZ.controlInterface,
                                            member: "Modules")
        #expect(modules.first == .strings(["F0:5E:D0:00:00:01"]))
        let passkey = try await client.call(FakeBlueZ.controlName, path: FakeBlueZ.controlPath, interface: FakeBlueZ.controlInterface,
                                            member: "Passkey", [.string("F0:5E:D0:00:00:01")]).first?.intValue ?? -1
        #expect(simulator.errors.contains("passkey \(SimulatorProcess.sixDigits(passkey))"))
        client.close()
        #expect(await simulator.terminate() == 0)
        #expect(simulator.output == "ready\n")
    }

    @Test("a bad fault plan is refused with a message and status 64")
    func badFaults() async throws {
        let simulator = try SimulatorProcess(["bluez", "--bus", "unix:path=/nonexistent", "--faults", "linkloss=soon"])
        #expect(await simulator.exitStatus() == 64)
        #expect(simulator.errors.contains("linkloss=soon"))
    }

    @Test("a second simulator on the same bus says org.bluez is taken and fails")
    func nameTaken() async throws {
        let bus = try await PrivateBus()
        let first = try SimulatorProcess(["bluez", "--bus", bus.address])
        try await first.waitForOutput("ready\n")
        let second = try SimulatorProcess(["bluez", "--bus", bus.address])
        #expect(await second.exitStatus() != 0)
        #expect(second.errors.contains("already owned"))
        #expect(second.output.isEmpty)
        #expect(await first.terminate() == 0)
    }

    @Test("exits with an error when the bus goes away")
    func busGoesAway() async throws {
        let bus = try await PrivateBus()
        let simulator = try SimulatorProcess(["bluez", "--bus", bus.address])
        try await simulator.waitForOutput("ready\n")
        bus.stop()
        #expect(await simulator.exitStatus() != 0)
        #expect(simulator.errors.contains("the bus went away"))
    }
}
