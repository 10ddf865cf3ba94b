// Fuzz target for everything a GoPro sends over the radio: the packet reassembler and
// every notification parser, plus the advertisement and the requests a simulated body reads.
// Run by libFuzzer (scripts/fuzz) and over the committed corpus (FuzzCorpusTests).
//
// Input layout: byte 0 picks the characteristic (see below); then packets, each as a 1-byte length and that
// many bytes, fed to one reassembler; every message it completes is parsed. The bytes after
// byte 0 are also parsed directly as one message. Whatever parses must re-encode to the same
// bytes: a trap here is a finding.

import CameraProtocols
import GATT

func fuzzGoPro(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    // A fixed choice, so that the committed corpus keeps reaching the characteristics it was
    // made for: the three of Control & Query by the selector modulo 3, as always, and camera
    // management's response for a selector from 0xF0.
    let controlAndQuery = [GoPro.commandResponse, GoPro.settingsResponse, GoPro.queryResponse]
    let characteristic = selector >= 0xF0 ? GoPro.networkManagementResponse : controlAndQuery[Int(selector) % controlAndQuery.count]
    let rest = Array(input.dropFirst())

    parse(rest, on: characteristic)
    _ = try? GoPro.Advertisement(manufacturerData: rest)
    for written in [GoPro.command, GoPro.settings, GoPro.query, GoPro.networkManagementCommand] {
        // A request read back must encode to a request read the same way (protobuf varints may
        // be written longer than needed, so the bytes themselves may differ).
        if let request = try? GoPro.Request(message: rest, on: written),
           (try? GoPro.Request(message: request.message, on: written)) != request {
            fatalError("request \(request) read from \(GoPro.hex(rest)) does not survive encoding")
        }
    }

    var reassembler = GoPro.Reassembler()
    var offset = 0
    while offset < rest.count {
        let length = Int(rest[offset])
        let packet = Array(rest[(offset + 1)..<min(rest.count, offset + 1 + length)])
        offset += 1 + length
        if let message = try? reassembler.accept(packet) { parse(message, on: characteristic) }
    }
}

/// Parses one message; a message that parses must encode back to itself.
private func parse(_ message: [UInt8], on characteristic: GATTCharacteristicID) {
    guard let notification = try? GoPro.Notification(message: message, on: characteristic) else { return }
    guard notification.message == message else {
        fatalError("\(GoPro.hex(message)) parsed as \(notification), which encodes as \(GoPro.hex(notification.message))")
    }
    switch notification {
    case .command(let response), .setting(let response):
        _ = try? GoPro.HardwareInfo(payload: response.payload)
        _ = try? GoPro.Version(response: response)
    case .query(let response):
        for value in response.values { _ = value.integer }
    case .protobuf(let protobuf):
        _ = try? protobuf.result()
        _ = try? GoPro.COHNStatus(body: protobuf.body)
    }
}
