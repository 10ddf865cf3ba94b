import Foundation
import Testing
import UnleashedKit

@Suite("Times of day for --start-at and --until")
struct LocalTimeTests {
    private let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Australia/Sydney")!
        return calendar
    }()

    /// 2026-06-21 12:00 in Sydney (UTC+10).
    private let noon = Date(timeIntervalSince1970: 1_782_007_200)

    @Test("a time still to come today is today; one that has passed is tomorrow")
    func todayOrTomorrow() throws {
        let later = try #require(LocalTime.next("18:30", after: noon, calendar: calendar))
        #expect(later.timeIntervalSince(noon) == 6.5 * 3600)
        #expect(LocalTime.daysAhead(of: later, from: noon, calendar: calendar) == 0)
        #expect(LocalTime.day(of: later, from: noon, calendar: calendar) == "today")

        let passed = try #require(LocalTime.next("06:30:15", after: noon, calendar: calendar))
        #expect(passed.timeIntervalSince(noon) == 18.5 * 3600 + 15)
        #expect(LocalTime.daysAhead(of: passed, from: noon, calendar: calendar) == 1)
        #expect(LocalTime.day(of: passed, from: noon, calendar: calendar) == "tomorrow")
    }

    @Test("a time after a later moment may fall two days on, named by its date")
    func laterDate() throws {
        let start = noon.addingTimeInterval(30 * 3600)
        let end = try #require(LocalTime.next("06:00", after: start, calendar: calendar))
        #expect(LocalTime.daysAhead(of: end, from: noon, calendar: calendar) == 2)
        #expect(LocalTime.day(of: end, from: noon, calendar: calendar) == "2026-06-23")
    }

    @Test("what is not a time of day is refused", arguments: ["6", "24:00", "12:60", "12:00:60", "noon", "-1:00", "12:00:00:00", ""])
    func refused(text: String) {
        #expect(LocalTime.next(text, after: noon, calendar: calendar) == nil)
    }

    @Test("an instant is written in UTC to the millisecond, exactly")
    func timestamps() {
        #expect(LocalTime.timestamp(1_782_239_415_250) == "2026-06-23T18:30:15.250Z")
        #expect(LocalTime.timestamp(1_782_239_415_005) == "2026-06-23T18:30:15.005Z")
        #expect(LocalTime.timestamp(1_782_239_415_999) == "2026-06-23T18:30:15.999Z")
        #expect(LocalTime.timestamp(0) == "1970-01-01T00:00:00.000Z")
    }
}
