import Foundation
import Testing

/// The repository, for the documents a test holds the program to.
private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

@Suite("help screens, documents and the wording of messages", .timeLimit(.minutes(2)))
struct HelpAndWordingTests {
    @Test("each command's help leaves out the global options; `help options` and --help-hidden show them, --help says where")
    func globalOptionsHelp() async throws {
        let cli = CLI()
        let globals = ["--demo", "--direct", "--json", "--demo-profile", "--demo-seed", "--demo-faults", "--demo-sky", "--adapter",
                       "--module", "--scan-timeout", "--backend", "--port", "--camera-model", "--download", "--filename"]
        let shoot = try await cli.run("shoot", "--help")
        #expect(shoot.status == 0)
        #expect(shoot.stdout.contains("--count"))
        for option in ["--demo-faults", "--scan-timeout", "--filename", "--demo-sky"] {
            #expect(!shoot.stdout.contains(option), "\(option) in shoot --help")
        }
        for arguments in [["help", "options"], ["options"], ["options", "--help"]] {
            let options = try await cli.run(arguments: arguments)
            #expect(options.status == 0)
            #expect(options.stdout.contains("GLOBAL OPTIONS"), "\(arguments): \(options.stdout)")
            for option in globals { #expect(options.stdout.contains(option), "\(option) in \(arguments)") }
        }
        let hidden = try await cli.run("shoot", "--help-hidden")
        for option in globals { #expect(hidden.stdout.contains(option), "\(option) in shoot --help-hidden") }
        let root = try await cli.run("--help")
        #expect(root.stdout.words.contains("`unleashed help options` describes them all"), "\(root.stdout)")
        #expect(!root.stdout.contains("--demo-faults"))
    }

    @Test("the version in the documents' examples is the program's")
    func versions() async throws {
        let version = try await CLI().run("--version").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.split(separator: ".").count == 3, "\(version)")
        var found = 0
        for path in ["docs/daemon.md", "docs/api/README.md", "docs/api/openapi.yaml"] {
            let text = try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
            for pattern in [#""version":\s*"([0-9.]+)""#, #"^\s+version: ([0-9]+\.[0-9]+\.[0-9]+)\s*$"#] {
                let expression = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
                for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    let value = String(text[Range(match.range(at: 1), in: text)!])
                    #expect(value == version, "\(path) shows version \(value)")
                    found += 1
                }
            }
        }
        #expect(found >= 4)
    }

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

    @Test("the user guide's 'Not yet' lines are not about what the program does")
    func notYet() throws {
        let guide = try String(contentsOf: repository.appendingPathComponent("docs/user-guide.md"), encoding: .utf8)
        // Rigs fire on the modules' own clocks (the scheduledFire capability) since it was added.
        #expect(guide.contains("scheduledFire"))
        #expect(!guide.contains("Not yet: a fire time scheduled on each module's own clock"))
    }
}

extension String {
    /// The text with every run of white space (a help screen's line breaks) as one space.
    var words: String { split(whereSeparator: \.isWhitespace).joined(separator: " ") }
}
