// Fuzz target for everything that parses bytes from the radio: the reassembler and the
// message decoder. Run by libFuzzer (scripts/fuzz) and over the committed corpus (FuzzCorpusTests).
//
// Input layout: byte 0 picks the MTU (23 + 2 * byte, at most 517); then packets, each as a
// 2-byte big-endian length and that many bytes. The same bytes after byte 0 are also decoded
// directly as one message. Whatever decodes must re-encode to an equal message: a trap here is
// a finding.

import UnleashedProtocol

func fuzzProtocol(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    let mtu = min(Framing.mtuRange.upperBound, Framing.mtuRange.lowerBound + 2 * Int(selector))
    let rest = Array(input.dropFirst())

    if let message = try? Message(decoding: rest) { checkRoundTrip(message, mtu: mtu) }

    guard var receiver = try? UnleashedV1().makeReceiver(mtu: mtu) else { fatalError("MTU \(mtu) refused") }
    var offset = 0
    while offset + 2 <= rest.count {
        let length = Int(rest[offset]) << 8 | Int(rest[offset + 1])
        let packet = Array(rest[(offset + 2)..<min(rest.count, offset + 2 + length)])
        offset += 2 + length
        let received = receiver.receive(packet)
        for error in received.errors where error.name.isEmpty { fatalError("unnamed error \(error)") }
        if let message = received.message { checkRoundTrip(message, mtu: mtu) }
    }
}

/// A decoded message must survive encoding, fragmenting, reassembling, decoding and its JSON form.
private func checkRoundTrip(_ message: Message, mtu: Int) {
    guard let packets = try? UnleashedV1().packets(for: message, mtu: mtu) else {
        fatalError("decoded message does not encode: \(message)")
    }
    guard var receiver = try? UnleashedV1().makeReceiver(mtu: mtu) else { fatalError("MTU \(mtu) refused") }
    var delivered: [Message] = []
    for packet in packets {
        let received = receiver.receive(packet)
        precondition(received.errors.isEmpty, "own packets rejected: \(received.errors)")
        if let again = received.message { delivered.append(again) }
    }
    precondition(delivered == [message], "round trip changed \(message) into \(delivered)")
    precondition((try? Message(json: message.json)) == message, "JSON form changed \(message)")
}
