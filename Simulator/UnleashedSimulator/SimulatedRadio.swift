public import UnleashedKit
import Synchronization

/// The radio between this host and one ``VirtualModule``: it finds the module, links to it, and
/// can lose the link or make it unreliable on request, as walls, distance and a flat battery do.
/// A ``GATTLinkProvider``, so a ``ModuleConnection`` drives it exactly as it drives BlueZ.
public final class SimulatedRadio: GATTLinkProvider {
    /// The module at the other end.
    public let module: VirtualModule

    private let mtu: Int
    private let seed: UInt64
    private let clock: any Clock<Duration>
    private let elapsed: @Sendable () -> Duration
    private let state: Mutex<State>

    private struct State {
        var faults: LinkFaults
        var link: InMemoryLink?
        var links = 0
        var connectAttempts = 0
        var pageTimeouts = 0
        /// Until when (time since the radio was made) the module cannot be reached.
        var outOfRangeUntil: Duration = .zero
    }

    /// How long a connection attempt to an unreachable module takes to fail, like BlueZ's page
    /// timeout.
    public static let pageTimeout: Duration = .seconds(2)

    /// A radio in range of `module`.
    ///
    /// - Parameters:
    ///   - faults: what every link made from now on does wrong; `seed` makes it repeatable.
    ///   - clock: runs delays, outages and the module's timing.
    public init(module: VirtualModule, mtu: Int = 185, faults: LinkFaults = LinkFaults(), seed: UInt64 = 0,
                clock: any Clock<Duration> = ContinuousClock()) {
        self.module = module
        self.mtu = mtu
        self.seed = seed
        self.clock = clock
        elapsed = stopwatch(clock)
        state = Mutex(State(faults: faults))
    }

    /// How many times a client tried to link.
    public var connectAttempts: Int { state.withLock { $0.connectAttempts } }
    /// How many attempts nothing answered, each failing after ``pageTimeout``.
    public var pageTimeouts: Int { state.withLock { $0.pageTimeouts } }

    /// Changes the faults of the current link and of every later one.
    public func setFaults(_ faults: LinkFaults) {
        let link = state.withLock { state in
            state.faults = faults
            return state.link
        }
        link?.setFaults(faults)
    }

    /// Drops the link now and keeps the module unreachable for `duration`.
    public func loseLink(for duration: Duration, reason: String = "the module went out of range") {
        let link = state.withLock { state in
            state.outOfRangeUntil = max(state.outOfRangeUntil, elapsed() + duration)
            defer { state.link = nil }
            return state.link
        }
        link?.sever(reason: reason)
    }

    /// How long until the module can be reached again (zero when it can now).
    public var timeOutOfRange: Duration {
        state.withLock { max(.zero, $0.outOfRangeUntil - elapsed()) }
    }

    public func discover(timeout: Duration) async throws(GATTError) {
        // A module that is restarting does not advertise until it is up.
        let wait = max(timeOutOfRange, await module.bootRemaining)
        guard wait <= timeout else {
            try? await clock.sleep(for: timeout)
            throw .notConnected("no module found")
        }
        if wait > .zero { try? await clock.sleep(for: wait) }
    }

    public func connect() async throws(GATTError) -> any GATTLink {
        let (reachable, faults, number) = state.withLock { state in
            state.connectAttempts += 1
            return (state.outOfRangeUntil <= elapsed(), state.faults, state.links)
        }
        guard reachable, await module.bootRemaining == .zero else {
            try? await clock.sleep(for: Self.pageTimeout)
            state.withLock { $0.pageTimeouts += 1 }
            throw .failed("the module did not answer (page timeout)")
        }
        let link = InMemoryLink(mtu: mtu, faults: faults, seed: seed &+ UInt64(number), clock: clock)
        let previous = state.withLock { state in
            state.links += 1
            defer { state.link = link }
            return state.link
        }
        previous?.sever(reason: "replaced by a new connection")
        await module.serve(link.peripheral)
        return link.central
    }
}
