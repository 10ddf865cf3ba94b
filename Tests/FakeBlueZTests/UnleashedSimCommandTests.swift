import DBus
import FakeBlueZ
import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// The built `unleashed-sim` binary, run as a test script or a developer would.
@Suite("unleashed-sim bluez, the executable", .timeLimit(.minutes(1)))
struct UnleashedSimCommandTests {
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["UNLEASHED_SIM_BIN"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed-sim")
    }()

    @Test("prints ready, serves org.bluez and the control interface, and exits 0 on SIGTERM")
    func servesAndStops() async throws {
        let bus = try PrivateBus()
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
        let bus = try PrivateBus()
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
        let bus = try PrivateBus()
        let simulator = try SimulatorProcess(["bluez", "--bus", bus.address])
        try await simulator.waitForOutput("ready\n")
        bus.stop()
        #expect(await simulator.exitStatus() != 0)
        #expect(simulator.errors.contains("the bus went away"))
    }
}

/// One run of `unleashed-sim`, its output collected as it comes.
final class SimulatorProcess: Sendable {
    private let process: Process
    private let shared = Shared()

    /// What the pipe and termination handlers fill in.
    private final class Shared: Sendable {
        let collected = Mutex<(output: String, errors: String)>(("", ""))
        let exit = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))
    }

    init(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: UnleashedSimCommandTests.binary.path) else {
            throw FixtureError("\(UnleashedSimCommandTests.binary.path) is missing: run swift build first")
        }
        let process = Process()
        process.executableURL = UnleashedSimCommandTests.binary
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        self.process = process
        output.fileHandleForReading.readabilityHandler = { [shared] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            shared.collected.withLock { $0.output += text }
        }
        errors.fileHandleForReading.readabilityHandler = { [shared] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            shared.collected.withLock { $0.errors += text }
        }
        process.terminationHandler = { [shared] process in
            let waiters = shared.exit.withLock { state in
                state.status = process.terminationStatus
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: process.terminationStatus) }
        }
        try process.run()
    }

    deinit {
        if process.isRunning { process.interrupt() }
    }

    var output: String { shared.collected.withLock { $0.output } }
    var errors: String { shared.collected.withLock { $0.errors } }

    /// Waits until stdout has printed `text`.
    func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !output.contains(text) {
            guard ContinuousClock.now < deadline, process.isRunning || output.contains(text) else {
                throw FixtureError("unleashed-sim did not print \(text.debugDescription); stderr: \(errors)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for the process to end; its exit status. Output still in the pipes is read first.
    func exitStatus() async -> Int32 {
        let status = await withCheckedContinuation { continuation in
            let known = shared.exit.withLock { state in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status
            }
            if let known { continuation.resume(returning: known) }
        }
        try? await Task.sleep(for: .milliseconds(50))
        return status
    }

    /// Sends SIGTERM and waits for the process to end.
    func terminate() async -> Int32 {
        process.terminate()
        return await exitStatus()
    }

    static func sixDigits(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
