import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// `unleashed daemon` on a private bus with the fake bluetoothd, configured with the fake's
/// modules, and the environment that points the CLI at it.
final class DaemonRig: Sendable {
    let bluetooth: SimulatedBluetooth
    /// Short, for the 107 bytes a socket path may have.
    let directory: URL
    let socket: String
    let configFile: URL
    let journal: String
    let moduleNames: [String]
    private let daemon = Mutex<Process?>(nil)
    private let log: URL

    /// Names the first `modules` of the fake's modules a, b, c ... in the configuration.
    /// - Parameter configured: how many of the modules the configuration lists (all by default).
    init(modules: Int = 3, configured: Int? = nil, extraConfiguration: String = "", simulatorArguments: [String] = []) async throws {
        bluetooth = try await SimulatedBluetooth(["--modules", "\(modules)"] + simulatorArguments)
        directory = URL(fileURLWithPath: "/tmp/ud-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("run/control.sock").path
        journal = directory.appendingPathComponent("journal.sqlite").path
        configFile = directory.appendingPathComponent("unleashed.toml")
        log = directory.appendingPathComponent("daemon.log")
        moduleNames = (0..<(configured ?? modules)).map { String(UnicodeScalar(UInt8(97 + $0))) }
        var text = """
            [daemon]
            socket = "\(socket)"
            journal = "\(journal)"

            [reconnect]
            initial_delay = "200ms"
            max_delay = "2s"

            """
        for (index, name) in moduleNames.enumerated() {
            text += "\n[[modules]]\nname = \"\(name)\"\naddress = \"F0:5E:D0:00:00:\(String(format: "%02X", index + 1))\"\n"
        }
        try (text + "\n" + extraConfiguration).write(to: configFile, atomically: true, encoding: .utf8)
    }

    deinit {
        if let process = daemon.withLock({ $0 }), process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment of the daemon and of CLI commands: the private bus, state and journal
    /// here, and the daemon's socket.
    var environment: [String: String] {
        var environment = bluetooth.environment
        environment["UNLEASHED_SOCKET"] = socket
        environment["UNLEASHED_JOURNAL"] = journal
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_RUNTIME_DIR"] = directory.path
        return environment
    }

    /// What the daemon logged so far, for failure messages.
    var daemonLog: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Starts the daemon and waits until it answers with every module connected.
    /// - Parameter extraEnvironment: added to ``environment`` for the daemon alone (`NOTIFY_SOCKET`).
    func start(expectingReady ready: Int? = nil, timeout: Duration = .seconds(60), extraEnvironment: [String: String] = [:]) async throws {
        let process = Process()
        process.executableURL = Built.unleashed
        process.arguments = ["daemon", "--config", configFile.path]
        process.environment = environment.merging(extraEnvironment) { _, extra in extra }
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try ChildProcesses.run(process)
        daemon.withLock { $0 = process }
        let wanted = ready ?? moduleNames.count
        var ready = false
        _ = await eventually(every: .milliseconds(100), giveUpAfter: timeout) {
            if let cameras = try? await status()["cameras"] as? [[String: Any]],
               cameras.filter({ ($0["status"] as? [String: Any])?["connection"] as? String == "ready" }).count >= wanted {
                ready = true
            }
            return ready || !process.isRunning
        }
        guard ready else {
            throw FixtureError("the daemon did not get \(wanted) modules ready: \(daemonLog)\n\(bluetooth.simLog)")
        }
    }

    /// Sends `signal` to the daemon and waits for it to exit; returns its exit status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) async throws -> Int32 {
        guard let process = daemon.withLock({ $0 }) else { return -1 }
        kill(process.processIdentifier, signal)
        guard await eventually(every: .milliseconds(50), { !process.isRunning }) else {
            throw FixtureError("the daemon did not exit after signal \(signal)")
        }
        daemon.withLock { $0 = nil }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// The daemon's process id while it runs.
    var pid: Int32? { daemon.withLock { $0?.processIdentifier } }

    /// `GET /v1/status` as JSON.
    func status() async throws -> [String: Any] {
        let answer = try await Curl.request(socket: socket, path: "/v1/status")
        guard answer.status == 200, let json = answer.json else { throw FixtureError("status answered \(answer.status): \(answer.body)") }
        return json
    }

    /// A request with curl; `arguments` go before the URL.
    func request(_ path: String, _ arguments: String...) async throws -> Curl.Answer {
        try await Curl.request(socket: socket, path: path, arguments: arguments)
    }

    /// Runs the built `unleashed` as a client of this daemon.
    func unleashed(_ arguments: String...) async throws -> CommandResult {
        try await runProgram(Built.unleashed, arguments, environment: environment)
    }
}
