import Testing
import UnleashedKit

@Suite("Negative numbers on a command line")
struct SignedArgumentsTests {
    @Test("negative numbers are told from options", arguments: [
        ("-33.8", true), ("-2/3", true), ("-33.9,151.2", true), ("-.5", true), ("-1", true),
        ("--demo", false), ("-h", false), ("-", false), ("--", false), ("33.8", false), ("-x1", false),
    ])
    func negative(argument: String, expected: Bool) {
        #expect(SignedArguments.isNegativeNumber(argument) == expected)
    }

    @Test("a value an option missed is joined to it with '='")
    func joined() throws {
        let hint = try #require(SignedArguments.hint(for: ["--demo", "--demo-seed", "-1", "status"], program: "unleashed",
                                                     optionMissingValue: "--demo-seed"))
        #expect(hint.contains("--demo-seed=-1"), "\(hint)")
    }

    @Test("a negative argument goes after --, with the whole command line to copy when it can be")
    func afterTerminator() throws {
        let hint = try #require(SignedArguments.hint(for: ["--demo", "runs", "show", "-3"], program: "unleashed"))
        #expect(hint.hasSuffix(": unleashed --demo runs show -- -3"), "\(hint)")
        let withOption = try #require(SignedArguments.hint(for: ["runs", "show", "-3", "--json"], program: "unleashed"))
        #expect(withOption.contains("put -- before it, after every option") && !withOption.contains(": unleashed"), "\(withOption)")
    }

    @Test("no hint without a negative number, or when it already follows --")
    func none() {
        #expect(SignedArguments.hint(for: ["--demo", "status", "--bogus"], program: "unleashed") == nil)
        #expect(SignedArguments.hint(for: ["geotag", "--", "-33.8", "151.2"], program: "unleashed") == nil)
    }
}
