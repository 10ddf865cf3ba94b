import CommandCore
import Testing

/// `unleashed` answers only the command lines it recognises before parsing; every other one must
/// be left to swift-argument-parser.
struct QuickShootTests {
    private func recognised(_ arguments: String..., environment: [String: String] = [:]) -> QuickShoot? {
        QuickShoot(arguments: arguments, environment: environment)
    }

    @Test("shoot with --json and --module before or after it, --count after it, in either spelling, is answered here")
    func recognisedLines() throws {
        let plain = try #require(recognised("shoot"))
        #expect(plain == QuickShoot(count: 1, json: false, module: nil))
        let before = try #require(recognised("--json", "--module", "b", "shoot", "--count", "3"))
        #expect(recognised("shoot", "--count", "2", "--json", "--module", "b") == QuickShoot(count: 2, json: true, module: "b"))
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
              ["shoot=1"], ["bulb", "2s"], ["--count", "3", "shoot"], ["--count=3", "shoot"],
          ])
    func handedOver(_ arguments: [String]) {
        #expect(QuickShoot(arguments: arguments, environment: [:]) == nil, "\(arguments)")
    }

    @Test("demo mode asked for in the environment is the parser's; any other value of the variable is not demo mode there either")
    func demoEnvironment() {
        for demo in ["1", "TRUE", "yes"] {
            #expect(recognised("shoot", environment: ["UNLEASHED_DEMO": demo]) == nil, "\(demo)")
        }
        for other in ["", "0", "no"] {
            #expect(recognised("shoot", environment: ["UNLEASHED_DEMO": other]) != nil, "\(other)")
        }
    }
}
