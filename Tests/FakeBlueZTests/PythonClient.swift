import Foundation
import UnleashedTestSupport

/// A client written by others (bleak, GoPro's SDK) run as a Python script against the fake
/// bluetoothd: the bus is its system bus, and what it printed is read once it has exited.
struct PythonClient {
    let status: Int32
    let output: String
    let errors: String

    /// Runs `python` (a path, or a name looked up on PATH, where scripts/setup installs bleak) on
    /// `script` with `arguments` until it exits (at most `limit`), with `DBUS_SYSTEM_BUS_ADDRESS`
    /// set to `bus`.
    static func run(python: String = "python3", script: String, _ arguments: [String], bus: String,
                    within limit: Duration) async throws -> PythonClient {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("python-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("stdout")
        let errors = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try ChildProcesses.run(process)
        await process.exited(within: limit)
        return PythonClient(status: process.terminationStatus, output: try String(contentsOf: output, encoding: .utf8),
                            errors: (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
    }
}
