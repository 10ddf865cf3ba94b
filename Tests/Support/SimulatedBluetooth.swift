public import DBus
public import Foundation

/// A private system bus with the project's fake bluetoothd (`unleashed-sim bluez`, a program of
/// its own) on it, and the environment that points the `unleashed` command at it: the one way
/// tests start the fake as a program. (``InProcessBlueZ`` runs the same fake in the test's
/// process.)
public final class SimulatedBluetooth: Sendable {
    public let bus: PrivateBus
    public let control: DBusConnection
    /// The state and journal of commands run against it, and its log.
    public let stateDirectory: URL
    private let process: Process
    private let log: URL

    public static let first = "F0:5E:D0:00:00:01"
    public static let second = "F0:5E:D0:00:00:02"

    /// Starts a bus and the fake; `arguments` go to `unleashed-sim bluez` (`--modules 2` etc.).
    public init(_ arguments: [String] = [], busRules: String = "") async throws {
        bus = try await PrivateBus(extraRules: busRules)
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-it-\(UUID())")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        log = stateDirectory.appendingPathComponent("sim.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.executableURL = Built.sim
        process.arguments = ["bluez", "--bus", bus.address] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try ChildProcesses.run(process)
        control = try await DBusConnection.open(.address(bus.address))
        var named = false
        _ = try await eventually(every: .milliseconds(50)) {
            let simulator = try await control.nameOwner("org.unleashed.Simulator")
            let bluez = try await control.nameOwner("org.bluez")
            named = simulator != nil && bluez != nil
            return named || !process.isRunning
        }
        guard named else { throw FixtureError("unleashed-sim bluez did not start: \(simLog)") }
    }

    deinit {
        control.close()
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    /// Where `unleashed connect`, run with ``environment``, remembers its module.
    public var rememberedFile: URL { stateDirectory.appendingPathComponent("unleashed/module.json") }

    /// What the fake logged so far, for failure messages.
    public var simLog: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The environment of an `unleashed` command run against this bus, with its own state and journal.
    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["XDG_STATE_HOME"] = stateDirectory.path
        environment["UNLEASHED_JOURNAL"] = stateDirectory.appendingPathComponent("journal.sqlite").path
        environment["UNLEASHED_DEMO"] = nil
        return environment
    }

    /// Runs `unleashed` against the fake.
    public func unleashed(_ arguments: String...) async throws -> CommandResult {
        try await runProgram(Built.unleashed, arguments, environment: environment)
    }

    /// Calls the fake's control interface (`org.unleashed.Simulator1`).
    @discardableResult
    public func simulator(_ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await control.call("org.unleashed.Simulator", path: "/org/unleashed/Simulator", interface: "org.unleashed.Simulator1",
                               member: member, body)
    }

    /// Waits until `count` more packets have reached the modules than when called (a run is
    /// under way), however slowly a loaded machine starts the command.
    public func waitForWrites(_ count: Int, timeout: Duration = .seconds(60)) async throws {
        let start = try await stats()["writes"] ?? 0
        do {
            // The counters are the simulator process's, read over the bus: nothing announces a change.
            try await poll("\(count) packets to the modules", timeout: timeout, every: .milliseconds(50)) {
                try await (stats()["writes"] ?? 0) >= start + count
            }
        } catch let error as FixtureError {
            throw FixtureError("\(error.description): \(simLog)")
        }
    }

    /// The fake's counters.
    public func stats() async throws -> [String: Int] {
        (try await simulator("Stats").first?.dictionaryValue ?? [:]).compactMapValues(\.intValue)
    }
}
