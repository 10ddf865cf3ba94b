// Fuzz target for everything a Sony camera sends or a client reads from it: the status
// notifications, the advertisement's manufacturer data, the location format, and (for the
// simulated body) button commands and location fixes. Run by libFuzzer
// (scripts/fuzz) and over the committed corpus (FuzzCorpusTests). Whatever parses must encode
// back to the bytes it came from, when the message has one spelling: a trap here is a finding.

import CameraProtocols

func fuzzSony(_ input: [UInt8]) {

    if let status = try? Sony.Status(decoding: input), input.count == 3 {
        precondition(status.bytes == input, "status \(status) re-encodes differently")
    }
    if let command = try? Sony.ButtonCommand(decoding: input) {
        precondition(command.bytes == input, "command \(command) re-encodes differently")
    }
    if let advertisement = try? Sony.Advertisement(manufacturerData: input) {
        precondition(advertisement.bytes.count == 9, "advertisement \(advertisement) encodes to the wrong length")
    }
    _ = try? Sony.LocationFormat(decoding: input)
    if let fix = try? Sony.LocationFix(decoding: input) {
        precondition(try! Sony.LocationFix(decoding: fix.bytes) == fix, "fix \(fix) does not survive encoding")
    }
    _ = Sony.recognize(AdvertisementData(manufacturerData: [Sony.companyID: input]))
}
