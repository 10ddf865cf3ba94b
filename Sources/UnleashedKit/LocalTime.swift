public import Foundation

/// Times of day as people type them (`06:30`, `18:30:15`) for `--start-at` and `--until`: the
/// next such local time, and whether that is today or a later day.
public enum LocalTime {
    /// The first moment after `now` that reads `text` on a local clock, or nil when `text` is not
    /// a time of day.
    public static func next(_ text: String, after now: Date, calendar: Calendar = .current) -> Date? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
        let (hour, minute, second) = (fields[0]!, fields[1]!, fields.count == 3 ? fields[2]! : 0)
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        return calendar.nextDate(after: now, matching: DateComponents(hour: hour, minute: minute, second: second),
                                 matchingPolicy: .nextTime)
    }

    /// How many local calendar days after `now`'s `date` falls: 0 today, 1 tomorrow.
    public static func daysAhead(of date: Date, from now: Date, calendar: Calendar = .current) -> Int {
        calendar.dateComponents([.day], from: calendar.startOfDay(for: now), to: calendar.startOfDay(for: date)).day ?? 0
    }

    /// `today`, `tomorrow`, or the local date (`2026-06-23`) of `date`, as seen from `now`.
    public static func day(of date: Date, from now: Date, calendar: Calendar = .current) -> String {
        switch daysAhead(of: date, from: now, calendar: calendar) {
        case 0: return "today"
        case 1: return "tomorrow"
        default:
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        }
    }

    /// Unix milliseconds as an ISO 8601 UTC timestamp (`2026-06-23T18:30:15.250Z`), as `--json`
    /// output writes instants.
    public static func timestamp(_ milliseconds: UInt64) -> String {
        // The format style is Swift's own; the older ISO8601DateFormatter loads ICU, which cost
        // a one-shot command milliseconds. The milliseconds are written from the integer, exactly.
        let seconds = Date(timeIntervalSince1970: Double(milliseconds / 1000)).formatted(Date.ISO8601FormatStyle())
        let fraction = String(milliseconds % 1000)
        return seconds.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}
