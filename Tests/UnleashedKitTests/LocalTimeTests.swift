import Foundation
import Testing
@testable import UnleashedKit

@Suite("Times of day for --start-at and --until")
struct LocalTimeTests {
    private static func clock(_ zone: String) -> LocalClock {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        return .calendar(calendar)
    }

    private let sydney = Self.clock("Australia/Sydney")
    private let berlin = Self.clock("Europe/Berlin")

    /// 2026-06-21 12:00 in Sydney (UTC+10).
    private let noon = Date(timeIntervalSince1970: 1_782_007_200)

    @Test("a time still to come today is today; one that has passed is tomorrow")
    func todayOrTomorrow() throws {
        let later = try LocalTime.next("18:30", after: noon, clock: sydney)
        #expect(later.instant.timeIntervalSince(noon) == 6.5 * 3600 && later.occurrence == nil && later.offset == 36_000)
        #expect(LocalTime.daysAhead(of: later.instant, from: noon, clock: sydney) == 0)
        #expect(LocalTime.day(of: later.instant, from: noon, clock: sydney) == "today")

        let passed = try LocalTime.next("06:30:15", after: noon, clock: sydney)
        #expect(passed.instant.timeIntervalSince(noon) == 18.5 * 3600 + 15)
        #expect(LocalTime.daysAhead(of: passed.instant, from: noon, clock: sydney) == 1)
        #expect(LocalTime.day(of: passed.instant, from: noon, clock: sydney) == "tomorrow")
    }

    @Test("a time after a later moment may fall two days on, named by its date")
    func laterDate() throws {
        let start = noon.addingTimeInterval(30 * 3600)
        let end = try LocalTime.next("06:00", after: start, clock: sydney)
        #expect(LocalTime.daysAhead(of: end.instant, from: noon, clock: sydney) == 2)
        #expect(LocalTime.day(of: end.instant, from: noon, clock: sydney) == "2026-06-23")
    }

    @Test("a time the clocks skip (spring forward) is refused naming the day; the hour around it is not")
    func skipped() throws {
        // 2027-03-27 12:00 CET; that night Berlin's clocks go from 02:00 to 03:00.
        let saturday = Date(timeIntervalSince1970: 1_806_145_200)
        #expect(throws: LocalTime.Failure.skipped(date: LocalClock.Civil(year: 2027, month: 3, day: 28, hour: 2, minute: 30))) {
            try LocalTime.next("02:30", after: saturday, clock: berlin)
        }
        let before = try LocalTime.next("01:30", after: saturday, clock: berlin)
        #expect(before.instant == Date(timeIntervalSince1970: 1_806_193_800) && before.offset == 3600)
        let after = try LocalTime.next("03:00", after: saturday, clock: berlin)
        #expect(after.instant == Date(timeIntervalSince1970: 1_806_195_600) && after.offset == 7200)
        // Once the skipped time has passed today, the next one is tomorrow's, which exists.
        let sunday = Date(timeIntervalSince1970: 1_806_199_200)
        #expect(try LocalTime.next("02:30", after: sunday, clock: berlin).instant == Date(timeIntervalSince1970: 1_806_280_200))
    }

    @Test("a time the clocks repeat (fall back) is the first still ahead, and says which")
    func repeated() throws {
        // 2026-10-24 12:00 CEST; that night Berlin's clocks go back from 03:00 to 02:00.
        let saturday = Date(timeIntervalSince1970: 1_792_836_000)
        let first = try LocalTime.next("02:30", after: saturday, clock: berlin)
        #expect(first.occurrence == 1 && first.offset == 7200 && first.instant == Date(timeIntervalSince1970: 1_792_888_200))
        // Between the two: the second.
        let between = first.instant.addingTimeInterval(15 * 60)
        let second = try LocalTime.next("02:30", after: between, clock: berlin)
        #expect(second.occurrence == 2 && second.offset == 3600 && second.instant == first.instant.addingTimeInterval(3600))
        #expect(try LocalTime.next("04:00", after: saturday, clock: berlin).occurrence == nil)
    }

    @Test("dates step across months, years and leap days")
    func civilDates() {
        let day = LocalClock.Civil(year: 2028, month: 2, day: 28, hour: 6)
        #expect(day.adding(days: 1) == LocalClock.Civil(year: 2028, month: 2, day: 29, hour: 6))
        #expect(day.adding(days: 2) == LocalClock.Civil(year: 2028, month: 3, day: 1, hour: 6))
        #expect(LocalClock.Civil(year: 2026, month: 12, day: 31).adding(days: 1) == LocalClock.Civil(year: 2027, month: 1, day: 1))
        #expect(LocalClock.Civil(year: 1970, month: 1, day: 1).adding(days: -1) == LocalClock.Civil(year: 1969, month: 12, day: 31))
        #expect(LocalTime.offsetText(49_500) == "UTC+13:45" && LocalTime.offsetText(-16_200) == "UTC-04:30")
    }

    @Test("the system clock reads an instant as the calendar of the process's own zone does")
    func systemClock() throws {
        let zone = Self.clock(TimeZone.current.identifier)
        for instant in [noon, Date(timeIntervalSince1970: 1_792_888_200), Date(timeIntervalSince1970: 0)] {
            #expect(LocalClock.system.reading(instant).civil == zone.reading(instant).civil)
            #expect(LocalClock.system.instants(LocalClock.system.reading(instant).civil).contains(instant))
        }
    }

    @Test("what is not a time of day is refused", arguments: ["6", "24:00", "12:60", "12:00:60", "noon", "-1:00", "12:00:00:00", ""])
    func refused(text: String) {
        #expect(throws: LocalTime.Failure.notATime) { try LocalTime.next(text, after: noon, clock: sydney) }
    }

    @Test("an instant is written in UTC to the millisecond, exactly")
    func timestamps() {
        #expect(LocalTime.timestamp(1_782_239_415_250) == "2026-06-23T18:30:15.250Z")
        #expect(LocalTime.timestamp(1_782_239_415_005) == "2026-06-23T18:30:15.005Z")
        #expect(LocalTime.timestamp(1_782_239_415_999) == "2026-06-23T18:30:15.999Z")
        #expect(LocalTime.timestamp(0) == "1970-01-01T00:00:00.000Z")
    }
}
