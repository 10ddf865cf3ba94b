import CameraKit
import Foundation
import UnleashedKit

/// Which libgphoto2 controls carry the common settings, and how their choice strings read as
/// typed values. Drivers name and spell these differently ("f-number" on generic PTP, Nikon and
/// Sony, "aperture" on Canon; "1/125", "30\"", "Bulb"), so each setting lists every name in use
/// and the first one the camera has wins.
enum SettingWidgets {
    static let names: [(setting: SettingID, widgets: [String])] = [
        (.iso, ["iso", "exposureindex", "isospeed"]),
        (.shutterSpeed, ["shutterspeed", "shutterspeed2", "exposuretime"]),
        (.aperture, ["f-number", "aperture", "fnumber"]),
        (.exposureCompensation, ["exposurecompensation", "exposurebiascompensation", "exposurecompensation2"]),
        (.whiteBalance, ["whitebalance"]),
        (.focusMode, ["focusmode", "focusmode2"]),
        (.imageFormat, ["imageformat", "imagequality", "imageformatsd"]),
    ]

    /// The control that carries `setting` among `widgets`.
    static func widget(for setting: SettingID, in widgets: [Widget]) -> Widget? {
        guard let candidates = names.first(where: { $0.setting == setting })?.widgets else { return nil }
        for name in candidates {
            if let found = widgets.first(where: { $0.name == name && $0.kind != .button }) { return found }
        }
        return nil
    }

    /// The setting a control carries, if it is one of the common ones.
    static func setting(carriedBy widget: Widget, among widgets: [Widget]) -> SettingID? {
        names.first { self.widget(for: $0.setting, in: widgets)?.path == widget.path }?.setting
    }

    /// The typed setting, with the choices that read as typed values (each once, the camera's
    /// first spelling kept); nil when the current value does not read.
    static func descriptor(_ setting: SettingID, from widget: Widget) -> SettingDescriptor? {
        guard let text = widget.value, let current = value(fromChoice: text, for: setting) else { return nil }
        var choices: [SettingValue] = []
        for choice in widget.choices {
            if let typed = value(fromChoice: choice, for: setting), !choices.contains(typed) { choices.append(typed) }
        }
        return SettingDescriptor(setting: setting, value: current, choices: choices, readOnly: widget.readOnly)
    }

    /// The camera's choice string for `value`, if it offers one.
    static func choice(for value: SettingValue, in widget: Widget) -> String? {
        widget.choices.first { self.value(fromChoice: $0, for: value.setting) == value }
    }

    /// Reads a camera's choice string as a typed value.
    static func value(fromChoice text: String, for setting: SettingID) -> SettingValue? {
        switch setting {
        case .exposureCompensation:
            return SettingValue(setting: setting, text: text) ?? exposureCompensation(decimal: text)
        case .whiteBalance:
            return whiteBalance(text).map(SettingValue.whiteBalance)
        case .imageFormat:
            return imageFormat(text).map(SettingValue.imageFormat)
        case .focusMode:
            return focusMode(text).map(SettingValue.focusMode)
        case .shutterSpeed:
            return SettingValue(setting: setting, text: text) ?? shutterSpeed(decimalSeconds: text)
        case .iso:
            // Generic PTP drivers print ExposureIndex 0xFFFF, which PTP defines as automatic, as a number.
            return text == "65535" ? .iso(.auto) : SettingValue(setting: setting, text: text)
        case .aperture:
            return SettingValue(setting: setting, text: text)
        default:
            return nil
        }
    }

    /// Drivers print compensation as a decimal of the exact value ("0.333", "-1.666", "0.5").
    static func exposureCompensation(decimal text: String) -> SettingValue? {
        guard let stops = Double(text.trimmingCharacters(in: .whitespaces)), stops.isFinite else { return nil }
        let twentyFourths = (stops * 24).rounded()
        guard abs(stops * 24 - twentyFourths) < 0.25, abs(twentyFourths) <= 360 else { return nil }
        return SettingValue(exposureCompensation: ExposureStops(twentyFourths: Int32(twentyFourths)))
    }

    /// The nominal denominators of fast shutter speeds in third stops, as cameras label them.
    private static let nominalDenominators = [
        8000, 6400, 5000, 4000, 3200, 2500, 2000, 1600, 1250, 1000, 800, 640, 500, 400, 320, 250, 200, 160, 125,
        100, 80, 60, 50, 40, 30, 25, 20, 15, 13, 10, 8, 6, 5, 4, 3,
    ]

    /// Generic PTP drivers print the exposure time in seconds to four decimals ("0.0080s"), which
    /// names no nominal speed exactly; slow speeds snap to tenths of a second, the others (1/3 s
    /// printed "0.3333s" among them) to the nearest nominal 1/n within a third of a stop.
    static func shutterSpeed(decimalSeconds text: String) -> SettingValue? {
        var number = text.trimmingCharacters(in: .whitespaces).lowercased()
        if number.hasSuffix("s") || number.hasSuffix("\"") { number.removeLast() }
        guard let seconds = Double(number), seconds.isFinite, seconds > 0 else { return nil }
        if seconds >= 0.3 {
            let tenths = (seconds * 10).rounded()
            if abs(seconds * 10 - tenths) < 0.05 * tenths {
                return ShutterSpeed(seconds: Int(tenths), per: 10).map(SettingValue.shutterSpeed)
            }
        }
        let stopsAway = { (denominator: Int) in abs(log2(seconds * Double(denominator))) }
        guard let nearest = nominalDenominators.min(by: { stopsAway($0) < stopsAway($1) }), stopsAway(nearest) <= 0.34 else {
            return nil
        }
        return ShutterSpeed(seconds: 1, per: nearest).map(SettingValue.shutterSpeed)
    }

    private static func words(_ text: String) -> String {
        text.lowercased().trimmingCharacters(in: .whitespaces)
    }

    static func whiteBalance(_ text: String) -> WhiteBalance? {
        if let exact = WhiteBalance(text: text) { return exact }
        let text = words(text)
        let rules: [(WhiteBalance, [String])] = [
            (.auto, ["auto", "awb"]),
            (.daylight, ["daylight", "sunny", "fine weather", "direct sun"]),
            (.cloudy, ["cloud", "overcast"]),
            (.shade, ["shade"]),
            (.tungsten, ["tungsten", "incandescent"]),
            (.fluorescent, ["fluorescent"]),
            (.flash, ["flash"]),
            (.kelvin, ["kelvin", "color temperature", "colour temperature"]),
            (.custom, ["manual", "custom", "preset"]),
        ]
        return rules.first { $0.1.contains { text.hasPrefix($0) } }?.0
    }

    static func imageFormat(_ text: String) -> ImageFormat? {
        if let exact = ImageFormat(text: text) { return exact }
        let text = words(text)
        let raw = ["raw", "nef", "cr2", "cr3", "arw", "orf", "raf", "rw2", "pef", "dng"].contains { text.contains($0) }
        let jpeg = ["jpeg", "jpg", "fine", "normal", "basic", "standard", "+"].contains { text.contains($0) }
        switch (raw, jpeg) {
        case (true, true): return .rawPlusJPEG
        case (true, false): return .raw
        case (false, true):
            return ["normal", "basic", "standard"].contains { text.contains($0) } ? .jpegNormal : .jpegFine
        case (false, false): return nil
        }
    }

    static func focusMode(_ text: String) -> FocusMode? {
        if let exact = FocusMode(text: text) { return exact }
        let text = words(text)
        if text.hasPrefix("manual") || text == "mf" { return .manual }
        if text.contains("af-s") || text.hasPrefix("single") || text.contains("one shot") { return .singleAF }
        if text.contains("af-c") || text.hasPrefix("continuous") || text.contains("ai servo") { return .continuousAF }
        if text.contains("af-a") || text.hasPrefix("auto") || text.contains("ai focus") { return .autoAF }
        return nil
    }
}
