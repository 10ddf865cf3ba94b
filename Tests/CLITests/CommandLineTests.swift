import Foundation
import Testing
import UnleashedTestSupport

@Suite("the command line itself: negative numbers, and errors as JSON", .timeLimit(.minutes(2)))
struct CommandLineTests {
    @Test("negative numbers are taken as values: --demo-sky and geotag's position")
    func negativeNumbers() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let sky = try await cli.run("--demo", "--demo-sky", "-33.9,151.2", "--json", "status")
        #expect(sky.status == 0, "\(sky.stderr)")
        let place = try await cli.run("--demo", "--json", "geotag", "-33.8568", "-70.5", "-5")
        #expect(place.status == 0, "\(place.stderr)")
        let json = try #require(place.json)
        #expect(json["latitude"] as? Double == -33.8568 && json["longitude"] as? Double == -70.5 && json["altitude"] as? Double == -5)
        let text = try await cli.run("--demo", "geotag", "-33.8568", "151.2153")
        #expect(text.stdout == "Position set: -33.8568, 151.2153\n", "\(text.stderr)")
        let stray = try await cli.run("--demo", "geotag", "-33.8", "151.2", "--bogus")
        #expect(stray.status == 64)
        #expect(stray.stderr.contains("unknown option '--bogus'"), "\(stray.stderr)")
        let short = try await cli.run("--demo", "geotag", "-33.8")
        #expect(short.status == 64)
        #expect(short.stderr.contains("geotag takes a latitude, a longitude and optionally an altitude"), "\(short.stderr)")

        // The simulator's PTP/IP camera takes a southern sky too.
        let simulator = CLI.binary.deletingLastPathComponent().appendingPathComponent("unleashed-sim")
        let camera = try BackgroundRun(simulator, ["ptpip", "--port", "0", "--sky", "-33.9,151.2"],
                                       environment: ProcessInfo.processInfo.environment)
        try await camera.waitFor("the camera to listen") { $0.output.contains { $0.contains("listening") } }
        camera.signal(SIGTERM)
        _ = try await camera.exitStatus()
    }

    @Test("an empty --module, --ble-camera, --adapter or --camera-model is a usage error naming the option, not a camera called nothing",
          arguments: [(["shoot", "--module", ""], "--module"), (["--json", "status", "--module", " "], "--module"),
                      (["shoot", "--ble-camera", ""], "--ble-camera"), (["--demo", "shoot", "--adapter", ""], "--adapter"),
                      (["--backend", "gphoto2", "status", "--camera-model", " "], "--camera-model")])
    func emptyNames(arguments: [String], option: String) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run(arguments: arguments)
        #expect(result.status == 64, "\(result.stdout) \(result.stderr)")
        #expect((result.stdout + result.stderr).contains("\(option) was given an empty value"), "\(result.stdout) \(result.stderr)")
    }

    @Test("--camera-model: a model libgphoto2 does not know, or the option without --backend gphoto2, is a usage error in text and JSON")
    func cameraModel() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let home = ["HOME": FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-cli-home-\(UUID())").path]
        let text = try await cli.run("--backend", "gphoto2", "--camera-model", "Nikon D750", "status", environment: home)
        #expect(text.status == 64, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.contains("knows no camera model 'Nikon D750'; the closest it knows: 'Nikon DSC D750'"), "\(text.stderr)")
        let json = try await cli.run("--backend", "gphoto2", "--camera-model", "Nikon D750", "--json", "status", environment: home)
        #expect(json.status == 64)
        #expect(json.stderr.isEmpty, "\(json.stderr)")
        let error = try #require(json.json?["error"] as? [String: Any], "\(json.stdout)")
        #expect(error["code"] as? String == "invalidArgument")
        #expect((error["message"] as? String)?.contains("'Nikon DSC D750'") == true, "\(error)")
        let backend = try await cli.run("--camera-model", "Nikon DSC D750", "--json", "status", "--module", "AA:BB:CC:DD:EE:FF")
        #expect(backend.status == 64)
        #expect((backend.json?["error"] as? [String: Any])?["message"] as? String
            == "--camera-model names a camera model for libgphoto2; add --backend gphoto2", "\(backend.stdout)")
    }

    @Test("a negative number an option cannot take says how to write it, in text and in JSON")
    func negativeHint() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let text = try await cli.run("--demo", "--demo-seed", "-1", "status")
        #expect(text.status == 64)
        #expect(text.stderr.contains("Hint: a value that starts with '-' reads as an option; join it to its option with '=': --demo-seed=-1"),
                "\(text.stderr)")
        let json = try await cli.run("--demo", "--json", "--demo-seed", "-1", "status")
        #expect(json.status == 64)
        #expect(json.stderr.isEmpty)
        let error = try #require(json.json?["error"] as? [String: Any], "\(json.stdout)")
        #expect(error["code"] as? String == "usage")
        #expect((error["message"] as? String)?.contains("--demo-seed=-1") == true, "\(error)")
        let positional = try await cli.run("--demo", "runs", "show", "-3")
        #expect(positional.status == 64)
        #expect(positional.stderr.contains("put -- before it"), "\(positional.stderr)")
    }

    @Test("with --json, a command line that does not parse is a JSON error on standard output, status 64", arguments: [
        ["--json", "frobnicate"], ["--json", "shoot", "--count"], ["settings", "set", "iso", "--json"], ["--json", "status", "--bogus"],
        ["--json", "timelapse", "--frames", "many"],
    ])
    func parseErrorsAsJSON(arguments: [String]) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run(arguments: ["--demo"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "one object: \(result.stdout)")
        let error = try #require(result.json?["error"] as? [String: Any], "\(result.stdout)")
        #expect(error["code"] as? String == "usage")
        #expect((error["message"] as? String)?.isEmpty == false)
    }
}
