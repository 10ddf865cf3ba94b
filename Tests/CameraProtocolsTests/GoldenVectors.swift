import Foundation
import Testing

/// One brand's golden vectors, `Protocol/cameras/<brand>.json`: byte sequences from public
/// documents and implementations, each with its source.
struct GoldenVectorFile: Decodable {
    struct Vector: Decodable {
        /// What the bytes are, unique in the file; the brand's tests look vectors up by it.
        let name: String
        /// `to-camera` or `from-camera`.
        let direction: String
        /// The characteristic the bytes are written to or notified on (UUID), or null.
        let characteristic: String?
        /// The bytes, hex pairs separated by spaces.
        let hex: String
        let meaning: String
        /// Repository and path, or document and section.
        let source: String

        var bytes: [UInt8] {
            hex.split(separator: " ").map { UInt8($0, radix: 16)! }
        }
    }

    let brand: String
    let vectors: [Vector]

    static func load(_ brand: String) throws -> GoldenVectorFile {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocol/cameras/\(brand).json")
        return try JSONDecoder().decode(GoldenVectorFile.self, from: Data(contentsOf: url))
    }

    /// The vector called `name`; fails the test when there is none.
    func vector(_ name: String) throws -> Vector {
        try #require(vectors.first { $0.name == name }, "no vector '\(name)' in \(brand).json")
    }

    func bytes(_ name: String) throws -> [UInt8] { try vector(name).bytes }
}

@Suite struct GoldenVectorFileTests {
    /// Every brand's file is readable, names each vector once, cites a source for each, and
    /// writes its bytes as hex pairs.
    @Test(arguments: ["gopro", "sony", "canon", "fujifilm", "nikon"])
    func everyVectorIsWellFormedAndSourced(brand: String) throws {
        let file = try GoldenVectorFile.load(brand)
        #expect(file.brand == brand)
        #expect(!file.vectors.isEmpty)
        #expect(Set(file.vectors.map(\.name)).count == file.vectors.count, "vector names repeat")
        for vector in file.vectors {
            #expect(["to-camera", "from-camera"].contains(vector.direction), "\(vector.name): direction")
            #expect(vector.source.count > 10, "\(vector.name): no source")
            #expect(vector.hex.split(separator: " ").allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }, "\(vector.name): hex")
        }
    }
}
