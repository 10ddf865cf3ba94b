import CLinux
import Foundation

/// How good this host's wall clock is, as the kernel's clock discipline says (`adjtimex`, read
/// only): whether a time service (chrony, ntpd, systemd-timesyncd) keeps it synchronised, and
/// the error it estimates. What a host of a rig reports beside a shot fired at a UTC time: two
/// hosts fire together only as closely as their clocks agree.
public struct ClockDiscipline: Sendable, Equatable {
    /// False when no time service disciplines the clock (the kernel's `STA_UNSYNC`): its error
    /// is then unknown, whatever the estimate says.
    public var synchronised: Bool
    /// The time service's estimate of the clock's error.
    public var estimatedError: Duration
    /// The most the error may be.
    public var maximumError: Duration

    public init(synchronised: Bool, estimatedError: Duration, maximumError: Duration) {
        self.synchronised = synchronised
        self.estimatedError = estimatedError
        self.maximumError = maximumError
    }

    /// The kernel's figures now.
    public static func read() -> ClockDiscipline {
        var state = timex()
        state.modes = 0
        let result = adjtimex(&state)
        let unsynchronised = result == TIME_ERROR || Int32(state.status) & STA_UNSYNC != 0
        return ClockDiscipline(synchronised: !unsynchronised, estimatedError: .microseconds(Int64(state.esterror)),
                               maximumError: .microseconds(Int64(state.maxerror)))
    }
}

/// The host's clock as the daemon reads it: its wall clock, a monotonic clock that nothing sets,
/// and the kernel's discipline of the wall clock. ``system`` in a running daemon; a test hands in
/// readings it controls, to play a host whose clock is wrong without touching the real one.
public struct HostClockSource: Sendable {
    /// Unix milliseconds on the host's wall clock.
    public var wallClockMs: @Sendable () -> Int64
    /// The time since a fixed origin on a clock that nothing sets: against it, a wall clock that
    /// was set since shows as a step.
    public var monotonic: @Sendable () -> Duration
    /// Whether a time service keeps the wall clock synchronised.
    public var discipline: @Sendable () -> ClockDiscipline

    public init(wallClockMs: @escaping @Sendable () -> Int64, monotonic: @escaping @Sendable () -> Duration,
                discipline: @escaping @Sendable () -> ClockDiscipline) {
        self.wallClockMs = wallClockMs
        self.monotonic = monotonic
        self.discipline = discipline
    }

    /// Both clocks read together.
    public func reading() -> ClockCorrection.HostReading {
        ClockCorrection.HostReading(wallClockMs: wallClockMs(), monotonic: monotonic())
    }

    /// This host's clocks and the kernel's figures.
    public static let system: HostClockSource = {
        let origin = ContinuousClock.now
        return HostClockSource(wallClockMs: { Int64((Date().timeIntervalSince1970 * 1000).rounded()) },
                               monotonic: { origin.duration(to: .now) }, discipline: { ClockDiscipline.read() })
    }()
}
