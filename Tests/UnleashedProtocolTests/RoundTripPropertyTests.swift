import CameraKit
import PropertyBased
import Testing
@testable import UnleashedProtocol

/// Feeds packets to a fresh receiver and collects what comes out.
func receiveAll(_ packets: [[UInt8]], mtu: Int) throws -> (messages: [Message], errors: [ReceiveError]) {
    var receiver = try UnleashedV1().makeReceiver(mtu: mtu)
    var messages: [Message] = []
    var errors: [ReceiveError] = []
    for packet in packets {
        let received = receiver.receive(packet)
        errors += received.errors
        if let message = received.message { messages.append(message) }
    }
    return (messages, errors)
}

@Suite("Round trips over random messages and MTUs", .timeLimit(.minutes(5)))
struct RoundTripPropertyTests {
    @Test("encode, fragment, reassemble and decode give the message back")
    func packetsRoundTrip() async {
        await forAll(count: 2000, zip(MessageGen.message, MessageGen.mtu)) { message, mtu in
            let packets = try UnleashedV1().packets(for: message, mtu: mtu)
            #expect(packets.allSatisfy { !$0.isEmpty && $0.count <= mtu - 3 })
            let length = try message.encoded().count
            let payload = mtu - 3
            let afterStart = max(0, length + 2 - (payload - 3))
            let expectedCount = 1 + (afterStart + payload - 2) / (payload - 1)
            #expect(packets.count == expectedCount, "packet count formula of PROTOCOL.md §3.1")
            let (messages, errors) = try receiveAll(packets, mtu: mtu)
            #expect(errors.isEmpty)
            #expect(messages == [message])
        }
    }

    @Test("the JSON form reads back to the same message")
    func jsonRoundTrip() async {
        await forAll(count: 1000, MessageGen.message) { message in
            let decoded = try Message(json: message.json)
            #expect(decoded == message)
        }
    }

    @Test("bytes decode to a message that encodes to the same bytes")
    func bytesAreCanonical() async {
        await forAll(count: 1000, MessageGen.message) { message in
            let bytes = try message.encoded()
            let again = try Message(decoding: bytes).encoded()
            #expect(again == bytes)
        }
    }

    @Test("a flipped bit never delivers a different message")
    func corruptionIsDetected() async {
        let input = zip(MessageGen.message, MessageGen.mtu, Gen.int(in: 0...Int.max), Gen.int(in: 0..<8))
        await forAll(count: 2000, input) { message, mtu, position, bit in
            var packets = try UnleashedV1().packets(for: message, mtu: mtu)
            let packetIndex = position % packets.count
            let byteIndex = (position / packets.count) % packets[packetIndex].count
            packets[packetIndex][byteIndex] ^= 1 << bit
            var reassembler = try Reassembler(mtu: mtu)
            var delivered: [Message] = []
            var errors: [FramingError] = []
            for packet in packets {
                let step = reassembler.receive(packet)
                errors += step.errors
                if let bytes = step.message { delivered.append(try Message(decoding: bytes)) }
            }
            #expect(delivered.allSatisfy { $0 == message })
            if delivered.isEmpty {
                // Lost, never damaged: an error was reported, or the frame waits for more packets.
                #expect(!errors.isEmpty || reassembler.isInProgress)
            }
        }
    }

    @Test("a lost, repeated or reordered packet gives the documented outcome")
    func packetFaults() async throws {
        let message = Message(.response(.listSettings, .ok), id: 9, fields: Fields {
            $0.descriptors = [SettingDescriptor(setting: .iso, value: .iso(.auto),
                                                choices: (1...30).map { .iso(ISOSpeed(UInt32($0 * 100))!) })]
        })
        let packets = try UnleashedV1().packets(for: message, mtu: 23)
        #expect(packets.count > 4)

        var lost = packets
        lost.remove(at: 2)
        let afterLoss = try receiveAll(lost, mtu: 23)
        #expect(afterLoss.messages.isEmpty)
        #expect(afterLoss.errors.map(\.name) == ["sequenceGap"] + Array(repeating: "unexpectedContinuation", count: lost.count - 3))

        var reordered = packets
        reordered.swapAt(1, 2)
        #expect(try receiveAll(reordered, mtu: 23).errors.map(\.name).first == "sequenceGap")

        var repeated = packets
        repeated.insert(packets[3], at: 4)
        repeated.insert(packets[0], at: 1)
        let result = try receiveAll(repeated, mtu: 23)
        #expect(result.errors.isEmpty)
        #expect(result.messages == [message])

        let truncated = Array(packets.dropLast())
        let cut = try receiveAll(truncated, mtu: 23)
        #expect(cut.messages.isEmpty && cut.errors.isEmpty)

        let startLost = Array(packets.dropFirst())
        #expect(try receiveAll(startLost, mtu: 23).errors.first?.name == "unexpectedContinuation")
    }

    @Test("the receiver recovers: after any garbage, a good message still arrives")
    func recoveryAfterGarbage() async {
        let garbage = Gen.uint8().array(of: 0...40).array(of: 0...20)
        await forAll(count: 1000, zip(garbage, MessageGen.message, MessageGen.mtu)) { junk, message, mtu in
            var receiver = try UnleashedV1().makeReceiver(mtu: mtu)
            for packet in junk { _ = receiver.receive(packet) }
            var delivered: [Message] = []
            for packet in try UnleashedV1().packets(for: message, mtu: mtu) {
                if let received = receiver.receive(packet).message { delivered.append(received) }
            }
            #expect(delivered == [message])
        }
    }

    @Test("arbitrary packets never trap, and what they deliver is a valid message")
    func arbitraryInput() async {
        let packets = Gen.uint8().array(of: 0...520).array(of: 1...30)
        await forAll(count: 3000, zip(packets, MessageGen.mtu)) { packets, mtu in
            var receiver = try UnleashedV1().makeReceiver(mtu: mtu)
            for packet in packets {
                if let message = receiver.receive(packet).message {
                    let again = try Message(decoding: try message.encoded())
                    #expect(again == message)
                }
            }
        }
    }

    @Test("arbitrary message bytes decode or fail with a typed error")
    func arbitraryMessageBytes() async {
        let envelopes: [[UInt8]] = [[], [0x01, 0x00, 0x07, 0x06], [0x02, 0x00, 0x07, 0x04, 0x00], [0x03, 0x00, 0x01, 0x81]]
        let prefix = Gen.int(in: 0...3).map { envelopes[$0] }
        await forAll(count: 3000, zip(prefix, Gen.uint8().array(of: 0...300))) { prefix, body in
            let bytes = prefix + body
            let decoded: Message
            do throws(MessageDecodingError) {
                decoded = try Message(decoding: bytes)
            } catch {
                #expect(!error.name.isEmpty)
                return
            }
            let again = try Message(decoding: try decoded.encoded())
            #expect(again == decoded)
        }
    }
}
