import Testing
import UnleashedKit

@Suite("Durations as people write them")
struct DurationTextTests {
    @Test("accepted forms", arguments: [
        ("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("1m30s", .seconds(90)), ("2h", .seconds(7200)),
        ("1h2m3s", .seconds(3723)), ("1s500ms", .milliseconds(1500)), ("0", .zero), ("0s", .zero), ("90m", .seconds(5400)),
    ])
    func accepted(text: String, expected: Duration) {
        #expect(parseDuration(text) == expected)
        #expect(parseDuration(expected.compactText) == expected, "\(expected.compactText) reads back")
    }

    @Test("refused forms", arguments: [
        "", "30", "-5s", "1.5s", "5x", "s", "30s1m", "1m1m", "10 s", "ms", "999999999999999h", "1h 2m", "+3s", "1ms5s",
    ])
    func refused(text: String) {
        #expect(parseDuration(text) == nil, "\(text)")
    }

    @Test("a duration written well but too long to count is told from one written wrong")
    func tooLong() throws {
        for text in ["999999999999999h", "9999999999999s", "2562047788016h", "1000000000000ms"] {
            #expect(throws: DurationTextError.tooLong, "\(text)") { try readDuration(text) }
        }
        for text in ["999999999999999x", "-5s", "1.5s", ""] {
            #expect(throws: DurationTextError.malformed, "\(text)") { try readDuration(text) }
        }
        #expect(try readDuration("999999999999h") == .seconds(999_999_999_999 * 3600))
    }
}
