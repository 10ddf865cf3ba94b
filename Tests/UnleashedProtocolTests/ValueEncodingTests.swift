import CameraKit
import Testing
@testable import UnleashedProtocol

@Suite("Value encodings and text forms (PROTOCOL.md §6, §11.1)")
struct ValueEncodingTests {
    @Test("CRC-16/CCITT-FALSE check value")
    func checksum() {
        #expect(CRC16.checksum(Array("123456789".utf8)) == 0x29B1)
        #expect(CRC16.checksum([]) == 0xFFFF)
    }

    @Test("shutter speeds: wire value, canonical text and typed spellings", arguments: [
        ("1/8000", 0x0001_1F40 as UInt32, "1/8000"),
        ("1/125", 0x0001_007D, "1/125"),
        ("0.3s", 0x0003_000A, "0.3s"),
        ("0\"3", 0x0003_000A, "0.3s"),
        ("2.5", 0x0005_0002, "2.5s"),
        ("30\"", 0x001E_0001, "30s"),
        ("30s", 0x001E_0001, "30s"),
        ("1/3", 0x0001_0003, "1/3"),
        ("0.25s", 0x0001_0004, "1/4"),
        ("2/3", 0x0002_0003, "2/3"),
        ("bulb", 0, "bulb"),
    ])
    func shutterSpeeds(typed: String, raw: UInt32, canonical: String) throws {
        let value = try #require(SettingValue(setting: .shutterSpeed, text: typed))
        #expect(value.wireValue == raw)
        #expect(value.text == canonical)
        #expect(SettingValue(setting: .shutterSpeed, wireValue: raw) == value)
    }

    @Test("shutter fractions that are not in lowest terms or half zero are invalid", arguments: [
        0x000A_0014 as UInt32, 0x0000_0001, 0x0001_0000, 0x0002_0002,
    ])
    func invalidShutterSpeeds(raw: UInt32) {
        #expect(SettingValue(setting: .shutterSpeed, wireValue: raw) == nil)
    }

    @Test("exposure compensation in 1/24 stops", arguments: [
        ("0", 0 as Int32, "0"), ("+1/3", 8, "+1/3"), ("-2/3", -16, "-2/3"), ("+1", 24, "+1"),
        ("+1 1/3", 32, "+1 1/3"), ("-2 1/2", -60, "-2 1/2"), ("+1/8", 3, "+1/8"), ("+0.3", 8, "+1/3"),
        ("-1.7", -40, "-1 2/3"), ("1.5", 36, "+1 1/2"), ("4/3", 32, "+1 1/3"), ("+5", 120, "+5"),
    ])
    func exposureCompensation(typed: String, twentyFourths: Int32, canonical: String) throws {
        let value = try #require(SettingValue(setting: .exposureCompensation, text: typed))
        #expect(value == .exposureCompensation(ExposureStops(twentyFourths: twentyFourths)))
        #expect(value.text == canonical)
        #expect(SettingValue(setting: .exposureCompensation, wireValue: UInt32(bitPattern: twentyFourths)) == value)
    }

    @Test("unreadable or out-of-range values are refused, not guessed", arguments: [
        (SettingID.exposureCompensation, "+16"), (.exposureCompensation, "1/5"), (.exposureCompensation, "+0.4"),
        (.iso, "fast"), (.iso, "0"), (.iso, "-100"), (.shutterSpeed, "1/0"), (.shutterSpeed, "soon"),
        (.shutterSpeed, "70000s"), (.aperture, "f/0.4"), (.aperture, "5.65"), (.whiteBalance, "neon"),
        (.imageFormat, ""),
    ])
    func unreadable(setting: SettingID, text: String) {
        #expect(SettingValue(setting: setting, text: text) == nil)
    }

    @Test("apertures and ISO")
    func aperturesAndISO() throws {
        #expect(SettingValue(setting: .aperture, text: "f/7.1")?.wireValue == 71)
        #expect(SettingValue(setting: .aperture, text: "F8")?.text == "f/8")
        #expect(SettingValue(setting: .aperture, text: "5.6")?.text == "f/5.6")
        #expect(SettingValue(setting: .aperture, wireValue: 4) == nil)
        #expect(SettingValue(setting: .iso, text: "auto")?.wireValue == 0)
        #expect(SettingValue(setting: .iso, text: "ISO 12800")?.text == "12800")
        #expect(SettingValue(setting: .iso, wireValue: 3_276_801) == nil)
        #expect(SettingValue(setting: .whiteBalance, wireValue: 9) == nil)
        #expect(SettingValue(setting: SettingID(wireCode: 0x42), wireValue: 7) == .other(setting: .unknown(0x42), code: 7))
    }

    @Test("setting ids and status enums carry the bytes of PROTOCOL.md §6.2 and §6.5")
    func enumerationBytes() {
        #expect(SettingID.known.map(\.wireCode) == Array(0x01...0x08))
        #expect(StorageState.known.map(\.wireCode) == Array(0...4))
        #expect(CameraPower.known.map(\.wireCode) == Array(0...2))
        #expect(ExposureMode.known.map(\.wireCode) == Array(0...6))
        #expect(FocusResult.known.map(\.wireCode) == Array(0...2))
        #expect(StorageState(wireCode: 1) == .noCard && CameraPower(wireCode: 2) == .sleeping && ExposureMode(wireCode: 5) == .bulb)
        #expect(SettingID(wireCode: 0x02) == .shutterSpeed && FocusResult(wireCode: 2) == .manualFocus)
    }

    @Test("a byte this version cannot name is kept, shown and sent back unchanged")
    func unknownBytes() {
        for code in UInt8.min...UInt8.max {
            #expect(SettingID(wireCode: code).wireCode == code)
            #expect(StorageState(wireCode: code).wireCode == code)
            #expect(CameraPower(wireCode: code).wireCode == code)
            #expect(ExposureMode(wireCode: code).wireCode == code)
            #expect(FocusResult(wireCode: code).wireCode == code)
        }
        #expect(SettingID(wireCode: 0x42) == .unknown(0x42) && SettingID(wireCode: 0x42).description == "unknown(66)")
        #expect(StorageState(wireCode: 9).description == "unknown(9)" && StorageState(wireCode: 9).name == nil)
    }

    @Test("capabilities carry the bits of PROTOCOL.md §6.6; a bit this version cannot name is kept and sent back")
    func capabilityBits() {
        #expect(Capabilities.known.map { $0.0.wireBits } == (0...9).map { UInt32(1) << UInt32($0) })
        #expect(Capabilities(wireBits: 0b101) == [.shoot, .bulb])
        #expect(Capabilities(wireBits: 1 << 9) == .scheduledFire)
        #expect(Capabilities(wireBits: 1 << 20 | 1) == [.shoot, .unknown(20)])
        #expect(Capabilities(wireBits: 1 << 20).unknownCodes == [20] && Capabilities(wireBits: 1 << 20).names.isEmpty)
        for bit in 0..<32 { #expect(Capabilities(wireBits: 1 << UInt32(bit)).wireBits == 1 << UInt32(bit)) }
        #expect(Capabilities(wireBits: .max).wireBits == .max)
    }

    @Test("enumerated setting values carry the numbers of PROTOCOL.md §6.3")
    func enumeratedSettingValues() {
        func numbers(_ setting: SettingID, _ values: [SettingValue]) -> [UInt32?] {
            values.map { value in SettingValue(setting: setting, wireValue: value.wireValue) == value ? value.wireValue : nil }
        }
        #expect(numbers(.whiteBalance, WhiteBalance.allCases.map(SettingValue.whiteBalance)) == Array(0...8))
        #expect(numbers(.driveMode, DriveMode.allCases.map(SettingValue.driveMode)) == Array(0...5))
        #expect(numbers(.focusMode, FocusMode.allCases.map(SettingValue.focusMode)) == Array(0...3))
        #expect(numbers(.imageFormat, ImageFormat.allCases.map(SettingValue.imageFormat)) == Array(0...3))
        #expect(SettingValue(setting: .whiteBalance, wireValue: 8) == .whiteBalance(.kelvin))
        #expect(SettingValue(setting: .imageFormat, wireValue: 3) == .imageFormat(.rawPlusJPEG))
        #expect(SettingValue(setting: .driveMode, wireValue: 6) == nil && SettingValue(setting: .focusMode, wireValue: 4) == nil)
    }

    @Test("the Info characteristic example of PROTOCOL.md §1.1")
    func infoCharacteristic() throws {
        let info = ModuleInfo(protocolVersions: 1...1, firmwareVersion: "1.0.0", hardwareRevision: "B", serialNumber: "SIM0001")
        let bytes: [UInt8] = [0x02, 0x01, 0x01, 0x03, 0x01, 0x01, 0x05, 0x05, 0x31, 0x2E, 0x30, 0x2E, 0x30,
                              0x06, 0x01, 0x42, 0x07, 0x07, 0x53, 0x49, 0x4D, 0x30, 0x30, 0x30, 0x31]
        #expect(try info.encoded() == bytes)
        #expect(try ModuleInfo(decoding: bytes + [0xE5, 0x02, 0xAA, 0xBB]) == info)
        #expect(throws: MessageDecodingError.missingField("serialNumber")) { try ModuleInfo(decoding: Array(bytes.prefix(16))) }
    }

    @Test("advertisement manufacturer data (PROTOCOL.md §2)")
    func advertisement() {
        let advertisement = ModuleAdvertisement(model: .canon, state: [.cameraAttached, .cameraOn, .pairingOpen])
        #expect(advertisement.manufacturerData == [0x01, 0x02, 0x07])
        #expect(ModuleAdvertisement(manufacturerData: [0x01, 0x02, 0xE7]) == advertisement)
        #expect(ModuleAdvertisement(manufacturerData: [0x02, 0x02, 0x07]) == nil)
        #expect(ModuleAdvertisement(manufacturerData: [0x01]) == nil)
    }

    @Test("times survive the wire and the JSON form at their extremes; beyond 2^53 ms they are refused")
    func wideIntegers() throws {
        for time: UInt64 in [0, Schema.maximumTime] {
            let message = Message(.request(.setTime), id: 1, fields: Fields {
                $0.utcTime = time
                $0.utcOffset = -720
            })
            #expect(try Message(decoding: message.encoded()) == message)
            #expect(try Message(json: message.json) == message)
        }
        #expect(throws: MessageEncodingError.self) {
            try Message(.request(.setTime), id: 1, fields: Fields {
                $0.utcTime = Schema.maximumTime + 1
                $0.utcOffset = 0
            }).encoded()
        }
    }

    @Test("encoding refuses messages that break their table")
    func encodingChecks() {
        #expect(throws: MessageEncodingError.missingField("value")) {
            try Message(.request(.setSetting), id: 1, fields: Fields { $0.setting = .iso }).encoded()
        }
        #expect(throws: MessageEncodingError.unexpectedField("busy")) {
            try Message(.request(.shoot), id: 1, fields: Fields { $0.busy = true }).encoded()
        }
        #expect(throws: MessageEncodingError.self) {
            try Message(.request(.setSetting), id: 1, fields: Fields {
                $0.setting = .iso
                $0.value = .aperture(Aperture(tenths: 56)!)
            }).encoded()
        }
        #expect(throws: MessageEncodingError.self) {
            try Message(.request(.shoot), id: 0).encoded()
        }
        #expect(throws: MessageEncodingError.invalidMTU(22)) { try Fragmenter(mtu: 22) }
        #expect(throws: MessageEncodingError.invalidMTU(518)) { try Reassembler(mtu: 518) }
    }
}
