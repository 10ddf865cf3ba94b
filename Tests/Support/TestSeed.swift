public import Foundation
public import UnleashedKit

/// The seed of a test's random inputs: `UNLEASHED_TEST_SEED` when it is set (decimal, or hex
/// with `0x`), otherwise one drawn for this test. A test prints it as it begins
/// (``forTest(_:file:)``) and names it in its expectations' comments (`"\(seed)"`), so that a
/// failure, or a crash, says how to run the same inputs again:
///
///     UNLEASHED_TEST_SEED=1234 swift test --skip-build --filter NikonTests
///
/// No testing library is imported here: the benchmarks link this module too.
public struct TestSeed: Sendable, Hashable, CustomStringConvertible {
    /// The environment variable that sets the seed.
    public static let variable = "UNLEASHED_TEST_SEED"

    public let value: UInt64

    public init(_ value: UInt64) {
        self.value = value
    }

    /// The seed `environment` sets, or a new one when it sets none. Throws when the variable is
    /// set but is not a number: a mistyped replay must not quietly run other inputs.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(Unreadable) {
        guard let text = environment[Self.variable] else {
            value = UInt64.random(in: .min ... .max)
            return
        }
        guard let parsed = Self.parse(text) else { throw Unreadable(text: text) }
        value = parsed
    }

    /// The seed for the calling test, printed once with the test's name, so that even a crash
    /// (a test of a parser that must never trap) leaves the seed in the log.
    public static func forTest(_ test: String = #function, file: String = #fileID) throws(Unreadable) -> TestSeed {
        let seed = try TestSeed()
        print("\(file) \(test): \(seed)")
        return seed
    }

    /// `1234` or `0x4D2`; nil for anything else.
    public static func parse(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased().hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed, radix: 10)
    }

    /// What a failure's comment names: the seed and how to replay it.
    public var description: String {
        "seed \(value) (replay: \(Self.variable)=\(value))"
    }

    /// A generator that gives the same sequence for the same seed: UnleashedKit's SplitMix64.
    public func generator() -> SplitMix64 {
        SplitMix64(seed: value)
    }

    /// `UNLEASHED_TEST_SEED` is set to something that is not a seed.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        public let text: String

        public init(text: String) {
            self.text = text
        }

        public var description: String {
            "\(TestSeed.variable)=\"\(text)\" is not a seed: give a decimal number or a hex one with 0x"
        }
    }
}
