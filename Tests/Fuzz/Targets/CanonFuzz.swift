// Fuzz target for everything a Canon camera sends (pairing answers, shooting states,
// location states) and, for the simulated body, every write it reads (remote control bytes,
// names, handshake writes, location fixes). Run by libFuzzer (scripts/fuzz) and over the
// committed corpus (FuzzCorpusTests). Whatever parses must encode back to the bytes it came
// from: a trap here is a finding.

import CameraProtocols

func fuzzCanon(_ input: [UInt8]) {

    if let answer = try? Canon.PairingAnswer(decoding: input) { precondition(answer.bytes == input) }
    if let state = try? Canon.ShootingState(decoding: input) { precondition(state.bytes == input) }
    if let state = try? Canon.LocationState(decoding: input) { precondition(state.bytes == Array(input.prefix(1))) }
    if let control = try? Canon.RemoteControl(decoding: input) { precondition(control.bytes == input) }
    if let identify = try? Canon.RemoteIdentify(decoding: input) { precondition(identify.bytes == input) }
    if let command = try? Canon.SessionCommand(decoding: input) { precondition(command.bytes == input) }
    if let button = try? Canon.SmartShutter(decoding: input) { precondition(button.bytes == input) }
    for characteristic in [Canon.handshakeName, Canon.handshakeControl] {
        if let message = try? Canon.SmartIdentify(decoding: input, on: characteristic) {
            precondition(message.characteristic == characteristic)
            _ = message.bytes
        }
    }
    if let fix = try? Canon.GeoFix(decoding: input) {
        // The letters follow the numbers' signs on encoding; a fix whose letters disagree (or a
        // NaN) still decodes, so only its numbers must survive.
        let again = try! Canon.GeoFix(decoding: fix.bytes)
        precondition(again.unixSeconds == fix.unixSeconds && again.latitude.bitPattern == fix.latitude.bitPattern)
    }
    _ = Canon.recognize(AdvertisementData(name: String(decoding: input, as: UTF8.self)))
}
