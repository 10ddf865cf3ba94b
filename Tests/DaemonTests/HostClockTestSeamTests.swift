import Daemon
import Foundation
import Testing
import UnleashedKit

/// `UNLEASHED_TEST_HOST_CLOCK`: the file a test launching the binary plays the host's clock with.
@Suite("the host clock test seam")
struct HostClockTestSeamTests {
    /// `text` in a file of its own, and the environment that names it.
    private static func environment(_ text: String) throws -> (environment: [String: String], path: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("host-clock-\(UUID()).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return ([HostClockTestSeam.variable: path], path)
    }

    @Test("without the variable, the daemon reads the system's clock")
    func absent() throws {
        #expect(try HostClockTestSeam.source(environment: [:]) == nil)
        #expect(try HostClockTestSeam.source(environment: [HostClockTestSeam.variable: ""]) == nil)
    }

    @Test("the file says whether the clock is synchronised and how far its wall clock is off the real one")
    func played() throws {
        let (environment, path) = try Self.environment(#"{"synchronised": false, "wallClockErrorMs": -7200000}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try #require(try HostClockTestSeam.source(environment: environment))
        #expect(source.discipline().synchronised == false)
        let real = HostClockSource.system.wallClockMs()
        #expect(abs(source.wallClockMs() - (real - 7_200_000)) < 1000)

        let (synchronised, other) = try Self.environment(#"{"synchronised": true}"#)
        defer { try? FileManager.default.removeItem(atPath: other) }
        let own = try #require(try HostClockTestSeam.source(environment: synchronised))
        #expect(own.discipline().synchronised)
        #expect(abs(own.wallClockMs() - HostClockSource.system.wallClockMs()) < 1000)
    }

    @Test("a file that is missing or says anything else is refused, naming the variable and the member")
    func refused() throws {
        let missing = "/tmp/unleashed-no-such-clock-\(UUID()).json"
        let unread = #expect(throws: HostClockTestSeam.Failure.self) {
            try HostClockTestSeam.source(environment: [HostClockTestSeam.variable: missing])
        }
        #expect(unread?.description == "UNLEASHED_TEST_HOST_CLOCK: cannot read \(missing)")
        for (text, words) in [
            ("{}", "synchronised: missing"),
            (#"{"synchronised": "no"}"#, "synchronised"),
            (#"{"synchronised": false, "offsetMs": 5}"#, "offsetMs"),
            ("not json", "UNLEASHED_TEST_HOST_CLOCK"),
            (#"{"synchronised": false, "wallClockErrorMs": 4000000000000}"#, "wallClockErrorMs: at most a century"),
        ] {
            let (environment, path) = try Self.environment(text)
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                _ = try HostClockTestSeam.source(environment: environment)
                Issue.record("\(text) was taken")
            } catch {
                #expect(error.description.contains(words) && error.description.contains(path), "\(text): \(error)")
            }
        }
    }
}
