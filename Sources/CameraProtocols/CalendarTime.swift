public import CameraKit
import Foundation

/// A date and time of day on the Gregorian calendar, the fields cameras write their clocks and
/// position fixes in. Every brand's time fields are made from this one conversion.
public struct CalendarTime: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The UTC date and time `unixSeconds` after 1970-01-01 (before it when negative).
    public init(unixSeconds: Int64) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
        self.init(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1,
                  hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0)
    }

    /// The local date and time `time` names: its instant moved by its UTC offset.
    public init(local time: WallTime) {
        self.init(unixSeconds: Int64(time.unixMilliseconds / 1000) + Int64(time.utcOffsetMinutes) * 60)
    }
}
