import Foundation
import Testing
import UnleashedTestSupport

@Suite("schedules that surprise or cannot be: a later day told, absurd values refused", .serialized, .timeLimit(.minutes(2)))
struct ScheduleSurpriseTests {
    /// A time zone in which it is about noon now, so that 11:00 has just passed and the test
    /// never runs across midnight.
    private static func zoneAtNoon() -> String {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let offset = 12 - utc.component(.hour, from: Date())
        // Etc/GMT-3 is three hours east of Greenwich: the sign is the POSIX one.
        return offset == 0 ? "Etc/GMT" : "Etc/GMT\(offset > 0 ? "-" : "+")\(abs(offset))"
    }

    private func launch(_ fixture: RunFixture, _ arguments: [String], zone: String = Self.zoneAtNoon()) throws -> BackgroundRun {
        var environment = ProcessInfo.processInfo.environment
        environment["UNLEASHED_DEMO_STATE"] = fixture.cli.stateFile.path
        environment["TZ"] = zone
        environment.merge(fixture.environment) { _, new in new }
        return try BackgroundRun(CLI.binary, arguments, environment: environment)
    }

    @Test("--start-at a time that has passed today says the run starts tomorrow: on standard error, and as a JSON note")
    func startTomorrow() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let zone = Self.zoneAtNoon()
        let run = try launch(fixture, ["--demo", "--json", "timelapse", "--interval", "1s", "--frames", "2", "--start-at", "11:00"], zone: zone)
        try await run.waitFor("the note") { $0.objects.contains { $0["note"] != nil } && $0.errors.contains("note: ") }
        run.signal(SIGINT)
        #expect(try await run.exitStatus() == 130)
        let note = try #require(run.objects.first?["note"] as? [String: Any], "the note comes first: \(run.output)")
        #expect(note["code"] as? String == "laterDay")
        #expect(note["option"] as? String == "--start-at" && note["day"] as? String == "tomorrow")
        let at = try #require((note["at"] as? String).flatMap { ISO8601DateFormatter.withFractions.date(from: $0) })
        // 11:00 tomorrow in that zone: under a day away, and over 20 h even when the hour
        // turned from 12 to 13 between choosing the zone and the run reading its clock.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        #expect(calendar.dateComponents([.hour, .minute, .second], from: at) == DateComponents(hour: 11, minute: 0, second: 0), "\(at) in \(zone)")
        #expect((20 * 3600...24 * 3600).contains(at.timeIntervalSinceNow), "\(at)")
        #expect(run.errors.contains("note: --start-at 11:00 is tomorrow: 11:00 has passed today, so the run starts tomorrow at 11:00"),
                "\(run.errors)")
        #expect(run.frames.isEmpty)
    }

    /// A POSIX TZ rule that glibc honours (and Foundation's zone does not: it fell back to UTC,
    /// 13 h 45 min off): the time of day is read on the process's own clock.
    @Test("--start-at under a POSIX TZ rule is that zone's time, not UTC's")
    func posixZone() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        // Five minutes ago on that clock, so the run starts tomorrow. Just after midnight there,
        // five minutes ago was yesterday, and the run would start today: that zone is swapped
        // for one 18 h away.
        var (zone, offset) = ("<+1345>-13:45", 13 * 3600 + 45 * 60)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let localNow = Date().addingTimeInterval(TimeInterval(offset))
        if utc.component(.hour, from: localNow) == 0 && utc.component(.minute, from: localNow) < 10 {
            (zone, offset) = ("<-0415>+04:15", -(4 * 3600 + 15 * 60))
        }
        let local = Date().addingTimeInterval(TimeInterval(offset - 300))
        let text = String(format: "%02d:%02d", utc.component(.hour, from: local), utc.component(.minute, from: local))
        let run = try launch(fixture, ["--demo", "--json", "timelapse", "--interval", "1s", "--frames", "2", "--start-at", text], zone: zone)
        try await run.waitFor("the note") { $0.objects.contains { $0["note"] != nil } }
        run.signal(SIGINT)
        #expect(try await run.exitStatus() == 130)
        let note = try #require(run.objects.first?["note"] as? [String: Any], "\(run.output)")
        let at = try #require((note["at"] as? String).flatMap { ISO8601DateFormatter.withFractions.date(from: $0) })
        // A day less five minutes (and the seconds of this minute) from now.
        let expected: ClosedRange<TimeInterval> = 85_800...86_400
        #expect(expected.contains(at.timeIntervalSinceNow), "\(zone) \(text): \(at)")
    }

    /// Every limit is tested on `PlanRequest`; these show the refusal as each command prints it.
    @Test("absurd durations are refused with what the limit is, before anything is shot", arguments: [
        (["timelapse", "--interval", "25h", "--frames", "3"], "--interval: 25h is too long; it can be at most a day (24h)"),
        (["bulb", "99999999999999h"], "bulb: '99999999999999h' is too long to be counted"),
    ])
    func absurd(arguments: [String], message: String) async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let result = try await fixture.run(arguments: ["--demo"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        let json = try await fixture.run(arguments: ["--demo", "--json"] + arguments)
        #expect(json.status == 64)
        #expect(((json.json?["error"] as? [String: Any])?["message"] as? String)?.contains(message) == true, "\(json.stdout)")
        #expect(try await fixture.run(arguments: ["--demo", "status", "--json"]).stdout.contains("\"shotCounter\":0"))
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
