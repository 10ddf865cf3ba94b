import Foundation
import Testing

/// Runs the built `unleashed` binary as a user would, with its own demo camera state.
struct CLI {
    let stateFile = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-cli-\(UUID()).json")

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
        }
    }

    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["UNLEASHED_BIN"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed")
    }()

    func run(_ arguments: String..., environment: [String: String] = [:]) throws -> Result {
        try run(arguments: arguments, environment: environment)
    }

    func run(arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["UNLEASHED_DEMO_STATE"] = stateFile.path
        env["UNLEASHED_DEMO"] = nil
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    func cleanUp() { try? FileManager.default.removeItem(at: stateFile) }
}

@Suite("The unleashed command in demo mode", .timeLimit(.minutes(2)))
struct CLITests {
    @Test("--help explains demo mode and the exit statuses")
    func help() throws {
        let result = try CLI().run("--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("--demo"))
        #expect(result.stdout.contains("UNLEASHED_DEMO=1"))
        #expect(result.stdout.contains("65  the camera refused the value"))
        for command in ["status", "settings", "shoot"] { #expect(result.stdout.contains(command)) }
    }

    @Test("status prints the module, the camera and its settings")
    func status() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let human = try cli.run("--demo", "status")
        #expect(human.status == 0)
        #expect(human.stdout.contains("Camera    Simulated Nikon Z-style body, on, battery 86%, ready"))
        #expect(human.stdout.contains("Settings  iso 100, shutter-speed 1/125, aperture f/8"))
        let json = try #require(try cli.run("status", "--demo", "--json").json)
        #expect((json["module"] as? [String: Any])?["firmware"] as? String == "1.0.0")
        #expect((json["camera"] as? [String: Any])?["power"] as? String == "on")
        #expect((json["settings"] as? [String: Any])?["aperture"] as? String == "f/8")
    }

    @Test("a value the camera does not offer is refused with the nearest values and exit status 65")
    func refusedValue() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let human = try cli.run("--demo", "settings", "set", "iso", "12345")
        #expect(human.status == 65)
        #expect(human.stdout.isEmpty)
        #expect(human.stderr == "error: ISO 12345 is not offered by this camera; nearest: 12800, 10000\n")

        let json = try cli.run("--demo", "--json", "settings", "set", "iso", "12345")
        #expect(json.status == 65)
        let error = try #require(json.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "valueNotOffered")
        #expect(error["nearest"] as? [String] == ["12800", "10000"])

        #expect(try cli.run("--demo", "settings", "get", "iso").stdout == "iso 100\n", "nothing changed")
    }

    @Test("a change sticks: later commands see it")
    func settingPersists() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let set = try cli.run("--demo", "settings", "set", "iso", "800")
        #expect(set.status == 0)
        #expect(set.stdout == "iso set to 800\n")
        #expect(try cli.run("--demo", "settings", "set", "ev", "-2/3").stdout == "exposure-compensation set to -2/3\n")
        let get = try #require(try cli.run("--demo", "--json", "settings", "get", "iso").json)
        #expect(get["value"] as? String == "800")
        let list = try cli.run("--demo", "--json", "settings", "list")
        let settings = try #require((try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [[String: Any]])
        let ev = try #require(settings.first { $0["setting"] as? String == "exposure-compensation" })
        #expect(ev["value"] as? String == "-2/3")
        #expect((ev["choices"] as? [String])?.count == 31)
    }

    @Test("three shots count up and report their latency")
    func shoot() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        var counters: [Int] = []
        for _ in 0..<3 {
            let result = try cli.run("--demo", "--json", "shoot")
            #expect(result.status == 0)
            let json = try #require(result.json)
            counters.append(json["counter"] as? Int ?? 0)
            #expect((json["latencyMs"] as? Int ?? 0) >= 52, "at least the simulated shutter lag")
            #expect((json["cameraTime"] as? String)?.hasSuffix("Z") == true)
        }
        #expect(counters == [1, 2, 3])
        let human = try cli.run("--demo", "shoot")
        #expect(human.stdout.hasPrefix("Shot 4 taken, reported "))
    }

    @Test("bad input is refused with a clear message and exit status 64", arguments: [
        (["settings", "set", "shutter", "soon"], "'soon' is not a shutter speed value; write it like 1/250, 0.5s, 30s or bulb"),
        (["settings", "get", "zoom"], "there is no setting called 'zoom'"),
    ])
    func badInput(arguments: [String], message: String) throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try cli.run(arguments: ["--demo"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message))
    }

    @Test("without a module or --demo it says what to do; UNLEASHED_DEMO=1 selects the simulator")
    func noModule() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try cli.run("status")
        #expect(result.status == 69)
        #expect(result.stderr.contains("run with --demo (or UNLEASHED_DEMO=1)"))
        #expect(try cli.run("status", environment: ["UNLEASHED_DEMO": "1"]).status == 0)
    }

    @Test("a damaged demo state file is reported, not a crash")
    func damagedState() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try Data("{\"profile\": 7".utf8).write(to: cli.stateFile)
        let result = try cli.run("--demo", "status")
        #expect(result.status == 69)
        #expect(result.stderr.contains("remove it to start with a new simulated camera"))
    }
}
