import CameraKit
import Foundation
import Testing
import UnleashedTestSupport

/// The simulated bodies' model names, as `status` reports them.
enum CameraModels {
    static let canon = "Simulated Canon EOS R-style body"
}

/// Runs the built `unleashed` binary as a user would, with its own demo camera state.
struct CLI {
    let stateFile = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-cli-\(UUID()).json")
    /// A run journal of its own, so that runs never land in the home directory of whoever
    /// runs the tests.
    let journalFile = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-cli-\(UUID()).sqlite")

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
        }

        /// Each line of the output that is a JSON object (`--json` runs print one per record).
        var jsonLines: [[String: Any]] {
            stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    static let binary = Built.unleashed

    func run(_ arguments: String..., environment: [String: String] = [:]) async throws -> Result {
        try await run(arguments: arguments, environment: environment)
    }

    /// Runs the binary to its end on a thread of its own, so that waiting for it never holds
    /// one of the few threads that the other tests' async work runs on.
    func run(arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["UNLEASHED_DEMO_STATE"] = stateFile.path
        env["UNLEASHED_DEMO"] = nil
        env["UNLEASHED_JOURNAL"] = journalFile.path
        // No module remembered by whoever runs the tests.
        env["XDG_STATE_HOME"] = stateFile.deletingLastPathComponent().appendingPathComponent("no-state-\(UUID())").path
        env.merge(environment) { _, new in new }
        let finalEnvironment = env
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let process = Process()
                process.executableURL = Self.binary
                process.arguments = arguments
                process.environment = finalEnvironment
                let out = Pipe(), err = Pipe()
                process.standardOutput = out
                process.standardError = err
                do {
                    try ChildProcesses.run(process)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let stdout = out.fileHandleForReading.readDataToEndOfFile()
                let stderr = err.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                                                      stderr: String(decoding: stderr, as: UTF8.self)))
            }
        }
    }

    func cleanUp() {
        for file in [stateFile.path, journalFile.path, journalFile.path + "-wal", journalFile.path + "-shm"] {
            try? FileManager.default.removeItem(atPath: file)
        }
    }
}

/// `unleashed daemon --demo` in a folder of its own (its socket, journal and configuration), with
/// `cli`'s demo camera: for the few tests of what only the built daemon shows.
struct DemoDaemon {
    let cli: CLI
    let directory: URL
    let socket: String
    private let config: URL
    /// The daemon's environment.
    private let environment: [String: String]
    /// What a command needs in its environment to reach the daemon.
    let client: [String: String]

    /// `extra` goes into the daemon's environment.
    init(_ cli: CLI, environment extra: [String: String] = [:]) throws {
        self.cli = cli
        directory = URL(fileURLWithPath: "/tmp/ud-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("control.sock").path
        config = directory.appendingPathComponent("unleashed.toml")
        try "[daemon]\nsocket = \"\(socket)\"\njournal = \"\(directory.path)/journal.sqlite\"\n".write(to: config, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["UNLEASHED_DEMO_STATE"] = cli.stateFile.path
        environment["UNLEASHED_SOCKET"] = socket
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["UNLEASHED_DEMO"] = nil
        environment.merge(extra) { _, new in new }
        self.environment = environment
        client = ["UNLEASHED_SOCKET": socket, "XDG_CONFIG_HOME": environment["XDG_CONFIG_HOME"]!]
    }

    /// Starts the daemon and returns once `status` answers through it.
    func start() async throws -> BackgroundRun {
        let daemon = try BackgroundRun(CLI.binary, ["daemon", "--demo", "--config", config.path], environment: environment)
        let (cli, client) = (cli, client)
        guard try await eventually(every: .milliseconds(100), {
            try await cli.run("--json", "status", environment: client).status == 0
        }) else { throw DemoDaemonError(description: "the daemon did not answer: \(daemon.errors)") }
        return daemon
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

struct DemoDaemonError: Error, CustomStringConvertible {
    let description: String
}

@Suite("The unleashed command in demo mode", .timeLimit(.minutes(2)))
struct CLITests {
    @Test("--help explains demo mode and the exit statuses")
    func help() async throws {
        let result = try await CLI().run("--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("--demo"))
        #expect(result.stdout.contains("UNLEASHED_DEMO=1"))
        #expect(result.stdout.contains("65  the camera refused the value"))
        for command in ["status", "watch", "settings", "focus", "release", "shoot", "bulb", "video", "time", "geotag", "timelapse", "runs"] {
            #expect(result.stdout.contains(command))
        }
        #expect(result.stdout.contains("130 stopped by Ctrl-C"))
    }

    @Test("status prints the module, the camera and its settings")
    func status() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let human = try await cli.run("--demo", "status")
        #expect(human.status == 0)
        #expect(human.stdout.hasPrefix("● connected  module 100%  camera 86%  2140 shots left  EV +12\n"))
        #expect(human.stdout.contains("Camera    Simulated Nikon Z-style body, on, battery 86%, ready"))
        #expect(!human.stdout.contains("\u{1B}["), "no colour when the output is not a terminal")
        #expect(human.stdout.contains("Settings  iso 100, shutter-speed 1/125, aperture f/8"))
        let json = try #require(try await cli.run("status", "--demo", "--json").json)
        #expect((json["module"] as? [String: Any])?["firmware"] as? String == "1.0.0")
        #expect((json["camera"] as? [String: Any])?["power"] as? String == "on")
        #expect(json["connection"] as? String == "ready")
        #expect((json["settings"] as? [String: Any])?["aperture"] as? String == "f/8")
    }

    @Test("a value the camera does not offer is refused with the nearest values and exit status 65")
    func refusedValue() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let human = try await cli.run("--demo", "settings", "set", "iso", "12345")
        #expect(human.status == 65)
        #expect(human.stdout.isEmpty)
        #expect(human.stderr == "error: ISO 12345 is not offered by this camera; nearest: 12800, 10000\n")

        let json = try await cli.run("--demo", "--json", "settings", "set", "iso", "12345")
        #expect(json.status == 65)
        let error = try #require(json.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "valueNotOffered")
        #expect(error["nearest"] as? [String] == ["12800", "10000"])

        #expect(try await cli.run("--demo", "settings", "get", "iso").stdout == "iso 100\n", "nothing changed")
    }

    @Test("a change sticks: later commands see it")
    func settingPersists() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let set = try await cli.run("--demo", "settings", "set", "iso", "800")
        #expect(set.status == 0)
        #expect(set.stdout == "iso set to 800\n")
        #expect(try await cli.run("--demo", "settings", "set", "ev", "-2/3").stdout == "exposure-compensation set to -2/3\n")
        let get = try #require(try await cli.run("--demo", "--json", "settings", "get", "iso").json)
        #expect(get["value"] as? String == "800")
        let list = try await cli.run("--demo", "--json", "settings", "list")
        let settings = try #require((try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [[String: Any]])
        let ev = try #require(settings.first { $0["setting"] as? String == "exposure-compensation" })
        #expect(ev["value"] as? String == "-2/3")
        #expect((ev["choices"] as? [String])?.count == 31)
    }

    @Test("three shots count up and report their latency")
    func shoot() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        var counters: [Int] = []
        for _ in 0..<3 {
            let result = try await cli.run("--demo", "--json", "shoot")
            #expect(result.status == 0)
            let json = try #require(result.json)
            counters.append(json["counter"] as? Int ?? 0)
            #expect((json["latencyMs"] as? Int ?? 0) >= 52, "at least the simulated shutter lag")
            #expect((json["cameraTime"] as? String)?.hasSuffix("Z") == true)
        }
        #expect(counters == [1, 2, 3])
        let human = try await cli.run("--demo", "shoot")
        #expect(human.stdout.hasPrefix("Shot 4 taken, reported "))
    }

    @Test("a damaged demo state file is reported, not a crash")
    func damagedState() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try Data("{\"profile\": 7".utf8).write(to: cli.stateFile)
        let result = try await cli.run("--demo", "status")
        #expect(result.status == 69)
        #expect(result.stderr.contains("remove it to start with a new simulated camera"))
    }

    @Test("shoot --count takes a series, one JSON line per picture")
    func shootSeries() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run("--demo", "--json", "shoot", "--count", "3")
        #expect(result.status == 0)
        let counters = result.stdout.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["counter"] as? Int
        }
        #expect(counters == [1, 2, 3])
        let refused = try await cli.run("--demo", "shoot", "--count", "0")
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--count must be between 1 and 10000"))
    }

    @Test("focus, focus --hold and release")
    func focus() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        #expect(try await cli.run("--demo", "focus").stdout == "Focus acquired\n")
        let held = try #require(try await cli.run("--demo", "--json", "focus", "--hold").json)
        #expect(held["focus"] as? String == "acquired" && held["held"] as? Bool == true)
        #expect(try await cli.run("--demo", "release").stdout == "Released\n")
        _ = try await cli.run("--demo", "settings", "set", "focus-mode", "manual")
        #expect(try await cli.run("--demo", "focus").stdout == "The lens is in manual focus; nothing to do\n")
    }

    @Test("bulb: refused until the shutter is set to bulb, then exposes for the time asked")
    func bulb() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let notBulb = try await cli.run("--demo", "bulb", "500ms")
        #expect(notBulb.status == 65)
        #expect(notBulb.stderr.contains("needs the shutter speed set to bulb (it is 1/125)"))
        #expect(try await cli.run("--demo", "settings", "set", "shutter-speed", "bulb").status == 0)
        let result = try await cli.run("--demo", "--json", "bulb", "700ms")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        #expect(json["ending"] as? String == "deadline")
        #expect(json["exposedMs"] as? Int == 700)
        #expect(json["counter"] as? Int == 1)
    }

    @Test("video record, start and stop")
    func video() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let record = try await cli.run("--demo", "--json", "video", "record", "1s")
        #expect(record.status == 0, "\(record.stderr)")
        let lines = record.jsonLines
        let clip = try #require(lines.first { $0["frame"] != nil })
        let exposure = try #require(clip["exposure"] as? String)
        #expect(exposure.hasPrefix("video 1000ms, clip "), "\(exposure)")
        #expect(clipMilliseconds(exposure).map { (990...1200).contains($0) } == true, "\(exposure)")
        #expect(clip["outcome"] as? String == "taken")
        let completed = try #require(clip["completedMs"] as? Int)
        #expect(completed >= 1000 && completed < 1500, "\(completed) ms")
        #expect((lines.last?["run"] as? [String: Any])?["state"] as? String == "finished")
        let notRecording = try await cli.run("--demo", "video", "stop")
        #expect(notRecording.status == 65)
        #expect(notRecording.stderr.contains("error: "))
    }

    @Test("time sync and geotag")
    func timeAndPlace() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let time = try await cli.run("--demo", "time", "sync")
        #expect(time.status == 0)
        #expect(time.stdout.hasPrefix("Camera clock set to "))
        let place = try #require(try await cli.run("--demo", "--json", "geotag", "--", "-33.8568", "151.2153", "5").json)
        #expect(place["latitude"] as? Double == -33.8568 && place["altitude"] as? Double == 5)
        let wrong = try await cli.run("--demo", "geotag", "95", "10")
        #expect(wrong.status == 64)
        #expect(wrong.stderr == "error: latitude must be between -90 and 90 degrees\n")
        let notANumber = try await cli.run("--demo", "geotag", "north", "10")
        #expect(notANumber.status == 64)
        #expect(notANumber.stderr == "error: latitude 'north' is not a number\n")
    }

    @Test("watch prints the link state and events, then stops at --for")
    func watch() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run("--demo", "--json", "watch", "--for", "500ms")
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(lines.first?["event"] as? String == "connection")
        #expect(lines.first?["state"] as? String == "ready")
        #expect(lines.contains { $0["event"] as? String == "meteredEV" })
    }

    /// What a bad duration reads is decided in UnleashedApp (`CameraRequestTests`); here that
    /// a command refuses one before anything is sent.
    @Test("a bad duration is refused before anything is sent")
    func badDuration() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run("--demo", "bulb", "soon")
        #expect(result.status == 64)
        #expect(result.stderr.contains("is not a duration; write it like 250ms, 30s, 1m30s or 2h"), "\(result.stderr)")
    }

    @Test("operations while the camera is off say so, with exit status 65; status still works")
    func cameraOff() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        #expect(try await cli.run("--demo", "status").status == 0)
        var state = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: cli.stateFile))) as? [String: Any])
        state["power"] = "off"
        try JSONSerialization.data(withJSONObject: state).write(to: cli.stateFile)
        let shot = try await cli.run("--demo", "shoot")
        #expect(shot.status == 65)
        #expect(shot.stderr.hasPrefix("error: the camera is off or asleep"))
        let json = try await cli.run("--demo", "--json", "settings", "set", "iso", "800")
        #expect(json.status == 65 || json.status == 69)
        let status = try #require(try await cli.run("--demo", "--json", "status").json)
        #expect((status["camera"] as? [String: Any])?["power"] as? String == "off")
    }

    @Test("demo options: profiles and a fault plan (bad ones: CameraRequestTests)")
    func demoOptions() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let lossy = try await cli.run("--demo", "--demo-seed", "3", "--demo-faults", "drop=0.05,reorder=0.02,busy=0.1", "--json", "shoot", "--count", "5")
        #expect(lossy.status == 0, "\(lossy.stderr)")
        #expect(lossy.stdout.split(separator: "\n").count == 5)
        let canon = try #require(try await cli.run("--demo", "--demo-profile", "canon-r", "--json", "status").json)
        #expect((canon["camera"] as? [String: Any])?["model"] as? String == CameraModels.canon)
        let rebooted = try await cli.run("--demo", "--demo-faults", "reboot@200ms", "--json", "shoot", "--count", "8")
        #expect(rebooted.status == 0, "a module restart mid-series loses no shot: \(rebooted.stderr)")
        let off = try await cli.run("--demo", "--demo-faults", "poweroff@300ms", "shoot", "--count", "100")
        #expect(off.status == 65)
        #expect(off.stderr.contains("the camera is off or asleep"))
    }
}

@Suite("rigs on the command line (demo cameras)")
struct RigCommandTests {
    /// A configuration directory with the modules "left" and "right" in the group "stereo".
    private func stereoConfiguration() throws -> URL {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-rig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: config.appendingPathComponent("unleashed"), withIntermediateDirectories: true)
        try Data("""
            [[modules]]
            name = "left"
            address = "F0:5E:D0:00:00:01"
            [[modules]]
            name = "right"
            address = "F0:5E:D0:00:00:02"
            [[groups]]
            name = "stereo"
            cameras = ["left", "right"]

            """.utf8).write(to: config.appendingPathComponent("unleashed/config.toml"))
        return config
    }

    @Test("shoot --group fires every camera of the configured group and reports each with the spread")
    func groupShot() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let config = try stereoConfiguration()
        defer { try? FileManager.default.removeItem(at: config) }
        let environment = ["XDG_CONFIG_HOME": config.path]
        let shot = try await cli.run("shoot", "--demo", "--group", "stereo", "--json", environment: environment)
        #expect(shot.status == 0, "\(shot.stderr)")
        let json = try #require(shot.json)
        let cameras = try #require(json["cameras"] as? [[String: Any]])
        #expect(cameras.map { $0["camera"] as? String } == ["left", "right"])
        #expect(cameras.allSatisfy { $0["counter"] is Int })
        #expect((json["spread"] as? [String: Any])?["commandsMs"] is Double)

    }

    @Test("timelapse --group --ramp auto ramps every camera of the group, each record with its ramp")
    func groupRamp() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let config = try stereoConfiguration()
        defer { try? FileManager.default.removeItem(at: config) }
        let run = try await cli.run("timelapse", "--demo", "--demo-sky", "52.5,13.4,2026-12-21T15:30:00Z", "--group", "stereo",
                                    "--ramp", "auto", "--ramp-aperture", "f/2.8", "--ramp-gap", "200ms", "--interval", "1s",
                                    "--frames", "3", "--overrun", "defer", "--json", environment: ["XDG_CONFIG_HOME": config.path])
        #expect(run.status == 0, "\(run.stderr)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 6, "\(run.stdout)")
        #expect(Set(frames.compactMap { $0["camera"] as? String }) == ["left", "right"])
        #expect(frames.allSatisfy { $0["outcome"] as? String == "taken" && $0["ramp"] is [String: Any] }, "\(frames)")
        #expect(frames.allSatisfy { ($0["exposure"] as? String)?.hasSuffix(" f/2.8") == true }, "\(frames)")
    }

    @Test("settings set on a rig refuses a value no camera offers and changes none")
    func settingRefused() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let refused = try await cli.run("settings", "set", "--demo", "--camera", "a", "--camera", "b", "iso", "12345", "--json")
        #expect(refused.status == 65)
        let error = try #require(refused.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "rigRefused")
        #expect((error["cameras"] as? [[String: Any]])?.compactMap { $0["camera"] as? String } == ["a", "b"])
        let set = try await cli.run("settings", "set", "--demo", "--camera", "a", "--camera", "b", "iso", "800", "--json")
        #expect(set.status == 0, "\(set.stderr)")
        #expect((set.json?["cameras"] as? [[String: Any]])?.compactMap { $0["value"] as? String } == ["800", "800"])
    }
}
