import Foundation
import Testing
import UnleashedApp

/// `unleashed daemon --check` as the application layer decides it: what the daemon would refuse
/// at start, with the daemon's words, and what it would use. No bus, no socket bound.
@Suite struct DaemonLaunchTests {
    final class Folder {
        let path = "/tmp/udl-\(UUID().uuidString.prefix(8))"
        var config: String { path + "/unleashed.toml" }
        /// Nothing of the test runner's UNLEASHED_* variables.
        var environment: [String: String] { ["HOME": path, "XDG_RUNTIME_DIR": path] }

        init(_ text: String, daemon: String = "") throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let table = "[daemon]\nsocket = \"\(path)/run/control.sock\"\njournal = \"\(path)/journal.sqlite\"\n\(daemon)\n"
            try (table + text).write(toFile: config, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func aFileWhereTheSocketGoesIsRefusedAndKept() throws {
        let folder = try Folder("")
        let notes = folder.path + "/notes.txt"
        try "keep me".write(toFile: notes, atomically: true, encoding: .utf8)
        let launch = try DaemonLaunch(system: false, file: folder.config, environment: folder.environment.merging(["UNLEASHED_SOCKET": notes]) { $1 })
        #expect {
            try launch.check()
        } throws: { error in
            let text = String(describing: error)
            return text.contains("cannot listen on \(notes): a regular file is there, not a socket")
                && text.contains("daemon.socket (or UNLEASHED_SOCKET)")
        }
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "keep me")
    }

    @Test func aTCPListenerWithoutTokensIsRefused() throws {
        let folder = try Folder("", daemon: "listen = \"127.0.0.1:8433\"")
        let launch = try DaemonLaunch(system: false, file: folder.config, environment: folder.environment)
        #expect {
            try launch.check()
        } throws: { error in
            String(describing: error).contains("listen is set but no [[tokens]] are configured")
        }
    }

    @Test func aConfigFileThatDoesNotExistIsRefusedNotTakenForTheDefaults() throws {
        let folder = try Folder("")
        let absent = folder.path + "/absent.toml"
        #expect {
            _ = try DaemonLaunch(system: false, file: absent, environment: folder.environment)
        } throws: { error in
            guard case .configuration(let why) = error as? DaemonLaunchError else { return false }
            return why.contains("\(absent): cannot be read: no such file")
        }
    }

    @Test func theSummaryNamesWhatTheDaemonWouldUse() throws {
        let folder = try Folder("""
            [[modules]]
            name = "left"
            address = "AA:BB:CC:DD:EE:01"

            [[tokens]]
            name = "ci"
            token = "s3cret-s3cret-s3cret"
            role = "operator"
            """)
        let launch = try DaemonLaunch(system: false, file: folder.config, environment: folder.environment)
        try launch.check()
        let summary = launch.summary
        #expect(summary.files == [folder.config])
        #expect(summary.socket == folder.path + "/run/control.sock")
        #expect(summary.journal == folder.path + "/journal.sqlite")
        #expect(summary.backend == "unleashed")
        #expect(summary.modules == [.init(name: "left", address: "AA:BB:CC:DD:EE:01")])
        #expect(summary.tokens == [.init(name: "ci", role: "operator")])
        #expect(!summary.locked)
        #expect(summary.listen == nil)
    }
}
