public import Foundation

/// Why a test's own process (a bus, a fake bluetoothd) could not be started.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A private `dbus-daemon` that a test starts for itself and stops when it is released, so that
/// D-Bus tests never touch the machine's own buses and run in parallel without meeting.
public final class PrivateBus: Sendable {
    /// The address to hand to clients (`DBUS_SYSTEM_BUS_ADDRESS`).
    public let address: String
    /// The daemon's process id.
    public let pid: Int32
    private let directory: URL

    /// Starts a bus that lets every local client own any name, as a test bus should.
    ///
    /// - Parameter extraRules: more policy rules, e.g. a `<deny .../>` to test a locked-down bus.
    public init(extraRules: String = "") async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus.sock").path
        let config = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                \(extraRules)
              </policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        let (daemon, line) = try await launchReadingFirstLine(Self.dbusDaemon, ["--config-file=\(config.path)", "--nofork", "--print-address=1"])
        guard line.hasPrefix("unix:") else {
            daemon.terminate()
            throw FixtureError("dbus-daemon did not start; scripts/setup installs the dbus package")
        }
        address = line
        pid = daemon.processIdentifier
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the daemon, as when the system bus goes away.
    public func stop() {
        kill(pid, SIGKILL)
    }

    static var dbusDaemon: String {
        ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "dbus-daemon"
    }
}

/// Starts a program and returns it with the first line it prints on standard output (an address,
/// a "ready"). Programs that keep standard output open are read up to that line, not to EOF. The
/// reading waits on a thread of its own: a program slow to start on a loaded machine must not
/// hold one of the few threads that every test's async work shares.
public func launchReadingFirstLine(_ path: String, _ arguments: [String]) async throws -> (Process, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try ChildProcesses.run(process)
    let reading = output.fileHandleForReading
    let line = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            var printed = Data()
            while !printed.contains(UInt8(ascii: "\n")) {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                printed.append(chunk)
            }
            continuation.resume(returning: String(decoding: printed, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "")
        }
    }
    return (process, line)
}
