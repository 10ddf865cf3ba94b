import CameraKit
import Foundation
import NIOCore
import UnleashedProtocol
import UnleashedSimulator

/// A PTP device property value: every integer type fits an `Int64`; strings are PTP strings.
enum PropertyValue: Hashable, Sendable {
    case integer(Int64)
    case string(String)
}

/// The PTP data type codes the simulated properties use.
enum PTPDataType {
    static let uint8: UInt16 = 0x0002
    static let int16: UInt16 = 0x0003
    static let uint16: UInt16 = 0x0004
    static let uint32: UInt16 = 0x0006
    static let string: UInt16 = 0xFFFF
}

/// One device property as GetDevicePropDesc describes it.
struct DeviceProperty: Sendable {
    enum Form: Sendable {
        case none
        case range(min: Int64, max: Int64, step: Int64)
        case enumeration([PropertyValue])
    }

    let code: UInt16
    let dataType: UInt16
    let writable: Bool
    let factoryDefault: PropertyValue
    var current: PropertyValue
    let form: Form

    /// Whether `value` is one the camera accepts for this property.
    func offers(_ value: PropertyValue) -> Bool {
        switch form {
        case .none: true
        case .range(let min, let max, let step):
            if case .integer(let number) = value { (min...max).contains(number) && (number - min) % Swift.max(step, 1) == 0 } else { false }
        case .enumeration(let values): values.contains(value)
        }
    }

    /// The GetDevicePropDesc dataset.
    func writeDescription(to buffer: inout ByteBuffer) {
        buffer.writeLE(code)
        buffer.writeLE(dataType)
        buffer.writeLE(UInt8(writable ? 1 : 0))
        write(factoryDefault, to: &buffer)
        write(current, to: &buffer)
        switch form {
        case .none:
            buffer.writeLE(UInt8(0))
        case .range(let min, let max, let step):
            buffer.writeLE(UInt8(1))
            for bound in [min, max, step] { write(.integer(bound), to: &buffer) }
        case .enumeration(let values):
            buffer.writeLE(UInt8(2))
            buffer.writeLE(UInt16(values.count))
            for value in values { write(value, to: &buffer) }
        }
    }

    /// A value as this property's data type puts it on the wire.
    func write(_ value: PropertyValue, to buffer: inout ByteBuffer) {
        switch (value, dataType) {
        case (.string(let text), _): buffer.writePTPString(text)
        case (.integer(let number), PTPDataType.uint8): buffer.writeLE(UInt8(truncatingIfNeeded: number))
        case (.integer(let number), PTPDataType.int16): buffer.writeLE(Int16(truncatingIfNeeded: number))
        case (.integer(let number), PTPDataType.uint16): buffer.writeLE(UInt16(truncatingIfNeeded: number))
        case (.integer(let number), _): buffer.writeLE(UInt32(truncatingIfNeeded: number))
        }
    }

    /// Reads a value of this property's data type from SetDevicePropValue's data; nil when
    /// the data is too short or has bytes left over.
    func read(from data: ByteBuffer) -> PropertyValue? {
        var data = data
        let value: PropertyValue? = switch dataType {
        case PTPDataType.uint8: data.readLE(UInt8.self).map { .integer(Int64($0)) }
        case PTPDataType.int16: data.readLE(Int16.self).map { .integer(Int64($0)) }
        case PTPDataType.uint16: data.readLE(UInt16.self).map { .integer(Int64($0)) }
        case PTPDataType.uint32: data.readLE(UInt32.self).map { .integer(Int64($0)) }
        default: data.readPTPString().map { .string($0) }
        }
        return data.readableBytes == 0 ? value : nil
    }
}

/// How the profile's settings map to standard PTP properties, both ways.
///
/// Values follow ISO 15740: ISO as the number (auto as 0xFFFF), exposure time in units of
/// 0.1 ms (bulb as 0xFFFFFFFF), f-number in hundredths, compensation in thousandths of a stop.
/// White balances without a standard code get codes from the vendor range.
enum SettingMapping {
    static let settings: [(SettingID, code: UInt16, dataType: UInt16)] = [
        (.iso, PTPProperty.exposureIndex, PTPDataType.uint16),
        (.shutterSpeed, PTPProperty.exposureTime, PTPDataType.uint32),
        (.aperture, PTPProperty.fNumber, PTPDataType.uint16),
        (.exposureCompensation, PTPProperty.exposureBiasCompensation, PTPDataType.int16),
        (.whiteBalance, PTPProperty.whiteBalance, PTPDataType.uint16),
    ]

    static let autoISO: Int64 = 0xFFFF
    static let bulb: Int64 = 0xFFFF_FFFF

    /// The value's PTP number; nil for a setting that has no PTP property here.
    static func ptpValue(_ value: SettingValue) -> Int64? {
        switch value {
        case .iso(let iso): iso.isAuto ? autoISO : Int64(iso.rawValue)
        case .shutterSpeed(let speed): speed.isBulb ? bulb : Int64((speed.seconds * 10_000).rounded())
        case .aperture(let aperture): Int64(aperture.tenths) * 10
        case .exposureCompensation(let stops): Int64((stops.stops * 1000).rounded(.towardZero))
        case .whiteBalance(let balance): whiteBalanceCode(balance)
        default: nil
        }
    }

    static func whiteBalanceCode(_ balance: WhiteBalance) -> Int64 {
        switch balance {
        case .custom: 0x0001
        case .auto: 0x0002
        case .daylight: 0x0004
        case .fluorescent: 0x0005
        case .tungsten: 0x0006
        case .flash: 0x0007
        case .cloudy: 0x8010
        case .shade: 0x8011
        case .kelvin: 0x8012
        }
    }
}

/// The properties of one simulated body, with the profile's ladders as enumerations.
struct DeviceProperties: Sendable {
    private(set) var byCode: [UInt16: DeviceProperty] = [:]
    /// For each ladder property, the profile value behind each PTP value.
    private var settingsByCode: [UInt16: [Int64: SettingValue]] = [:]
    /// How far the camera's clock is set from the host's.
    private var clockOffset: TimeInterval = 0

    init(profile: CameraProfile, batteryPercent: Int) {
        for (setting, code, dataType) in SettingMapping.settings {
            guard let ladder = profile.choices(for: setting), !ladder.isEmpty else { continue }
            // Neighbouring speeds above 1/4000 s share a value in units of 0.1 ms; the first one stands for them.
            var seen: Set<Int64> = []
            let distinct = ladder.filter { value in SettingMapping.ptpValue(value).map { seen.insert($0).inserted } ?? false }
            let values = distinct.compactMap(SettingMapping.ptpValue)
            guard let first = values.first else { continue }
            let initial = profile.defaults[setting].flatMap(SettingMapping.ptpValue) ?? first
            byCode[code] = DeviceProperty(code: code, dataType: dataType, writable: true, factoryDefault: .integer(initial),
                                          current: .integer(initial), form: .enumeration(values.map { .integer($0) }))
            settingsByCode[code] = Dictionary(uniqueKeysWithValues: zip(values, distinct))
        }
        byCode[PTPProperty.batteryLevel] = DeviceProperty(
            code: PTPProperty.batteryLevel, dataType: PTPDataType.uint8, writable: false, factoryDefault: .integer(100),
            current: .integer(Int64(batteryPercent)), form: .range(min: 0, max: 100, step: 1))
        byCode[PTPProperty.dateTime] = DeviceProperty(
            code: PTPProperty.dateTime, dataType: PTPDataType.string, writable: true, factoryDefault: .string(""),
            current: .string(""), form: .none)
    }

    var codes: [UInt16] { byCode.keys.sorted() }

    /// The property with its live value filled in (the clock runs).
    func property(_ code: UInt16) -> DeviceProperty? {
        guard var property = byCode[code] else { return nil }
        if code == PTPProperty.dateTime { property.current = .string(Self.ptpDateTime(Date().addingTimeInterval(clockOffset))) }
        return property
    }

    enum SetOutcome: Equatable { case changed, refused(UInt16) }

    /// Sets a property from SetDevicePropValue's data.
    mutating func set(_ code: UInt16, from data: ByteBuffer) -> SetOutcome {
        guard let property = byCode[code] else { return .refused(PTPResponse.devicePropNotSupported) }
        guard property.writable else { return .refused(PTPResponse.accessDenied) }
        guard let value = property.read(from: data) else { return .refused(PTPResponse.invalidDevicePropFormat) }
        if code == PTPProperty.dateTime {
            guard case .string(let text) = value, let date = Self.date(fromPTP: text) else {
                return .refused(PTPResponse.invalidDevicePropValue)
            }
            clockOffset = date.timeIntervalSinceNow
            return .changed
        }
        guard property.offers(value) else { return .refused(PTPResponse.invalidDevicePropValue) }
        byCode[code]?.current = value
        return .changed
    }

    /// The profile value a ladder property is set to now.
    func setting(_ code: UInt16) -> SettingValue? {
        guard case .integer(let value)? = byCode[code]?.current else { return nil }
        return settingsByCode[code]?[value]
    }

    mutating func setBatteryPercent(_ percent: Int) {
        byCode[PTPProperty.batteryLevel]?.current = .integer(Int64(percent))
    }

    /// The scene 1/125 s at f/8, ISO 100 exposes correctly: EV 13 at ISO 100.
    static let referenceSceneEV = 13.0

    /// How far the settings put a picture of a scene of `sceneEV` (at ISO 100) from a correct
    /// exposure, in stops, compensation included; auto ISO meters correctly, and bulb is taken
    /// as one second. Marked values count as the exact thirds of a stop they stand for.
    func exposureStops(sceneEV: Double = referenceSceneEV) -> Double {
        var time = 0.0, gain = 0.0, light = 6.0
        if case .shutterSpeed(let speed)? = setting(PTPProperty.exposureTime) { time = speed.timeStops ?? 0 }
        if case .aperture(let aperture)? = setting(PTPProperty.fNumber) { light = aperture.lightStops }
        if case .iso(let iso)? = setting(PTPProperty.exposureIndex) { gain = iso.gainStops ?? 0 }
        var stops = sceneEV - ExposureValue.ev100(timeStops: time, gainStops: gain, lightStops: light)
        if case .exposureCompensation(let compensation)? = setting(PTPProperty.exposureBiasCompensation) {
            stops += compensation.stops
        }
        return stops
    }

    /// The exposure time the settings ask for; bulb is taken as one second.
    var exposureTime: Duration {
        guard case .shutterSpeed(let speed)? = setting(PTPProperty.exposureTime), !speed.isBulb else { return .seconds(1) }
        return .nanoseconds(Int64((speed.seconds * 1e9).rounded()))
    }

    /// `YYYYMMDDThhmmss` in UTC, PTP's DateTime form.
    static func ptpDateTime(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                      parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }

    /// Reads `YYYYMMDDThhmmss`, ignoring tenths of a second or a zone suffix.
    static func date(fromPTP text: String) -> Date? {
        let characters = Array(text)
        guard characters.count >= 15, characters[8] == "T" else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(characters[range])) }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
              let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15)
        else { return nil }
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar
    }()
}
