import Foundation
import Testing
import UnleashedTestSupport

/// Cameras driven through their own Bluetooth remote protocols, from the command line:
/// `--demo-camera` gives a simulated body of the brand in-process, spoken to through that
/// brand's protocol, as `--ble-camera` speaks to a real one.
@Suite("cameras over their own Bluetooth remote, from the command line", .timeLimit(.minutes(2)))
struct BluetoothCameraCommandTests {
    @Test("--demo-camera shoots through the brand's protocol, and refuses what the brand's remote lacks with status 65")
    func demoCamera() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let shot = try await cli.run("--demo-camera", "gopro", "--json", "shoot")
        #expect(shot.status == 0, "\(shot.stderr)")
        #expect(shot.json?["counter"] as? Int == 1, "\(shot.stdout)")
        let focus = try await cli.run("--demo-camera", "nikon", "--json", "focus")
        #expect(focus.status == 65, "\(focus.stderr)")
        let error = try #require(focus.json?["error"] as? [String: Any], "\(focus.stdout)")
        #expect(error["message"] as? String == "focus is not offered by a Nikon camera's Bluetooth remote; it offers: shoot")
        let status = try await cli.run("--demo-camera", "sony", "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Remote    Sony ILCE-7M3 (Sony over Bluetooth)"), "\(status.stdout)")
        #expect(!status.stdout.contains("Module"), "\(status.stdout)")
    }

    @Test("options that name a camera two ways, or a brand that is not driven, are usage errors")
    func refusals() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let both = try await cli.run("--ble-camera", "C0:CA:4E:00:00:01", "--module", "F0:5E:D0:00:00:01", "shoot")
        #expect(both.status == 64)
        #expect(both.stderr.contains("--module names an Unleashed module and --ble-camera or --demo-camera a camera reached directly"), "\(both.stderr)")
        let leica = try await cli.run("--demo-camera", "leica", "--json", "shoot")
        #expect(leica.status == 64)
        let error = try #require(leica.json?["error"] as? [String: Any], "\(leica.stdout)")
        #expect(error["message"] as? String == "--demo-camera: 'leica' is not a brand this tool drives; use one of gopro, sony, canon, fujifilm, nikon")
    }
}
