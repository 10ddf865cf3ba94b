import Testing
import UnleashedTestSupport

@Suite("A test's seed: read from UNLEASHED_TEST_SEED or drawn, and replayable")
struct TestSeedTests {
    @Test("the same seed gives the same sequence, another seed another one")
    func sameSeedSameSequence() {
        var first = TestSeed(0x5EED).generator(), second = TestSeed(0x5EED).generator(), other = TestSeed(0x5EEE).generator()
        let a = (0..<64).map { _ in first.next() }
        let b = (0..<64).map { _ in second.next() }
        let c = (0..<64).map { _ in other.next() }
        #expect(a == b)
        #expect(a != c)
        // Ranged draws go through the same generator, so they repeat too.
        var third = TestSeed(0x5EED).generator(), fourth = TestSeed(0x5EED).generator()
        #expect((0..<64).map { _ in Int.random(in: 0...1000, using: &third) } == (0..<64).map { _ in Int.random(in: 0...1000, using: &fourth) })
    }

    @Test("the variable is read, in decimal or 0x hex")
    func variableIsRead() throws {
        #expect(try TestSeed(environment: ["UNLEASHED_TEST_SEED": "1234"]).value == 1234)
        #expect(try TestSeed(environment: ["UNLEASHED_TEST_SEED": "0x4D2"]).value == 1234)
        #expect(try TestSeed(environment: ["UNLEASHED_TEST_SEED": "0X4d2"]).value == 1234)
        #expect(try TestSeed(environment: ["UNLEASHED_TEST_SEED": "18446744073709551615"]).value == .max)
        #expect(try TestSeed(environment: ["UNLEASHED_TEST_SEED": " 7 "]).value == 7)
    }

    @Test("a variable that is not a seed is an error naming it, not another seed", arguments: ["", "seed", "-1", "0x", "12ab", "18446744073709551616"])
    func unreadableVariable(text: String) {
        #expect(throws: TestSeed.Unreadable(text: text)) { try TestSeed(environment: ["UNLEASHED_TEST_SEED": text]) }
        #expect(TestSeed.Unreadable(text: text).description.contains("UNLEASHED_TEST_SEED=\"\(text)\""))
    }

    @Test("without the variable a seed is drawn: two draws differ")
    func drawnWithoutVariable() throws {
        // Two 64-bit draws are equal once in 2^64 runs.
        #expect(try TestSeed(environment: [:]) != TestSeed(environment: [:]))
    }

    @Test("what a failure names is the seed and how to replay it")
    func description() {
        #expect("\(TestSeed(99))" == "seed 99 (replay: UNLEASHED_TEST_SEED=99)")
    }
}
