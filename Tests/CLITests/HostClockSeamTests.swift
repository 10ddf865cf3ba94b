import Foundation
import Testing
import UnleashedTestSupport

/// The built daemon with its host clock played by `UNLEASHED_TEST_HOST_CLOCK` (what only the
/// binary reads), two hours behind and kept by no time service: a phone's clock offered over the
/// socket is taken, `unleashed status` says so, and a `--start-at` handed to the daemon is read
/// on the phone's time, not the host's.
@Suite("a daemon whose host clock is wrong", .serialized, .timeLimit(.minutes(2)))
struct HostClockSeamTests {
    @Test("the phone's clock corrects the daemon's, and a run's --start-at is read on it")
    func phoneClock() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let hostClock = FileManager.default.temporaryDirectory.appendingPathComponent("host-clock-\(UUID()).json")
        try #"{"synchronised": false, "wallClockErrorMs": -7200000}"#.write(to: hostClock, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: hostClock) }
        let demoDaemon = try DemoDaemon(cli, environment: ["UNLEASHED_TEST_HOST_CLOCK": hostClock.path])
        defer { demoDaemon.cleanUp() }
        let (socket, client) = (demoDaemon.socket, demoDaemon.client)
        let daemon = try await demoDaemon.start()

        let before = try #require(try await cli.run("--json", "status", environment: client).json?["hostClock"] as? [String: Any])
        #expect(before["synchronised"] as? Bool == false)
        #expect(before["correction"] is NSNull)
        let hostNow = try #require((before["nowUnixMs"] as? NSNumber)?.int64Value)
        #expect(abs(hostNow - (Self.nowUnixMs() - 7_200_000)) < 5000, "the daemon reads the played clock, two hours behind")

        let phoneNow = Self.nowUnixMs()
        let offer = try await Curl.request(socket: socket, path: "/v1/clock", arguments: [
            "-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", #"{"unixMs": \#(phoneNow)}"#,
        ])
        #expect(offer.status == 200, "\(offer.body)")
        #expect(offer.json?["taken"] as? Bool == true)
        #expect(offer.json?["reason"] as? String == "hostNotSynchronised")
        let offset = try #require(((offer.json?["clock"] as? [String: Any])?["correction"] as? [String: Any])?["offsetMs"] as? NSNumber)
        #expect(abs(offset.int64Value - 7_200_000) < 5000, "\(offset)")

        let status = try await cli.run("status", environment: client)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Clock     host clock not synchronised; going by the clock of uid "), "\(status.stdout)")
        #expect(status.stdout.contains("the host's was 2h"), "\(status.stdout)")

        // Half an hour on, to the minute, on the phone's (this process's) clock: the daemon's
        // host clock would put it two and a half hours away.
        let at = Calendar.current.dateComponents([.hour, .minute], from: Date().addingTimeInterval(30 * 60))
        let time = String(format: "%02d:%02d", at.hour ?? 0, at.minute ?? 0)
        let submitted = try await cli.run("--json", "timelapse", "--interval", "1s", "--frames", "1", "--start-at", time, "--detach",
                                          environment: client)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = try #require(submitted.jsonLines.compactMap { $0["job"] as? [String: Any] }.first, "\(submitted.stdout)")
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let t0 = try #require((job["t0"] as? String).flatMap(iso.date(from:)), "\(job)")
        let ahead = t0.timeIntervalSinceNow
        #expect(ahead > 28 * 60 && ahead <= 30 * 60, "slot 1 \(ahead) s away, at \(time) on the phone's clock")
        let id = try #require(job["id"] as? Int)
        #expect(try await cli.run("stop", "\(id)", environment: client).status == 0)

        daemon.signal(SIGTERM)
        #expect(try await daemon.exitStatus() == 0, "\(daemon.errors)")
        #expect(daemon.errors.contains("clock: took the time of uid "), "the daemon logs the correction: \(daemon.errors)")
    }

    private static func nowUnixMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
