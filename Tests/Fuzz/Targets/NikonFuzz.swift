// Fuzz target for every Nikon message that comes from the radio: the handshake's
// indications, the remote indication, the advertisement, and the button writes a simulated
// camera decodes. Run by libFuzzer
// (scripts/fuzz) and over the committed corpus (FuzzCorpusTests).
//
// Whatever decodes must encode back to the bytes it came from: a trap here is a finding.

import CameraProtocols

func fuzzNikon(_ value: [UInt8]) {
    for characteristic in [Nikon.pairing, Nikon.remoteIndication, Nikon.shutter] {
        switch try? Nikon.Indication.parse(value, on: characteristic) {
        case .pairing(let message)?:
            guard message.bytes == value else { fatalError("\(message) from \(value)") }
        case .remote(let bytes)?:
            guard bytes == value else { fatalError("remote \(value)") }
        case nil:
            break
        }
    }
    if let button = try? Nikon.RemoteButton(decoding: value), button.bytes != value { fatalError("button \(value)") }
    let advertisement = AdvertisementData(name: nil, serviceUUIDs: [Nikon.service], manufacturerData: [Nikon.companyID: value])
    if let camera = Nikon.recognize(advertisement), camera.pairing == .closed, camera.token != Array(value.prefix(4)) {
        fatalError("token \(camera.token) from \(value)")
    }
}
