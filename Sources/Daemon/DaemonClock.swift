import CameraKit
public import Foundation
public import Logging
import Synchronization
public import UnleashedAPI
public import UnleashedKit

/// The daemon's wall clock: the host's, corrected by a client's (the phone's) while the host's
/// cannot be trusted. Whatever means a time of day or a date reads it: `until` and start times
/// (the CLI asks it for `--start-at` and `--until`), a job's `t0`, the time `unleashed time sync`
/// sets on a camera through the daemon, the live stream's clock, a fleet's UTC instants.
/// Schedules never do: they run on the monotonic clock, so a correction moves no slot of a run.
///
/// The correction is kept in memory only. It is an offset from the host's wall clock as it ran
/// when it was taken, and a restart is most often a reboot, after which the host's clock starts
/// again from wherever it was saved; the phone gives its clock again when the page is opened. It
/// is dropped once something sets the host's clock (a time service that found the network,
/// `date`): the host's own reading stands again.
public final class DaemonClock: Sendable {
    private struct Held {
        var correction: ClockCorrection
        var document: HostClockState.Correction
    }

    private struct State {
        var held: Held?
        /// How far readings have jumped, in all, as corrections were taken and dropped.
        var movedMs: Int64 = 0
        var whenMoved: [@Sendable () -> Void] = []
    }

    private let host: HostClockSource
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameter host: Where the host's clock is read; the system's, unless a test plays it.
    public init(host: HostClockSource = .system, logger: Logger = Logger(label: "unleashed.clock")) {
        self.host = host
        self.logger = logger
    }

    /// Now, in Unix milliseconds.
    public var nowUnixMs: Int64 { read().unixMs }

    /// Now, as a date.
    public var now: Date { Date(timeIntervalSince1970: Double(nowUnixMs) / 1000) }

    /// How far the clock's readings have jumped since the daemon started, in all, as
    /// corrections were taken and dropped: a wall time read when this was `m` is `movedMs - m`
    /// off the clock now, though the moment it names has not moved.
    public var movedMs: Int64 {
        _ = read()
        return state.withLock { $0.movedMs }
    }

    /// The kernel's discipline of the host's clock.
    public var discipline: ClockDiscipline { host.discipline() }

    /// The clock as the API shows it.
    public var document: HostClockState {
        let now = read()
        return HostClockState(synchronised: host.discipline().synchronised, nowUnixMs: now.unixMs, correction: now.held?.document)
    }

    /// Calls `handler` after each jump of the clock's readings by more than
    /// ``ClockCorrection/tolerance``. A phone that gives its clock again moves them by its
    /// request's transit, a few milliseconds, which ``movedMs`` counts and nobody need be told.
    public func whenMoved(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.whenMoved.append(handler) }
    }

    /// Takes `reading` (a client's clock as it sent the request) for the host's, or keeps the
    /// host's own, as ``ClockCorrection/verdict(clientUnixMs:hostUnixMs:hostSynchronised:)``
    /// decides; `client` names who gave it. A reading the host agrees with also ends an earlier
    /// correction: the host's own clock is right. Logged either way.
    public func offer(_ reading: ClockReading, from client: ClientIdentity) -> ClockOffer {
        _ = read()
        let synchronised = host.discipline().synchronised
        let at = host.reading()
        let verdict = ClockCorrection.verdict(clientUnixMs: reading.unixMs, hostUnixMs: at.wallClockMs, hostSynchronised: synchronised)
        let correction = ClockCorrection(clientUnixMs: reading.unixMs, at: at)
        let (jump, dropped) = state.withLock { state -> (Int64, Held?) in
            let before = state.held?.correction.offsetMs ?? 0
            let dropped = state.held
            state.held = verdict.takes ? Held(correction: correction, document: .init(
                offsetMs: correction.offsetMs, takenUnixMs: reading.unixMs, client: client.recognisedAs, webClient: client.webClient)) : nil
            let after = state.held?.correction.offsetMs ?? 0
            state.movedMs += after - before
            return (after - before, verdict.takes ? nil : dropped)
        }
        let message = Self.words(verdict, offsetMs: correction.offsetMs)
        if verdict.takes {
            logger.notice("clock: took the time of \(client.recognisedAs): \(message)")
        } else {
            let ended = dropped.map { "; the correction of \(Self.signed($0.correction.offsetMs)) ms from \($0.document.client) ends" } ?? ""
            logger.notice("clock: kept the host's own, not the time of \(client.recognisedAs): \(message)\(ended)")
        }
        tellMoved(jump)
        return ClockOffer(reason: verdict, message: message, differenceMs: correction.offsetMs, clock: document)
    }

    /// Reads the host's clock and the correction in effect, dropping it when the host's clock was
    /// set since it was taken.
    private func read() -> (unixMs: Int64, held: Held?) {
        let reading = host.reading()
        let (now, lapsed) = state.withLock { state -> ((Int64, Held?), (Held, step: Int64)?) in
            guard let held = state.held else { return ((reading.wallClockMs, nil), nil) }
            guard held.correction.holds(at: reading) else {
                let step = held.correction.hostClockStep(at: reading)
                state.held = nil
                state.movedMs += step - held.correction.offsetMs
                return ((reading.wallClockMs, nil), (held, step))
            }
            return ((held.correction.unixMs(at: reading), held), nil)
        }
        if let (held, step) = lapsed {
            let offset = Self.signed(held.correction.offsetMs)
            logger.notice("""
                clock: the host's clock was set (it moved \(Self.signed(step)) ms against the monotonic clock); \
                the correction of \(offset) ms from \(held.document.client) ends, the host's own stands
                """)
            tellMoved(step - held.correction.offsetMs)
        }
        return now
    }

    private func tellMoved(_ jumpMs: Int64) {
        guard jumpMs.magnitude > UInt64(ClockCorrection.tolerance.wholeMilliseconds) else { return }
        for handler in state.withLock({ $0.whenMoved }) { handler() }
    }

    /// What the verdict means, for the client and the log.
    static func words(_ verdict: ClockCorrection.Verdict, offsetMs: Int64) -> String {
        let host = offsetMs == 0 ? "reads the same as yours" : "is \(ClockCorrection.distanceText(offsetMs)) "
            + (offsetMs > 0 ? "behind yours" : "ahead of yours")
        return switch verdict {
        case .hostNotSynchronised: "no time service keeps the host's clock, which \(host); the daemon now goes by yours"
        case .hostDiffers: "the host's clock is synchronised, but it \(host), more than 1s apart; the daemon now goes by yours"
        case .hostAgrees: "the host's clock is synchronised and \(host), within 1s; the daemon keeps its own"
        }
    }

    private static func signed(_ milliseconds: Int64) -> String {
        milliseconds > 0 ? "+\(milliseconds)" : "\(milliseconds)"
    }
}
