import DaemonClient
import FakeBlueZ
import Foundation
import UnleashedSimulator
import UnleashedTestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-daemon-bench: \(message)\n".utf8))
    exit(1)
}

/// What every measurement of this benchmark starts from: a private dbus-daemon, the fake
/// bluetoothd with one module, and a configuration for the release `unleashed daemon` that holds
/// that module, in a directory of its own. The benchmark and the soak both start their daemons
/// from here, so that both measure the same daemon.
@MainActor
final class BenchDaemon {
    let unleashed: URL
    let bus: PrivateBus
    let fake: FakeBlueZ
    /// The module's address.
    let address: String
    let directory: URL
    let socket: String
    let configFile: URL
    let environment: [String: String]

    /// Starts the bus and the fake; `unleashed` is the built binary. The module's camera never
    /// runs out of battery or card (the simulated one is flat after about 1,000 shots and full
    /// after about 2,000): the default run with `--compare` takes over 1,000 pictures, and a
    /// soak runs for hours.
    init(unleashed: URL) async throws {
        guard FileManager.default.isExecutableFile(atPath: unleashed.path) else {
            fail("no \(unleashed.path): build it with swift build -c release --static-swift-stdlib --product unleashed")
        }
        self.unleashed = unleashed
        var fakeConfiguration = FakeBlueZ.Configuration()
        fakeConfiguration.modules = 1
        fakeConfiguration.profile.batteryDrain = .init(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
        fakeConfiguration.profile.cardCapacity = 1_000_000
        let bluez = try await InProcessBlueZ.start(fakeConfiguration)
        (bus, fake) = (bluez.bus, bluez.fake)
        address = await fake.moduleAddresses[0]

        directory = URL(fileURLWithPath: "/tmp/ud-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("run/control.sock").path
        configFile = directory.appendingPathComponent("unleashed.toml")
        try """
            [daemon]
            socket = "\(socket)"
            journal = "\(directory.appendingPathComponent("journal.sqlite").path)"

            [[modules]]
            name = "a"
            address = "\(address)"
            """.write(to: configFile, atomically: true, encoding: .utf8)

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["UNLEASHED_SOCKET"] = socket
        environment["UNLEASHED_DEMO"] = nil
        self.environment = environment
    }

    /// Removes the directory; the bus and the fake end with the process.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `unleashed` (or another build of it, `binary`) to its end; its output is discarded,
    /// its errors kept in ``lastErrors`` for a failure's message.
    func run(_ arguments: [String], binary: URL? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = binary ?? unleashed
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        guard FileManager.default.createFile(atPath: errorsFile.path, contents: nil) else {
            fail("cannot create \(errorsFile.path)")
        }
        let errors = try FileHandle(forWritingTo: errorsFile)
        defer { try? errors.close() }
        process.standardError = errors
        try ChildProcesses.run(process)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs `unleashed` (or `binary`) as ``run(_:binary:)`` does, but spawned straight, without
    /// the wrapper that ties it to this process, and returns when it was spawned: the start of a
    /// command that is itself being timed (``ChildProcesses/runUntied(_:_:environment:errors:)``).
    func runTimed(_ arguments: [String], binary: URL? = nil) throws -> (status: Int32, spawned: UInt64) {
        try ChildProcesses.runUntied((binary ?? unleashed).path, arguments, environment: environment, errors: errorsFile.path)
    }

    /// What the last command run wrote to standard error.
    var lastErrors: String { (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? "" }

    private var errorsFile: URL { directory.appendingPathComponent("errors.txt") }

    /// Starts `unleashed daemon` and returns once it reports the module ready.
    func start() async throws -> Process {
        let process = Process()
        process.executableURL = unleashed
        process.arguments = ["daemon", "--config", configFile.path]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        let client = DaemonClient(socketPath: socket)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let status = try? await client.status(), status.cameras.first?.status?.connection == .ready {
                return process
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        fail("the daemon did not get the module ready")
    }

    func stop(_ process: Process) {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// What a process holds now, from /proc: resident memory (all of it and the anonymous part,
/// KiB), CPU time (clock ticks), open descriptors and threads.
struct ProcessUsage {
    var rssKiB: Int
    var anonymousKiB: Int
    var ticks: Int
    var descriptors: Int
    var threads: Int

    init(_ pid: Int32) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split { $0 == " " || $0 == "\t" }.dropFirst().first ?? "") } ?? 0
        }
        rssKiB = field("VmRSS")
        anonymousKiB = field("RssAnon")
        threads = field("Threads")
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
        ticks = fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}
