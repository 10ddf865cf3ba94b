import Foundation
import Testing
import UnleashedKit

/// The grammar of durations and times of day, held to the cases the web app is held to too
/// (Tests/Fixtures/text-grammar.json), so that the page and the daemon read the same text alike.
@Suite("Durations and times of day as people write them")
struct DurationTextTests {
    /// One case of the shared file: the text and what it reads as.
    struct Case: CustomTestStringConvertible, Sendable {
        let text: String
        let expected: JSONExpectation
        var testDescription: String { "'\(text)'" }
    }

    /// What a case reads as: a number (milliseconds, or a time's fields), a refusal, or a
    /// duration written well but too long.
    enum JSONExpectation: Sendable {
        case value([Int64])
        case refused
        case tooLong
    }

    static let cases: [String: [Case]] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures/text-grammar.json")
        guard let data = try? Data(contentsOf: url),
              let file = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        var cases: [String: [Case]] = [:]
        for key in ["durations", "timesOfDay"] {
            cases[key] = (file[key] as? [[Any]] ?? []).map { pair in
                let expected: JSONExpectation = switch pair[1] {
                case let number as NSNumber: .value([number.int64Value])
                case let fields as [NSNumber]: .value(fields.map(\.int64Value))
                case let word as String where word == "tooLong": .tooLong
                default: .refused
                }
                return Case(text: pair[0] as? String ?? "", expected: expected)
            }
        }
        return cases
    }()

    @Test("the shared cases are there")
    func casesRead() {
        #expect(Self.cases["durations", default: []].count > 40)
        #expect(Self.cases["timesOfDay", default: []].count > 15)
    }

    @Test("durations read as the shared cases say", arguments: Self.cases["durations", default: []])
    func duration(_ example: Case) {
        switch example.expected {
        case .value(let milliseconds):
            #expect(parseDuration(example.text) == .milliseconds(milliseconds[0]))
        case .refused:
            #expect(throws: DurationTextError.malformed) { try readDuration(example.text) }
        case .tooLong:
            #expect(throws: DurationTextError.tooLong) { try readDuration(example.text) }
        }
    }

    @Test("times of day read as the shared cases say", arguments: Self.cases["timesOfDay", default: []])
    func timeOfDay(_ example: Case) {
        let read = TimeOfDay(example.text).map { [Int64($0.hour), Int64($0.minute), Int64($0.second)] }
        switch example.expected {
        case .value(let fields): #expect(read == fields)
        default: #expect(read == nil)
        }
    }

    @Test("a duration's compact text reads back as the duration", arguments: [
        Duration.milliseconds(250), .seconds(30), .seconds(90), .seconds(7200), .seconds(3723), .milliseconds(1500), .zero,
    ])
    func compactText(_ duration: Duration) {
        #expect(parseDuration(duration.compactText) == duration, "\(duration.compactText)")
    }
}
