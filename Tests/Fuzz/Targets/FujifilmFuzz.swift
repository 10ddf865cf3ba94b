// Fuzz target for every Fujifilm message that comes from the radio: the notifications (on
// each characteristic the remote subscribes to), the secure status, the advertisement's
// manufacturer data, and the writes a simulated camera decodes. Run by libFuzzer (scripts/fuzz),
// seeded from the from-camera golden vectors, and over the committed corpus (FuzzCorpusTests).
//
// A value that decodes must encode back to the bytes it came from: a trap here is a finding.

import CameraProtocols

func fuzzFujifilm(_ value: [UInt8]) {
    let characteristics = [Fujifilm.configured, Fujifilm.geotagRequest, Fujifilm.indication1, Fujifilm.indication2,
                           Fujifilm.indication3] + Fujifilm.secureRequiredNotifications + Fujifilm.secureOptionalNotifications
    for characteristic in characteristics {
        guard let notification = try? Fujifilm.Notification.parse(value, on: characteristic) else { continue }
        let sent = notification.message
        guard sent.characteristic == characteristic, Array(value.prefix(2)) == sent.bytes else { fatalError("\(notification) from \(value)") }
    }
    if let status = try? Fujifilm.SecureStatus(decoding: value), status.acknowledgement.count != 4 { fatalError("status \(value)") }
    if let interval = try? Fujifilm.SyncInterval(decoding: value), interval.bytes != value { fatalError("interval \(value)") }
    if let action = try? Fujifilm.ShutterAction(decoding: value), action.bytes != value { fatalError("action \(value)") }
    if let fix = try? Fujifilm.GeotagFix(decoding: value), fix.bytes.count != Fujifilm.GeotagFix.length { fatalError("fix \(value)") }
    // An advertisement's manufacturer data, after the company identifier (seeds carry it first).
    let manufacturer = value.count >= 2 && value[0] == 0xD8 && value[1] == 0x04 ? Array(value.dropFirst(2)) : value
    for services in [[], [Fujifilm.securePairService], [Fujifilm.secureAdvertisedService], Fujifilm.basicAdvertisedServices] {
        let advertisement = AdvertisementData(name: nil, serviceUUIDs: services, manufacturerData: [Fujifilm.companyID: manufacturer])
        if let camera = Fujifilm.recognize(advertisement), camera.brand != .fujifilm || !(camera.token.isEmpty || camera.token == Array(manufacturer.dropFirst())) {
            fatalError("\(camera) from \(value)")
        }
    }
}
