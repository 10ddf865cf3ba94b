import CLinux

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
