import Foundation
import JSON
import Testing
import UnleashedProtocol

/// One entry of `Protocol/vectors/*.json` (PROTOCOL.md §11.2).
struct GoldenVector: Sendable, CustomTestStringConvertible {
    let file: String
    let name: String
    let mtu: Int
    let message: JSONValue?
    let packets: [[UInt8]]
    let roundTrip: Bool
    let error: String?
    let incomplete: Bool

    var testDescription: String { "\(file): \(name)" }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")

    /// Every vector of every file; a file that cannot be read is a test failure, not an empty list.
    static let all: [GoldenVector] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.sorted().flatMap { file -> [GoldenVector] in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)),
                  let document = try? JSONDecoder().decode(JSONValue.self, from: data),
                  let vectors = document["vectors"]?.arrayValue
            else { return [GoldenVector(file: file, name: "(unreadable file)", mtu: 0, message: nil, packets: [], roundTrip: false, error: "unreadable", incomplete: false)] }
            return vectors.map { GoldenVector(file: file, json: $0) }
        }
    }()

    init(file: String, name: String, mtu: Int, message: JSONValue?, packets: [[UInt8]], roundTrip: Bool, error: String?, incomplete: Bool) {
        self.file = file
        self.name = name
        self.mtu = mtu
        self.message = message
        self.packets = packets
        self.roundTrip = roundTrip
        self.error = error
        self.incomplete = incomplete
    }

    init(file: String, json: JSONValue) {
        self.init(
            file: file,
            name: json["name"]?.stringValue ?? "(unnamed)",
            mtu: json["mtu"]?.integerValue.map(Int.init) ?? 0,
            message: json["message"],
            packets: (json["packets"]?.arrayValue ?? []).map { GoldenVector.bytes(fromHex: $0.stringValue ?? "zz") ?? [] },
            roundTrip: json["roundTrip"]?.boolValue ?? true,
            error: json["error"]?.stringValue,
            incomplete: json["incomplete"]?.boolValue ?? false)
    }

    static func bytes(fromHex hex: String) -> [UInt8]? {
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    var isValid: Bool { error == nil && !incomplete }
}

@Suite("Golden vectors in Protocol/vectors")
struct GoldenVectorTests {
    static let validVectors = GoldenVector.all.filter(\.isValid)
    static let invalidVectors = GoldenVector.all.filter { !$0.isValid }

    @Test("every valid vector decodes to its JSON and encodes back to its packets", arguments: validVectors)
    func valid(_ vector: GoldenVector) throws {
        let expected = try #require(vector.message)
        var receiver = try UnleashedV1().makeReceiver(mtu: vector.mtu)
        var messages: [Message] = []
        for packet in vector.packets {
            let received = receiver.receive(packet)
            #expect(received.errors.isEmpty, "\(received.errors)")
            if let message = received.message { messages.append(message) }
        }
        try #require(messages.count == 1)
        #expect(messages[0].json == expected)
        let fromJSON = try Message(json: expected)
        #expect(fromJSON == messages[0])
        if vector.roundTrip {
            #expect(try UnleashedV1().packets(for: fromJSON, mtu: vector.mtu) == vector.packets)
        }
    }

    @Test("every invalid vector gives its documented error and no message", arguments: invalidVectors)
    func invalid(_ vector: GoldenVector) throws {
        var receiver = try UnleashedV1().makeReceiver(mtu: vector.mtu)
        var errors: [String] = []
        var delivered = 0
        for packet in vector.packets {
            let received = receiver.receive(packet)
            errors += received.errors.map(\.name)
            if received.message != nil { delivered += 1 }
        }
        #expect(delivered == 0)
        if vector.incomplete {
            #expect(errors.isEmpty)
        } else {
            #expect(errors.first == vector.error)
        }
    }

    @Test("the vectors cover what PROTOCOL.md promises")
    func coverage() throws {
        let all = GoldenVector.all
        #expect(Set(all.map(\.name)).count == all.count, "vector names are unique")
        #expect(Self.validVectors.count >= 40)
        #expect(Self.invalidVectors.count >= 15)
        let messages = try Self.validVectors.map { try Message(json: try #require($0.message)) }
        for (opcode, name) in Opcode.known {
            #expect(messages.contains { $0.kind == .request(opcode) }, "a request vector for \(name)")
            #expect(messages.contains { $0.kind == .response(opcode, .ok) }, "an ok response vector for \(name)")
        }
        for (code, name) in EventCode.known {
            #expect(messages.contains { $0.kind == .event(code) }, "an event vector for \(name)")
        }
        for mtu in [23, 185, 247] {
            #expect(Self.validVectors.contains { $0.mtu == mtu && $0.packets.count > 1 }, "fragmentation at MTU \(mtu)")
        }
        #expect(try messages.contains { try $0.encoded().count == Framing.maximumMessageLength }, "a maximum-size message")
        let errorNames = Set(Self.invalidVectors.compactMap(\.error))
        for name in ["emptyPacket", "packetTooLarge", "unsupportedFraming", "truncatedHeader", "invalidLength",
                     "interrupted", "unexpectedContinuation", "sequenceGap", "lengthOverrun", "checksumMismatch",
                     "truncatedEnvelope", "unknownKind", "reservedId", "truncatedField", "invalidVarint",
                     "invalidFieldLength", "duplicateField", "missingField", "invalidValue"] {
            #expect(errorNames.contains(name), "an invalid vector for \(name)")
        }
    }
}
