import CommandCore
import Testing

/// `unleashed` answers only the command lines it recognises before parsing; every other one must
/// be left to swift-argument-parser.
struct QuickShootTests {
    private func recognised(_ arguments: String..., environment: [String: String] = [:]) -> QuickShoot? {
        QuickShoot(arguments: arguments, environment: environment)
    }

    @Test("shoot with --json, --count and --module, in any order and either spelling, is answered here")
    func recognisedLines() throws {
        let plain = try #require(recognised("shoot"))
        #expect(plain == QuickShoot(count: 1, json: false, module: nil))
        let before = try #require(recognised("--json", "--module", "b", "shoot", "--count", "3"))
        #expect(before == QuickShoot(count: 3, json: true, module: "b"))
        let joined = try #require(recognised("shoot", "--count=10000", "--module=F0:5E:D0:00:00:01"))
        #expect(joined == QuickShoot(count: 10_000, json: false, module: "F0:5E:D0:00:00:01"))
        #expect(recognised("shoot", "--module", "shoot")?.module == "shoot", "a value is a value, even one spelled like the command")
    }

    @Test("anything else is the parser's: help, rigs, direct and demo modes, bad or repeated values",
          arguments: [
              [], ["status"], ["shoot", "--help"], ["help", "shoot"], ["--version"], ["shoot", "shoot"],
              ["shoot", "--count", "0"], ["shoot", "--count", "10001"], ["shoot", "--count", "+5"], ["shoot", "--count", "٣"],
              ["shoot", "--count", "3", "--count", "4"], ["shoot", "--count"], ["shoot", "--count="], ["shoot", "--count", "x"],
              ["shoot", "--json", "--json"], ["shoot", "--json=true"], ["shoot", "--module"], ["shoot", "--module", "-x"],
              ["shoot", "--module="], ["shoot", "--camera", "a"], ["shoot", "--group", "ends"], ["shoot", "--all"],
              ["--direct", "shoot"], ["--demo", "shoot"], ["shoot", "--backend", "gphoto2"], ["shoot", "--"], ["shoot", "-c", "2"],
              ["shoot=1"], ["bulb", "2s"],
          ])
    func handedOver(_ arguments: [String]) {
        #expect(QuickShoot(arguments: arguments, environment: [:]) == nil, "\(arguments)")
    }

    @Test("demo mode set in the environment is the parser's, whatever its value says")
    func demoEnvironment() {
        #expect(recognised("shoot", environment: ["UNLEASHED_DEMO": "1"]) == nil)
        #expect(recognised("shoot", environment: ["UNLEASHED_DEMO": "no"]) == nil)
        #expect(recognised("shoot", environment: ["UNLEASHED_DEMO": ""]) != nil, "an empty variable is no variable")
    }
}
