public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A wall clock: how an instant reads on it, and which instants read as a given wall time. A
/// wall time can be read by no instant (the hour skipped when the clocks go forward) or by two
/// (the hour repeated when they go back).
public struct LocalClock: Sendable {
    /// A date and time of day as a wall clock shows it.
    public struct Civil: Hashable, Comparable, Sendable {
        public var year, month, day, hour, minute, second: Int

        public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        }

        public static func < (a: Civil, b: Civil) -> Bool {
            (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
        }

        /// Days since 1970-01-01 of the date (proleptic Gregorian; H. Hinnant's days_from_civil).
        var dayNumber: Int {
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }

        /// The same time of day `days` later.
        func adding(days: Int) -> Civil {
            let z = dayNumber + days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            return Civil(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day, hour: hour, minute: minute, second: second)
        }

        /// `2026-06-23`.
        public var dateText: String { String(format: "%04d-%02d-%02d", year, month, day) }
    }

    /// How `instant` reads, and the clock's offset from UTC then, in seconds.
    public let reading: @Sendable (Date) -> (civil: Civil, offset: Int)
    /// Every instant that reads as `civil`, earliest first: none, one, or two.
    public let instants: @Sendable (Civil) -> [Date]

    public init(reading: @escaping @Sendable (Date) -> (civil: Civil, offset: Int), instants: @escaping @Sendable (Civil) -> [Date]) {
        self.reading = reading
        self.instants = instants
    }

    /// This process's local time as the C library keeps it: the zone `TZ` names, a POSIX rule
    /// (`<+1345>-13:45`, `CET-1CEST,M3.5.0,M10.5.0/3`) included, else /etc/localtime. Foundation's
    /// own zone falls back to UTC for a POSIX rule, silently.
    public static let system = LocalClock(reading: { instant in
        var seconds = time_t(instant.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        localtime_r(&seconds, &fields)
        return (civil(fields), Int(fields.tm_gmtoff))
    }, instants: { civil in
        var found: [Date] = []
        // Asked once as standard time and once as summer time: each answer that reads back as
        // the wall time asked for is one of its instants.
        for summer: Int32 in [0, 1] {
            var fields = tm()
            (fields.tm_year, fields.tm_mon, fields.tm_mday) = (Int32(civil.year - 1900), Int32(civil.month - 1), Int32(civil.day))
            (fields.tm_hour, fields.tm_min, fields.tm_sec, fields.tm_isdst) = (Int32(civil.hour), Int32(civil.minute), Int32(civil.second), summer)
            var seconds = mktime(&fields)
            guard seconds != -1 || civil.year == 1969 else { continue }
            var back = tm()
            localtime_r(&seconds, &back)
            let instant = Date(timeIntervalSince1970: TimeInterval(seconds))
            if Self.civil(back) == civil, !found.contains(instant) { found.append(instant) }
        }
        return found.sorted()
    })

    /// The wall clock of `calendar`'s time zone (tests, and zones named by identifier).
    public static func calendar(_ calendar: Calendar) -> LocalClock {
        let zone = calendar.timeZone
        let reading: @Sendable (Date) -> (civil: Civil, offset: Int) = { instant in
            var gregorian = Calendar(identifier: .gregorian)
            gregorian.timeZone = zone
            let parts = gregorian.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
            return (Civil(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0, hour: parts.hour ?? 0,
                          minute: parts.minute ?? 0, second: parts.second ?? 0), zone.secondsFromGMT(for: instant))
        }
        return LocalClock(reading: reading, instants: { civil in
            // The wall time as if it were UTC, less each offset in force around it.
            let asUTC = TimeInterval(civil.dayNumber * 86_400 + civil.hour * 3600 + civil.minute * 60 + civil.second)
            let offsets = Set([-86_400.0, 0, 86_400].map { zone.secondsFromGMT(for: Date(timeIntervalSince1970: asUTC + $0)) })
            return offsets.map { Date(timeIntervalSince1970: asUTC - TimeInterval($0)) }
                .filter { reading($0).civil == civil }
                .sorted()
        })
    }

    private static func civil(_ fields: tm) -> Civil {
        Civil(year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday),
              hour: Int(fields.tm_hour), minute: Int(fields.tm_min), second: Int(fields.tm_sec))
    }
}

/// A time of day as people type one: `6:30`, `06:30` or `18:30:15`: the hour in one or two
/// digits (0 to 23), the minutes and seconds in two (00 to 59). The web app reads times of day
/// by the same rules (`parseTimeOfDay` in app.js); Tests/Fixtures/text-grammar.json holds both
/// to the same cases.
public struct TimeOfDay: Hashable, Sendable {
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init?(_ text: String) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(fields.count),
              fields.allSatisfy({ field in field.allSatisfy { $0.isASCII && $0.isNumber } }),
              (1...2).contains(fields[0].count), fields.dropFirst().allSatisfy({ $0.count == 2 }),
              let hour = Int(fields[0]), let minute = Int(fields[1]), let second = fields.count == 3 ? Int(fields[2]) : 0,
              (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second)
        else { return nil }
        (self.hour, self.minute, self.second) = (hour, minute, second)
    }
}

/// Times of day as people type them (`06:30`, `18:30:15`) for `--start-at` and `--until`: the
/// next such local time, and whether that is today or a later day.
public enum LocalTime {
    /// A time of day resolved to an instant.
    public struct Resolved: Hashable, Sendable {
        public var instant: Date
        /// Set when the wall time comes twice that day (the clocks go back): which of the two
        /// this is, 1 or 2.
        public var occurrence: Int?
        /// The local date it falls on.
        public var date: LocalClock.Civil
        /// The clock's offset from UTC at the instant, in seconds.
        public var offset: Int
    }

    /// Why a time of day has no next instant.
    public enum Failure: Error, Hashable, Sendable {
        /// Not a time of day.
        case notATime
        /// The next time the clock would read it, it does not: the clocks skip it that day.
        case skipped(date: LocalClock.Civil)

        /// Why `text` names no instant on a day the clocks skip it, for the CLI's and the API's
        /// messages alike; nil for text that is no time at all.
        public func skippedReason(_ text: String) -> String? {
            guard case .skipped(let date) = self else { return nil }
            return "\(text) does not exist on \(date.dateText) here: the clocks go forward over it that night; "
                + "choose a time outside the skipped hour"
        }
    }

    /// The first moment after `now` that reads `text` on `clock`. A time the clocks skip on the
    /// day it next comes is refused, not moved: a run meant for 02:30 on the night the clocks
    /// go forward would otherwise start at a moment nobody chose. A time that comes twice is the
    /// first of the two still ahead, and says which.
    public static func next(_ text: String, after now: Date, clock: LocalClock = .system) throws(Failure) -> Resolved {
        guard let time = TimeOfDay(text) else { throw .notATime }
        let today = clock.reading(now).civil
        var wanted = LocalClock.Civil(year: today.year, month: today.month, day: today.day, hour: time.hour, minute: time.minute,
                                      second: time.second)
        for _ in 0..<3 {
            let instants = clock.instants(wanted)
            if instants.isEmpty, today < wanted { throw .skipped(date: wanted) }
            if let index = instants.firstIndex(where: { $0 > now }) {
                return Resolved(instant: instants[index], occurrence: instants.count > 1 ? index + 1 : nil, date: wanted,
                                offset: clock.reading(instants[index]).offset)
            }
            wanted = wanted.adding(days: 1)
        }
        throw .skipped(date: wanted)
    }

    /// How many local calendar days after `now`'s `date` falls: 0 today, 1 tomorrow.
    public static func daysAhead(of date: Date, from now: Date, clock: LocalClock = .system) -> Int {
        clock.reading(date).civil.dayNumber - clock.reading(now).civil.dayNumber
    }

    /// `today`, `tomorrow`, or the local date (`2026-06-23`) of `date`, as seen from `now`.
    public static func day(of date: Date, from now: Date, clock: LocalClock = .system) -> String {
        switch daysAhead(of: date, from: now, clock: clock) {
        case 0: "today"
        case 1: "tomorrow"
        default: clock.reading(date).civil.dateText
        }
    }

    /// An offset from UTC as `UTC+01:00`.
    public static func offsetText(_ seconds: Int) -> String {
        String(format: "UTC%@%02d:%02d", seconds < 0 ? "-" : "+", abs(seconds) / 3600, abs(seconds) % 3600 / 60)
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
