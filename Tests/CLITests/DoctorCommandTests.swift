import Foundation
import Testing
import UnleashedTestSupport

/// What only the binary shows of `unleashed doctor`: its exit status, its JSON and its usage
/// errors. The checks themselves are tested in UnleashedAppTests (SystemInspectionTests).
@Suite("unleashed doctor, the command", .timeLimit(.minutes(1)))
struct DoctorCommandTests {
    @Test func aProblemExitsWithTwoAndEveryCheckIsInTheJSON() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("udoctor-cli-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = folder + "/unleashed.toml"
        try """
            [daemon]
            socket = "\(folder)/control.sock"
            journal = "\(folder)/journal.sqlite"
            [web]
            listen = "127.0.0.1:0"
            certificate = "\(folder)/absent.pem"
            key = "\(folder)/absent-key.pem"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(folder)/no-bus.sock"]
        let result = try await cli.run("doctor", "--user", "--config", config, "--json", environment: environment)
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        let json = try #require(result.json)
        #expect(json["status"] as? String == "problem")
        #expect(json["scope"] as? String == "user")
        let checks = try #require(json["checks"] as? [[String: Any]])
        #expect(checks.compactMap { $0["check"] as? String } == ["configuration", "bluez", "bluetooth-access", "adapter", "modules",
                                                                  "usb-cameras", "daemon", "journal", "clock", "web-certificate", "mqtt"])
        let certificate = try #require(checks.first { $0["check"] as? String == "web-certificate" })
        #expect(certificate["status"] as? String == "problem")
        #expect((certificate["summary"] as? String)?.contains("absent.pem cannot be used: no such file or directory") == true, "\(certificate)")

        let text = try await cli.run("doctor", "--user", "--config", config, environment: environment)
        #expect(text.status == 2)
        #expect(text.stdout.hasPrefix("This user's setup:\n"), "\(text.stdout)")
        #expect(text.stdout.contains("problem  web-certificate  "), "\(text.stdout)")
    }

    /// Runs the binary as nobody (setpriv), from a folder nobody may read, whatever folder the
    /// clone is in: a hard link when the file system allows, else a copy.
    static func asNobody(_ folder: String, _ arguments: [String]) async throws -> CommandResult {
        let binary = folder + "/unleashed"
        if !FileManager.default.fileExists(atPath: binary) {
            do { try FileManager.default.linkItem(atPath: CLI.binary.path, toPath: binary) } catch {
                try FileManager.default.copyItem(atPath: CLI.binary.path, toPath: binary)
            }
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(folder)/no-bus.sock"
        environment["HOME"] = folder
        return try await runProgram(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                    ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments, environment: environment)
    }

    /// As an unprivileged user: the system service's socket as the unit makes it (in a folder of
    /// mode 0750, the socket 0660) and a journal folder of root's are what the kernel refuses
    /// that user, and what doctor says.
    @Test func anotherUserIsToldWhatTheKernelRefusesThem() async throws {
        try #require(getuid() == 0, "this test runs the command as nobody: it runs as root, as make test does")
        let folder = "/tmp/udoctor-nobody-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/run", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(folder, 0o755) == 0 && chmod(folder + "/state", 0o755) == 0 && chmod(folder + "/run", 0o750) == 0)
        let socketPath = folder + "/run/control.sock"
        let listener = UnixSocketFile.bind(socketPath)
        defer { close(listener) }
        #expect(listener >= 0 && listen(listener, 4) == 0 && chmod(socketPath, 0o660) == 0)
        let config = folder + "/unleashed.toml"
        try "[daemon]\nsocket = \"\(socketPath)\"\njournal = \"\(folder)/state/journal.sqlite\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        #expect(chmod(config, 0o644) == 0)
        let result = try await Self.asNobody(folder, ["doctor", "--user", "--config", config, "--json"])
        let json = try #require(result.json, "\(result.stdout) \(result.stderr)")
        let checks = try #require(json["checks"] as? [[String: Any]])
        let finding = { (name: String) in checks.first { $0["check"] as? String == name } ?? [:] }
        #expect(finding("daemon")["status"] as? String == "problem")
        #expect(finding("daemon")["summary"] as? String == "user nobody may not use the daemon's socket \(socketPath)", "\(finding("daemon"))")
        #expect((finding("journal")["summary"] as? String)?.hasPrefix("user nobody may not write in \(folder)/state") == true, "\(finding("journal"))")
        #expect(result.status == 2)
    }

    /// The package's configuration is 0640 root:unleashed: a user outside the group cannot read
    /// it, which is not a broken configuration, and what depends on it is not judged.
    @Test func aConfigurationThisUserMayNotReadIsNotCalledBroken() async throws {
        try #require(getuid() == 0, "this test runs the command as nobody: it runs as root, as make test does")
        let folder = "/tmp/udoctor-closed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(folder, 0o755) == 0)
        let config = folder + "/unleashed.toml"
        try "[mqtt]\nbroker = \"mqtt://127.0.0.1:1\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        #expect(chmod(config, 0o640) == 0)
        let result = try await Self.asNobody(folder, ["doctor", "--user", "--config", config, "--json"])
        let checks = try #require(result.json?["checks"] as? [[String: Any]], "\(result.stdout) \(result.stderr)")
        let finding = { (name: String) in checks.first { $0["check"] as? String == name } ?? [:] }
        #expect(finding("configuration")["status"] as? String == "warning")
        #expect((finding("configuration")["summary"] as? String)?.hasPrefix("not checked, nor what depends on it: user nobody may not read the configuration or a file it names") == true,
                "\(finding("configuration"))")
        #expect(finding("mqtt")["summary"] as? String == "not checked: the configuration did not load")
        #expect(finding("daemon")["status"] as? String == "skipped")
    }

    @Test func usageErrors() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let both = try await cli.run("doctor", "--system", "--user")
        #expect(both.status == 64 && both.stderr.contains("--system and --user cannot be given together"), "\(both.stderr)")
        let frames = try await cli.run("doctor", "--frames", "0")
        #expect(frames.status == 64 && frames.stderr.contains("--frames must be 1 or more"), "\(frames.stderr)")
        let demo = try await cli.run("--demo", "doctor")
        #expect(demo.status == 64 && demo.stderr.contains("--demo has none to check"), "\(demo.stderr)")
    }
}
