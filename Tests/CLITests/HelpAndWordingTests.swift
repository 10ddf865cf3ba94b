import Foundation
import Testing

@Suite("help screens, documents and the wording of messages", .timeLimit(.minutes(2)))
struct HelpAndWordingTests {
    @Test("messages use the article and the number their words are read with")
    func grammar() async throws {
        let fixture = try RunFixture()
        defer { fixture.cleanUp() }
        let iso = try await fixture.run("--demo", "settings", "set", "iso", "lots")
        #expect(iso.stderr.contains("'lots' is not an ISO value"), "\(iso.stderr)")
        // The demo camera's 1/125 is an exposure of 8 ms.
        let short = try await fixture.run("--demo", "timelapse", "--interval", "5ms", "--frames", "2")
        #expect(short.status == 64)
        #expect(short.stderr.contains("(an 8ms exposure)"), "\(short.stderr)")
        #expect(try await fixture.run("--demo", "timelapse", "--interval", "200ms", "--frames", "1").status == 0)
        let status = try await fixture.run("--demo", "status")
        #expect(status.stdout.contains("1 shot triggered"), "\(status.stdout)")
        let runs = try await fixture.run("--demo", "runs", "show", "1")
        #expect(runs.stdout.contains(", 1 frame,"), "\(runs.stdout)")
    }
}

extension String {
    /// The text with every run of white space (a help screen's line breaks) as one space.
    var words: String { split(whereSeparator: \.isWhitespace).joined(separator: " ") }
}
