@testable import CameraKit
import PropertyBased
@testable import UnleashedProtocol

/// Random valid messages of every kind, for round-trip properties.
enum MessageGen {
    /// Any message this version can encode: every opcode, status and event code, plus unknown
    /// codes (which carry no fields).
    static let message = Generator<Message, Shrink.None<Message>> { rng in
        randomMessage(using: &rng)
    }

    /// An ATT MTU anywhere in 23...517.
    static let mtu = Gen.int(in: Framing.mtuRange)

    static func randomMessage<R: RandomNumberGenerator>(using rng: inout R) -> Message {
        let kind: Message.Kind
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: kind = .request(opcode(using: &rng))
        case 1: kind = .response(opcode(using: &rng), status(using: &rng))
        default: kind = .event(eventCode(using: &rng))
        }
        let id = UInt16.random(in: 1...UInt16.max, using: &rng)
        var fields = Fields()
        for rule in Schema.rules(for: kind) {
            switch rule.presence {
            case .required: fill(rule.tag, in: &fields, using: &rng)
            case .optional: if Bool.random(using: &rng) { fill(rule.tag, in: &fields, using: &rng) }
            case .repeated:
                for _ in 0..<Int.random(in: 0...4, using: &rng) { fields.descriptors.append(descriptor(using: &rng)) }
            }
        }
        return Message(kind, id: id, fields: fields)
    }

    static func opcode<R: RandomNumberGenerator>(using rng: inout R) -> Opcode {
        Int.random(in: 0..<10, using: &rng) == 0 ? Opcode(rawValue: .random(in: 0x40...0x7F, using: &rng)) : Opcode.known.randomElement(using: &rng)!.0
    }

    static func eventCode<R: RandomNumberGenerator>(using rng: inout R) -> EventCode {
        Int.random(in: 0..<10, using: &rng) == 0 ? EventCode(rawValue: .random(in: 0xA0...0xFF, using: &rng)) : EventCode.known.randomElement(using: &rng)!.0
    }

    static func status<R: RandomNumberGenerator>(using rng: inout R) -> StatusCode {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5: .ok
        case 5: StatusCode(rawValue: .random(in: 0x08...0xFF, using: &rng))
        default: StatusCode.known.randomElement(using: &rng)!.0
        }
    }

    static func text<R: RandomNumberGenerator>(maximumBytes: Int, using rng: inout R) -> String {
        let alphabet: [Character] = ["a", "Z", "0", " ", "-", ".", "é", "ß", "ø", "日", "本", "📷", "\u{0}"]
        var result = ""
        while true {
            let next = alphabet.randomElement(using: &rng)!
            if result.utf8.count + String(next).utf8.count > maximumBytes || Int.random(in: 0..<12, using: &rng) == 0 {
                return result
            }
            result.append(next)
        }
    }

    static func settingValue<R: RandomNumberGenerator>(of setting: SettingID, using rng: inout R) -> SettingValue {
        switch setting {
        case .iso: return .iso(Bool.random(using: &rng) ? .auto : ISOSpeed(.random(in: ISOSpeed.range, using: &rng))!)
        case .shutterSpeed:
            if Int.random(in: 0..<8, using: &rng) == 0 { return .shutterSpeed(.bulb) }
            return .shutterSpeed(ShutterSpeed(seconds: .random(in: 1...65535, using: &rng), per: .random(in: 1...65535, using: &rng))
                ?? ShutterSpeed(seconds: 1, per: 125)!)
        case .aperture: return .aperture(Aperture(tenths: .random(in: Aperture.range, using: &rng))!)
        case .exposureCompensation:
            return .exposureCompensation(ExposureStops(twentyFourths: .random(in: SettingValue.exposureCompensationRange, using: &rng)))
        case .whiteBalance: return .whiteBalance(WhiteBalance.allCases.randomElement(using: &rng)!)
        case .driveMode: return .driveMode(DriveMode.allCases.randomElement(using: &rng)!)
        case .focusMode: return .focusMode(FocusMode.allCases.randomElement(using: &rng)!)
        case .imageFormat: return .imageFormat(ImageFormat.allCases.randomElement(using: &rng)!)
        default: return .other(setting: setting, code: .random(in: 0...UInt32.max, using: &rng))
        }
    }

    static func settingID<R: RandomNumberGenerator>(using rng: inout R) -> SettingID {
        Int.random(in: 0..<10, using: &rng) == 0 ? SettingID(wireCode: .random(in: 0x09...0xFF, using: &rng)) : SettingID.known.randomElement(using: &rng)!
    }

    static func descriptor<R: RandomNumberGenerator>(using rng: inout R) -> SettingDescriptor {
        let setting = settingID(using: &rng)
        let choices = (0..<Int.random(in: 0...40, using: &rng)).map { _ in settingValue(of: setting, using: &rng) }
        return SettingDescriptor(setting: setting, value: settingValue(of: setting, using: &rng), choices: choices, readOnly: .random(using: &rng))
    }

    static func enumeration<E: WireEnumeration, R: RandomNumberGenerator>(_: E.Type, using rng: inout R) -> E {
        E(wireCode: .random(in: 0...UInt8.max, using: &rng))
    }

    /// Sets one field to a random value that its type and range allow.
    static func fill<R: RandomNumberGenerator>(_ tag: FieldTag, in fields: inout Fields, using rng: inout R) {
        switch tag {
        case .protocolVersion: fields.protocolVersion = .random(in: 1...UInt8.max, using: &rng)
        case .minProtocolVersion:
            let low = UInt8.random(in: 1...UInt8.max, using: &rng)
            fields.minProtocolVersion = low
            fields.maxProtocolVersion = .random(in: low...UInt8.max, using: &rng)
        case .maxProtocolVersion: if fields.maxProtocolVersion == nil { fill(.minProtocolVersion, in: &fields, using: &rng) }
        case .clientName: fields.clientName = text(maximumBytes: 32, using: &rng)
        case .firmwareVersion: fields.firmwareVersion = text(maximumBytes: 32, using: &rng)
        case .hardwareRevision: fields.hardwareRevision = text(maximumBytes: 32, using: &rng)
        case .serialNumber: fields.serialNumber = text(maximumBytes: 32, using: &rng)
        case .capabilities: fields.capabilities = Capabilities(wireBits: .random(in: 0...UInt32.max, using: &rng))
        case .cameraModel: fields.cameraModel = text(maximumBytes: 64, using: &rng)
        case .uptime: fields.uptime = .random(in: 0...UInt32.max, using: &rng)
        case .uptimeMicros: fields.uptimeMicros = .random(in: 0...Schema.maximumTime, using: &rng)
        case .moduleBattery: fields.moduleBattery = .random(in: 0...100, using: &rng)
        case .cameraBattery: fields.cameraBattery = .random(in: 0...100, using: &rng)
        case .storageState: fields.storageState = enumeration(StorageState.self, using: &rng)
        case .shotsRemaining: fields.shotsRemaining = .random(in: 0...UInt32.max, using: &rng)
        case .cameraPower: fields.cameraPower = enumeration(CameraPower.self, using: &rng)
        case .exposureMode: fields.exposureMode = enumeration(ExposureMode.self, using: &rng)
        case .meteredEV: fields.meteredEV = ExposureStops(twentyFourths: .random(in: -1440...1440, using: &rng))
        case .busy: fields.busy = .random(using: &rng)
        case .shotCounter: fields.shotCounter = .random(in: 0...UInt32.max, using: &rng)
        case .setting: fields.setting = settingID(using: &rng)
        case .value: fields.value = settingValue(of: fields.setting!, using: &rng)
        case .choices, .descriptor, .readOnly: break
        case .focusResult: fields.focusResult = enumeration(FocusResult.self, using: &rng)
        case .hold: fields.hold = .random(using: &rng)
        case .duration: fields.duration = .random(in: 0...86_400_000, using: &rng)
        case .cameraTime: fields.cameraTime = .random(in: 0...Schema.maximumTime, using: &rng)
        case .utcTime: fields.utcTime = .random(in: 0...Schema.maximumTime, using: &rng)
        case .utcOffset: fields.utcOffset = .random(in: -720...840, using: &rng)
        case .latitude: fields.latitude = .random(in: -900_000_000...900_000_000, using: &rng)
        case .longitude: fields.longitude = .random(in: -1_800_000_000...1_800_000_000, using: &rng)
        case .altitude: fields.altitude = .random(in: -100_000_000...100_000_000, using: &rng)
        case .statusCode: fields.statusCode = enumeration(StatusCode.self, using: &rng)
        case .errorMessage: fields.errorMessage = text(maximumBytes: 200, using: &rng)
        case .fireAt: fields.fireAt = .random(in: 0...Schema.maximumTime, using: &rng)
        }
    }
}
