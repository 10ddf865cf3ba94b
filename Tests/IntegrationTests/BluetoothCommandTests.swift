import DBus
import Foundation
import Testing
import UnleashedTestSupport

/// The built `unleashed` command against the real D-Bus daemon and the project's fake bluetoothd
/// (`unleashed-sim bluez`), each test on a private bus of its own, found through
/// `DBUS_SYSTEM_BUS_ADDRESS` as on a real system.
@Suite("unleashed over BlueZ (private bus, unleashed-sim bluez)", .timeLimit(.minutes(3)))
struct BluetoothCommandTests {
    @Test("scan finds the two modules, with their names and advertisement")
    func scanFindsTwo() async throws {
        let sim = try await SimulatedBluetooth(["--modules", "2"])
        let result = try await sim.unleashed("scan", "--timeout", "2s", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let found = result.jsonLines
        #expect(found.compactMap { $0["address"] as? String }.sorted() == [SimulatedBluetooth.first, SimulatedBluetooth.second])
        #expect(found.compactMap { $0["name"] as? String }.sorted() == ["Unleashed 0001", "Unleashed 0002"])
        #expect(found.allSatisfy { $0["model"] as? String == "simulated" && $0["rssi"] is Int })
        let adapters = try await sim.unleashed("adapters")
        #expect(adapters.status == 0)
        #expect(adapters.stdout.contains("hci0"))
    }

    @Test("connect pairs, handshakes and remembers the module; settings, a shot and a 20-frame time-lapse go through D-Bus")
    func connectAndDrive() async throws {
        let sim = try await SimulatedBluetooth(["--modules", "2"])
        let connect = try await sim.unleashed("connect", SimulatedBluetooth.second, "--json")
        #expect(connect.status == 0, "\(connect.stderr)\n\(sim.simLog)")
        let info = try #require(connect.json)
        #expect(info["address"] as? String == SimulatedBluetooth.second)
        #expect(info["protocolVersion"] as? Int == 1)
        #expect(info["camera"] is String)

        // Later commands use the remembered module.
        let set = try await sim.unleashed("settings", "set", "iso", "800")
        #expect(set.status == 0, "\(set.stderr)")
        let get = try await sim.unleashed("settings", "get", "iso")
        #expect(get.stdout == "iso 800\n")
        let shot = try await sim.unleashed("--json", "shoot")
        #expect(shot.status == 0, "\(shot.stderr)")
        #expect(shot.json?["counter"] is Int)

        let run = try await sim.unleashed("timelapse", "--interval", "500ms", "--frames", "20", "--json")
        #expect(run.status == 0, "\(run.stderr)\(run.stdout)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 20)
        #expect(frames.allSatisfy { $0["outcome"] as? String == "taken" }, "\(frames)")
        let counters = frames.compactMap { $0["shotCounter"] as? Int }
        #expect(counters == Array(counters[0]..<(counters[0] + 20)), "one shot per frame, none twice")
        let stats = try await sim.stats()
        #expect((stats["writes"] ?? 0) > 20, "every frame's request reached the module through the fake: \(stats)")
    }

    @Test("a link loss during a run: the run goes on after the module is back, and the gap is recorded")
    func linkLossDuringRun() async throws {
        let sim = try await SimulatedBluetooth()
        #expect(try await sim.unleashed("connect", SimulatedBluetooth.first).status == 0)
        async let running = sim.unleashed("timelapse", "--interval", "500ms", "--frames", "30", "--json")
        // A few frames in (hello and requests), whenever the command got going.
        try await sim.waitForWrites(8)
        try await sim.simulator("LoseLink", [.string(SimulatedBluetooth.first), .uint32(3000)])
        let run = try await running
        #expect(run.status == 0, "\(run.stderr)\n\(sim.simLog)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 30)
        let outcomes = frames.compactMap { $0["outcome"] as? String }
        #expect(outcomes.contains { $0 != "taken" }, "the outage cost frames: \(outcomes)")
        #expect(takenAgain(after: outcomes), "shooting again after the reconnect: \(outcomes)")
        #expect((try await sim.stats()["connectCalls"] ?? 0) >= 3, "connect, then reconnect after the loss")
    }

    @Test("bluetoothd restarts during a run: the client waits for it, reconnects, and the run finishes")
    func bluetoothdRestart() async throws {
        let sim = try await SimulatedBluetooth()
        #expect(try await sim.unleashed("connect", SimulatedBluetooth.first).status == 0)
        async let running = sim.unleashed("timelapse", "--interval", "500ms", "--frames", "30", "--json")
        // A few frames in (hello and requests), whenever the command got going.
        try await sim.waitForWrites(8)
        try await sim.simulator("RestartBluetoothd", [.uint32(1500)])
        let run = try await running
        #expect(run.status == 0, "\(run.stderr)\n\(sim.simLog)")
        let outcomes = run.jsonLines.compactMap { $0["outcome"] as? String }
        #expect(outcomes.count == 30)
        #expect(takenAgain(after: outcomes), "shooting again once bluetoothd is back: \(outcomes)")
    }

    /// Whether frames were taken again after the first one that was not: the run came back
    /// from the outage. (Not "the last frames": a loaded test machine can stall a slot or two
    /// anywhere in the run.)
    private func takenAgain(after outcomes: [String]) -> Bool {
        guard let gap = outcomes.firstIndex(where: { $0 != "taken" }) else { return false }
        return outcomes[gap...].count { $0 == "taken" } >= 3
    }

    @Test("two aborted connection attempts are retried and the third connects")
    func connectAbortedTwice() async throws {
        let sim = try await SimulatedBluetooth(["--faults", "connect-abort=2"])
        let connect = try await sim.unleashed("connect", SimulatedBluetooth.first)
        #expect(connect.status == 0, "\(connect.stderr)\n\(sim.simLog)")
        let stats = try await sim.stats()
        #expect(stats["connectAborts"] == 2, "\(stats)")
        #expect((stats["connectCalls"] ?? 0) >= 3, "\(stats)")
    }

    /// Refusals (a wrong passkey, no one to confirm one) and the errors before pairing are
    /// ModuleOperationsTests' library tests; these launches check the commands' printing.
    @Test("passkey entry pairs; then disconnect and forget the paired module")
    func pairingPasskey() async throws {
        let sim = try await SimulatedBluetooth(["--pairing", "passkey"])
        let shown = try #require(try await sim.simulator("Passkey", [.string(SimulatedBluetooth.first)]).first?.intValue)
        let right = try await sim.unleashed("--json", "pair", SimulatedBluetooth.first, "--passkey", "\(shown)")
        #expect(right.status == 0, "\(right.stderr)\n\(sim.simLog)")
        #expect(right.json?["paired"] as? Bool == true)
        let disconnect = try await sim.unleashed("disconnect", SimulatedBluetooth.first)
        #expect(disconnect.stdout == "Unleashed 0001 was not connected.\n", "\(disconnect.stderr)")
        let forget = try await sim.unleashed("--json", "forget", SimulatedBluetooth.first)
        #expect(forget.status == 0, "\(forget.stderr)")
        #expect(forget.json?["removed"] as? Bool == true)
    }

    @Test("a bus policy that keeps the user from bluetoothd: the message says to join the bluetooth group")
    func permissionDenied() async throws {
        let sim = try await SimulatedBluetooth(busRules: #"<deny send_destination="org.bluez" send_interface="org.freedesktop.DBus.ObjectManager"/>"#)
        let result = try await sim.unleashed("--json", "adapters")
        #expect(result.status == 77)
        let error = try #require(result.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "permissionDenied")
        #expect((error["message"] as? String)?.contains("bluetooth group") == true, "\(error)")
    }

    @Test("no bluetoothd on the bus, and no bus at all")
    func missingBusAndDaemon() async throws {
        let bus = try await PrivateBus()
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let noDaemon = try await runProgram(Built.unleashed, ["adapters"], environment: environment)
        #expect(noDaemon.status == 69)
        #expect(noDaemon.stderr.contains("org.bluez is not on the system bus: is bluetoothd running?"), "\(noDaemon.stderr)")

        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/system_bus_socket"
        let noBus = try await runProgram(Built.unleashed, ["--json", "status", "--module", SimulatedBluetooth.first], environment: environment)
        #expect(noBus.status == 69)
        let error = try #require(noBus.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "noSystemBus")
        #expect((error["message"] as? String)?.contains("/nonexistent/system_bus_socket") == true)
    }
}
