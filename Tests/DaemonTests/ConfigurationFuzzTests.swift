import Foundation
import Testing
@testable import Daemon
import UnleashedTestSupport

/// Garbage, truncated and mangled configuration text must give an error, never a crash.
@Suite struct ConfigurationFuzzTests {
    static let valid = """
        backend = "unleashed"
        [daemon]
        socket = "/run/unleashed/control.sock"
        socket_mode = 0o660
        listen = "127.0.0.1:8080"
        [reconnect]
        initial_delay = "500ms"
        max_delay = "30s"
        [[modules]]
        name = "left"
        address = "AA:BB:CC:DD:EE:01"
        [[tokens]]
        name = "ci"
        token = "0123456789abcdef"
        role = "operator"
        """

    /// Loads `text` as the only file; any outcome but a crash passes.
    func load(_ text: String) throws -> Result<DaemonConfiguration, ConfigurationError> {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", text)
        return Result { () throws(ConfigurationError) in try files.load() }
    }

    @Test func everyTruncationLoadsOrFails() throws {
        let text = Array(Self.valid.utf8)
        var failures = 0
        for length in 0..<text.count {
            if case .failure = try load(String(decoding: text[..<length], as: UTF8.self)) { failures += 1 }
        }
        #expect(failures > 0)
        #expect(try load(Self.valid).get().modules.count == 1)
    }

    @Test func randomBytesAndMutationsNeverCrash() throws {
        let seed = try TestSeed.forTest()
        var generator = seed.generator()
        let alphabet = Array("[]{}=\"'.,#\n 0o1x:-_abcdefghijklmnopqrstuvwxyz\\\t\u{00e9}".utf8) + [0xFF, 0x00, 0x80]
        for round in 0..<300 {
            var bytes = Array(Self.valid.utf8)
            if round % 3 == 0 {
                bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            } else {
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet.randomElement(using: &generator)!
                }
            }
            let files = try ConfigurationFiles()
            try Data(bytes).write(to: URL(fileURLWithPath: files.system))
            _ = Result { () throws(ConfigurationError) in try files.load() }
        }
    }

    @Test func deepNestingIsAnError() throws {
        for text in [String(repeating: "[", count: 10_000), "a = " + String(repeating: "[", count: 10_000),
                     "a = " + String(repeating: "{b=", count: 5_000), String(repeating: "a.", count: 100_000) + "b = 1",
                     "[" + String(repeating: "a.", count: 100_000) + "b]"] {
            if case .success = try load(text) { Issue.record("nested garbage loaded") }
        }
    }
}
