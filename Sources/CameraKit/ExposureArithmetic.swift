import Foundation

// Exposure arithmetic in stops. Cameras label their third-stop values with rounded numbers
// (1/125, ISO 125, f/3.2) but expose at exact thirds of a stop; the values here are those
// exact thirds, so a ladder step is always exactly 1/3 EV.

extension ShutterSpeed {
    /// The exposure time's position in stops, `log2(seconds)` at its exact third (1/125 is −7,
    /// 1/160 is −7⅓); nil for bulb, whose time is given separately.
    public var timeStops: Double? {
        isBulb ? nil : Self.thirds(log2(seconds))
    }

    /// `value` rounded to the nearest third.
    static func thirds(_ value: Double) -> Double { (value * 3).rounded() / 3 }
}

extension ISOSpeed {
    /// The gain's position in stops above ISO 100, at its exact third (ISO 125 is ⅓); nil for auto.
    public var gainStops: Double? {
        isAuto ? nil : ShutterSpeed.thirds(log2(Double(rawValue) / 100))
    }
}

extension Aperture {
    /// The aperture's light loss in stops, `2·log2(N)` at its exact third (f/2.8 is 3, f/3.2 is 3⅓).
    public var lightStops: Double { ShutterSpeed.thirds(2 * log2(fNumber)) }
}

/// An exposure as EV at ISO 100: the scene brightness it renders as mid-grey. `EV100 =
/// aperture − time − gain` in stops, so f/1 for 1 s at ISO 100 is 0 and f/16, 1/125 s at ISO 100
/// is 15.
public enum ExposureValue {
    public static func ev100(timeStops: Double, gainStops: Double, lightStops: Double) -> Double {
        lightStops - timeStops - gainStops
    }

    /// The EV at ISO 100 a camera's settings expose at: its shutter speed (or `bulbSeconds`, a
    /// bulb exposure's time), ISO and aperture. Nil when one is missing, the ISO is auto, or the
    /// shutter is on bulb and no time is given.
    public static func ev100(of settings: [SettingID: SettingValue], bulbSeconds: Double? = nil) -> Double? {
        guard case .iso(let iso)? = settings[.iso], let gain = iso.gainStops,
              case .aperture(let aperture)? = settings[.aperture],
              case .shutterSpeed(let speed)? = settings[.shutterSpeed] else { return nil }
        let time: Double
        if let bulbSeconds, bulbSeconds > 0 {
            time = log2(bulbSeconds)
        } else if let stops = speed.timeStops {
            time = stops
        } else {
            return nil
        }
        return ev100(timeStops: time, gainStops: gain, lightStops: aperture.lightStops)
    }

    /// The time in seconds that gives `ev100` with the given gain and aperture.
    public static func seconds(forEV100 ev100: Double, gainStops: Double, lightStops: Double) -> Double {
        pow(2, lightStops - gainStops - ev100)
    }
}
