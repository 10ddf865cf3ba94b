import CameraKit
import Testing
import UnleashedApp

@Suite struct SettingsListingTests {
    @Test("settings list: a long list of offered values is shortened to its ends and its count; read-only says so")
    func lines() {
        let isos = [100, 125, 160, 200, 250, 320, 400, 500, 640, 800].map { SettingValue.iso(ISOSpeed(UInt32($0))!) }
        let listing = SettingsListing.settings([
            SettingDescriptor(setting: .iso, value: .iso(ISOSpeed(400)!), choices: isos),
            SettingDescriptor(setting: .iso, value: .iso(ISOSpeed(400)!), choices: Array(isos.prefix(2)), readOnly: true),
        ])
        #expect(listing.lines[0].hasSuffix("100, 125, 160 ... 640, 800 (10 values)"))
        #expect(listing.lines[0].hasPrefix("iso" + String(repeating: " ", count: 19) + "400"))
        #expect(listing.lines[1].hasSuffix("read-only"))
        #expect(listing.json.arrayValue?.count == 2)
    }
}
