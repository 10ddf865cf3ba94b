import Foundation
import FuzzTargets
import Testing

/// Every input of each fuzz target's committed corpus (Tests/Fuzz/corpus/<target>), run through
/// the target in the ordinary debug build: what libFuzzer once covered stays covered, and an
/// input that found a bug stays fixed. The corpus grows and is minimised by `scripts/fuzz`
/// (`make check-long` fuzzes each target for 5 minutes); a trap here names its target, and
/// `scripts/fuzz replay TARGET` finds the input.
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus")

    @Test(arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        // A corpus that went missing or was emptied by mistake fails here rather than passing.
        try #require(names.count >= 10, "\(directory.path) holds \(names.count) inputs")
        var bytes = 0
        for name in names {
            let input = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            bytes += input.count
            target.run(input)
        }
        print("fuzz corpus \(target.rawValue): \(names.count) inputs, \(bytes) bytes")
    }
}
