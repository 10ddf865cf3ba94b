import Foundation
import Testing
import UnleashedTestSupport

@Suite("recovering the demo camera", .serialized, .timeLimit(.minutes(2)))
struct DemoRecoveryTests {
    @Test("a camera switched off says how to recover; `demo reset` gives a fresh one, switched on")
    func reset() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        #expect(try await cli.run("--demo", "settings", "set", "iso", "800").status == 0)
        let off = try await cli.run("--demo", "--demo-faults", "poweroff@300ms", "shoot", "--count", "100")
        #expect(off.status == 65)
        #expect(off.stderr.contains("`unleashed demo reset` puts a fresh one, switched on, in its place"), "\(off.stderr)")
        let still = try await cli.run("--demo", "--json", "shoot")
        #expect(still.status == 65, "the camera stays off")
        #expect(((still.json?["error"] as? [String: Any])?["message"] as? String)?.contains("unleashed demo reset") == true)

        let reset = try await cli.run("demo", "reset")
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout.hasPrefix("a new Simulated Nikon Z-style body, on, battery 86%, 2140 shots left, settings as new"), "\(reset.stdout)")
        let status = try #require(try await cli.run("--demo", "--json", "status").json)
        #expect((status["camera"] as? [String: Any])?["power"] as? String == "on")
        #expect((status["settings"] as? [String: Any])?["iso"] as? String == "100")
        #expect(try await cli.run("--demo", "shoot").status == 0)

        let canon = try #require(try await cli.run("--json", "demo", "reset", "--demo-profile", "canon-r").json)
        #expect(canon["profile"] as? String == "canon-r" && canon["power"] as? String == "on")
        #expect(canon["stateFile"] as? String == cli.stateFile.path)
    }

    @Test("the daemon's demo camera keeps its state across a restart, in the demo state file")
    func daemonKeepsState() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let daemon = try DemoDaemon(cli)
        defer { daemon.cleanUp() }
        let client = daemon.client

        let first = try await daemon.start()
        #expect(try await cli.run("settings", "set", "iso", "1600", environment: client).status == 0)
        let shot = try #require(try await cli.run("--json", "shoot", environment: client).json)
        #expect(shot["counter"] as? Int == 1)
        first.signal(SIGTERM)
        #expect(try await first.exitStatus() == 0, "\(first.errors)")
        #expect(FileManager.default.fileExists(atPath: cli.stateFile.path), "saved where demo mode keeps its camera")

        let second = try await daemon.start()
        let again = try #require(try await cli.run("--json", "shoot", environment: client).json)
        #expect(again["counter"] as? Int == 2, "the shot count goes on")
        #expect(try await cli.run("settings", "get", "iso", environment: client).stdout == "iso 1600\n")
        let refused = try await cli.run("demo", "reset", environment: client)
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("the daemon holds the simulated cameras"), "\(refused.stderr)")
        second.signal(SIGTERM)
        #expect(try await second.exitStatus() == 0, "\(second.errors)")
    }
}
