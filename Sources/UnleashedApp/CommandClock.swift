import CameraKit
public import DaemonClient
public import Foundation
public import UnleashedAPI
public import UnleashedKit

/// The wall clock a command reads times of day and dates against (`--start-at`, `--until`, `time
/// sync`, a geotag's fix, a run's elapsed time): through a daemon, the daemon's, which may go by
/// a phone's clock while this host's is wrong; else this host's own. The daemon's is asked once
/// and kept as an offset from this host's clock, so that a display can go on reading it.
public struct CommandClock: Sendable, Equatable {
    /// The daemon's clock less this host's, in milliseconds; 0 for this host's own.
    public let offsetMs: Int64

    /// This host's own clock.
    public static let local = CommandClock(offsetMs: 0)

    public init(offsetMs: Int64) {
        self.offsetMs = offsetMs
    }

    /// The daemon's clock, or this host's when there is no daemon or it does not answer (one
    /// older than its clock route included). Its reading is taken as half-way through the
    /// request: over the daemon's socket the round trip is well under a millisecond or two.
    public static func of(_ daemon: DaemonClient?) async -> CommandClock {
        guard let daemon else { return .local }
        let sent = ContinuousClock.now
        let localAtSend = Self.localUnixMs()
        guard let state = try? await daemon.clock(timeout: .seconds(2)) else { return .local }
        let halfTrip = (ContinuousClock.now - sent).wholeMilliseconds / 2
        return CommandClock(offsetMs: state.nowUnixMs - (localAtSend + halfTrip))
    }

    /// Now on this clock, in Unix milliseconds.
    public var unixMs: Int64 { Self.localUnixMs() + offsetMs }

    /// Now on this clock.
    public var now: Date { Date(timeIntervalSince1970: Double(unixMs) / 1000) }

    private static func localUnixMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// What `unleashed status` says of the daemon's clock.
public enum HostClockReport {
    /// `host clock not synchronised; going by browser 'Pixel 7' (k3x9)'s clock since 05:12:03,
    /// the host's is 2h3s behind`; `clock` names the time of day it was taken.
    public static func text(_ state: HostClockState, clock: LocalClock = .system) -> String {
        let host = "host clock " + (state.synchronised ? "synchronised" : "not synchronised")
        guard let correction = state.correction else {
            return state.synchronised ? host
                : host + ", and no phone has given its time: open the web app on the phone, or set the host's clock"
        }
        let taken = clock.reading(Date(timeIntervalSince1970: Double(correction.takenUnixMs) / 1000)).civil
        let since = String(format: "%02d:%02d:%02d", taken.hour, taken.minute, taken.second)
        let offset = correction.offsetMs
        let apart = offset == 0 ? "the host's read the same"
            : "the host's was \(ClockCorrection.distanceText(offset)) " + (offset > 0 ? "behind" : "ahead")
        return "\(host); going by the clock of \(correction.client) since \(since), \(apart)"
    }
}
