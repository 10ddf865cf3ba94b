// libFuzzer target for every Fujifilm message that comes from the radio: the notifications, the
// secure status, the advertisement's manufacturer data, and the writes a simulated camera
// decodes. Built by scripts/fuzz against the CameraProtocols module.
//
// Byte 0 picks the characteristic a notification arrives on; the rest is the value. A value
// that decodes must encode back to the bytes it came from: a trap here is a finding.

import CameraProtocols

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    let value = Array(input.dropFirst())
    let characteristics = [Fujifilm.configured, Fujifilm.geotagRequest, Fujifilm.indication1, Fujifilm.indication2,
                           Fujifilm.indication3] + Fujifilm.secureRequiredNotifications + Fujifilm.secureOptionalNotifications
    let characteristic = characteristics[Int(selector) % characteristics.count]
    if let notification = try? Fujifilm.Notification.parse(value, on: characteristic) {
        let sent = notification.message
        guard sent.characteristic == characteristic, Array(value.prefix(2)) == sent.bytes else { fatalError("\(notification) from \(value)") }
    }
    if let status = try? Fujifilm.SecureStatus(decoding: value), status.acknowledgement.count != 4 { fatalError("status \(value)") }
    if let interval = try? Fujifilm.SyncInterval(decoding: value), interval.bytes != value { fatalError("interval \(value)") }
    if let action = try? Fujifilm.ShutterAction(decoding: value), action.bytes != value { fatalError("action \(value)") }
    if let fix = try? Fujifilm.GeotagFix(decoding: value), fix.bytes.count != Fujifilm.GeotagFix.length { fatalError("fix \(value)") }
    let advertisement = AdvertisementData(name: nil, serviceUUIDs: selector & 1 == 0 ? [Fujifilm.securePairService] : [],
                                          manufacturerData: [Fujifilm.companyID: value])
    if let camera = Fujifilm.recognize(advertisement), camera.brand != .fujifilm { fatalError("brand \(camera)") }
    return 0
}
