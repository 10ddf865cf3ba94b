import Daemon
import DaemonClient
import Foundation
import Testing
import UnleashedAPI
import UnleashedApp
import UnleashedKit

/// The clock a command reads times of day on: the daemon's when it goes through one, so that a
/// `--start-at` handed to a daemon whose host clock is wrong means the time the phone told it.
@Suite(.timeLimit(.minutes(1))) struct CommandClockTests {
    /// Two hours: how far behind the played host's clock is.
    static let twoHours: Int64 = 7_200_000

    /// Runs `body` with a client of a daemon in this process whose host clock is two hours behind
    /// this process's and kept by no time service.
    private static func withDaemon(_ body: (DaemonClient) async throws -> Void) async throws {
        let system = HostClockSource.system
        let behind = HostClockSource(wallClockMs: { system.wallClockMs() - twoHours }, monotonic: system.monotonic,
                                     discipline: { ClockDiscipline(synchronised: false, estimatedError: .zero, maximumError: .zero) })
        try await JobRunTests.withDaemon(wallClock: DaemonClock(host: behind), body)
    }

    /// Now on this process's clock, in Unix milliseconds.
    private static func localUnixMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The time of day `minutes` from `now` on this process's clock, to the minute: `HH:MM`.
    private static func timeOfDay(_ minutes: Int, after now: Date) -> String {
        let civil = LocalClock.system.reading(now.addingTimeInterval(Double(minutes * 60))).civil
        return String(format: "%02d:%02d", civil.hour, civil.minute)
    }

    @Test("through a daemon, --start-at is read on the daemon's clock: the host's until a phone gives its own, then the phone's")
    func startAtOnTheDaemonsClock() async throws {
        try await Self.withDaemon { client in
            let start = StartRequest(startAt: Self.timeOfDay(30, after: Date()))

            let host = await CommandClock.of(client)
            #expect(abs(host.offsetMs + Self.twoHours) < 1000, "the daemon reads its host's clock, two hours behind: \(host.offsetMs)")
            let early = try start.start(now: host.now).delay
            #expect(early > .seconds(2 * 3600 + 29 * 60) && early <= .seconds(2 * 3600 + 30 * 60), "\(early)")

            let offer = try await client.offerClock(unixMs: Self.localUnixMs())
            #expect(offer.taken && offer.reason == .hostNotSynchronised)
            let phone = await CommandClock.of(client)
            #expect(abs(phone.offsetMs) < 1000, "the daemon goes by the phone's clock: \(phone.offsetMs)")
            let corrected = try start.start(now: phone.now).delay
            #expect(corrected > .seconds(29 * 60) && corrected <= .seconds(30 * 60), "\(corrected)")
        }
    }

    @Test("without a daemon, or one that does not answer, a command reads this host's clock")
    func localWithoutADaemon() async {
        #expect(await CommandClock.of(nil) == .local)
        let gone = DaemonClient(socketPath: "/tmp/unleashed-no-daemon-\(UUID().uuidString.prefix(8)).sock")
        #expect(await CommandClock.of(gone) == .local)
        #expect(abs(CommandClock.local.unixMs - Self.localUnixMs()) < 1000)
    }

    /// One line of `unleashed status` for the daemon's clock.
    struct Words: Sendable, CustomTestStringConvertible {
        let state: HostClockState
        let text: String
        var testDescription: String { text }
    }

    static let words: [Words] = [
        Words(state: HostClockState(synchronised: true, nowUnixMs: 0, correction: nil), text: "host clock synchronised"),
        Words(state: HostClockState(synchronised: false, nowUnixMs: 0, correction: nil),
              text: "host clock not synchronised, and no phone has given its time: open the web app on the phone, or set the host's clock"),
        Words(state: HostClockState(synchronised: false, nowUnixMs: 0, correction: .init(
            offsetMs: 7_203_000, takenUnixMs: 1_764_414_723_000, client: "browser 'Pixel 7' (k3x9)", webClient: "k3x9")),
              text: "host clock not synchronised; going by the clock of browser 'Pixel 7' (k3x9) since 11:12:03, the host's was 2h3s behind"),
        Words(state: HostClockState(synchronised: true, nowUnixMs: 0, correction: .init(
            offsetMs: -1500, takenUnixMs: 1_764_414_723_000, client: "uid 1000 on the socket", webClient: nil)),
              text: "host clock synchronised; going by the clock of uid 1000 on the socket since 11:12:03, the host's was 1s500ms ahead"),
    ]

    @Test("unleashed status says what clock the daemon goes by", arguments: words)
    func statusWords(_ row: Words) {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        #expect(HostClockReport.text(row.state, clock: .calendar(utc)) == row.text)
    }
}
