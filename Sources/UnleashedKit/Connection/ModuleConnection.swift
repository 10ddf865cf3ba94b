public import CameraKit
import Synchronization
public import UnleashedProtocol

/// How long the connection waits for each step, and how it notices a dead link.
public struct ConnectionTiming: Hashable, Sendable {
    /// How long a scan looks for the module before giving up.
    public var scanTimeout: Duration
    /// How long a request (hello included) waits for its response (PROTOCOL.md §9.1).
    public var requestTimeout: Duration
    /// A keep-alive goes out when no request went out for this long (§9.1).
    public var keepAliveInterval: Duration
    /// A keep-alive unanswered for this long means the link is lost (§9.1).
    public var linkLossTimeout: Duration
    /// Where the wait before a request is sent again starts and between which bounds it follows
    /// the link's round trips.
    public var retransmission: RoundTripEstimator.Bounds

    public init(
        scanTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(3),
        keepAliveInterval: Duration = .seconds(2),
        linkLossTimeout: Duration = .seconds(6),
        retransmission: RoundTripEstimator.Bounds = .moduleLink
    ) {
        self.scanTimeout = scanTimeout
        self.requestTimeout = requestTimeout
        self.keepAliveInterval = keepAliveInterval
        self.linkLossTimeout = linkLossTimeout
        self.retransmission = retransmission
    }
}

/// What a connection reports, in order.
public enum ModuleConnectionEvent: Hashable, Sendable {
    /// The connection changed state.
    case state(ConnectionState)
    /// An event from the module, repeats already dropped.
    case module(EventCode, Fields)
    /// The module's event numbering skipped this many events: they were lost on the way.
    case missedEvents(Int)
    /// Packets that could not be read; the connection carries on.
    case protocolError(ReceiveError)
}

/// The connection to one module: the one ``ConnectionDriver`` over the module's protocol, which
/// keeps one ``ModuleSession`` while the module is ready.
public typealias ModuleConnection = ConnectionDriver<ModuleConnectionDialect>

/// The module's protocol as a dialect of the connection driver: links from a
/// ``GATTLinkProvider``, a ``ModuleSession`` over the link's Command and Event characteristics,
/// `hello` as the handshake and timed keep-alives that also sample the module's timer
/// (PROTOCOL.md §9).
public struct ModuleConnectionDialect: ConnectionDialect {
    let provider: any GATTLinkProvider
    let timing: ConnectionTiming
    let codec: any Dialect
    let clock: any Clock<Duration>

    public var executor: ExecutorThread? { provider.executor }
    public var scanTimeout: Duration { timing.scanTimeout }
    public var keepAliveInterval: Duration? { timing.keepAliveInterval }
    public var deviceWord: String { "module" }

    public func discover(timeout: Duration) async -> Bool {
        await Self.seen { () async throws(GATTError) in try await provider.discover(timeout: timeout) }
    }

    public func connect() async throws(ConnectionStepFailure) -> any GATTLink {
        try await Self.linking { () async throws(GATTError) in try await provider.connect() }
    }

    public func resolve(_ link: any GATTLink) async throws(ConnectionStepFailure) -> ModuleLinkSession {
        let transport: ModuleTransport
        do throws(GATTError) {
            transport = try await ModuleTransport.open(over: link, gatt: codec.gatt)
        } catch .missing {
            throw .notThisDevice(ModuleTransport.notAModule)
        } catch {
            throw .lost(error.description)
        }
        // On the provider's thread only where the link reads its packets there too: over
        // messages they arrive on the bus connection's thread, and the session keeps the pool.
        let readsHere = executor != nil && transport.readingThread === executor
        do {
            return ModuleLinkSession(try ModuleSession(transport: transport, dialect: codec, clock: clock,
                                                       requestTimeout: timing.requestTimeout, retransmission: timing.retransmission,
                                                       executor: readsHere ? executor : nil))
        } catch {
            throw .notThisDevice(error.description)
        }
    }

    public func relay(_ link: ModuleLinkSession, to report: @escaping @Sendable (LinkReport<ModuleConnectionEvent>) async -> Void) async {
        for await event in link.session.events {
            switch event {
            case .module(let code, let fields): await report(.event(.module(code, fields)))
            case .missedEvents(let count): await report(.event(.missedEvents(count)))
            case .protocolError(let error): await report(.event(.protocolError(error)))
            case .disconnected(let reason): await report(.lost(reason))
            }
        }
    }

    public func handshake(_ link: ModuleLinkSession) async throws(ConnectionStepFailure) -> ModuleIdentity? {
        do throws(SessionError) {
            return try await link.session.start()
        } catch .versionMismatch(let module, let client) {
            throw .incompatible(SessionError.versionMismatch(module: module, client: client).description)
        } catch .disconnected(let reason) {
            throw .lost(reason)
        } catch {
            throw .failed(error.description)
        }
    }

    /// A keep-alive when no request went out since the last one; a refusal still proves the link
    /// is alive, and a lost link is reported by the session.
    public func keepAlive(_ link: ModuleLinkSession) async -> KeepAliveOutcome {
        guard !link.takeRequested() else { return .alive }
        do throws(SessionError) {
            if let sample = try await Self.timedKeepAlive(link.session, timeout: timing.linkLossTimeout) { link.record(sample) }
            return .alive
        } catch .timedOut {
            return .expired
        } catch {
            return .alive
        }
    }

    public func stateChanged(_ state: ConnectionState) -> ModuleConnectionEvent { .state(state) }

    public func close(_ link: ModuleLinkSession) async {
        await link.session.close()
    }

    public func close(_ link: any GATTLink) async {
        await link.close()
    }

    /// A keep-alive timed on the host's clock, outside the connection's actor so that no hop to
    /// it is timed; its answer is a sample when it carries the module's timer.
    static func timedKeepAlive(_ session: ModuleSession, timeout: Duration) async throws(SessionError) -> ModuleClock<ContinuousClock>.Sample? {
        let sent = ContinuousClock.now
        let fields = try await session.request(.keepAlive, timeout: timeout)
        let received = ContinuousClock.now
        return fields.uptimeMicros.map { ModuleClock<ContinuousClock>.Sample(sent: sent, received: received, moduleMicros: $0) }
    }
}

/// One link's ``ModuleSession`` with what the connection learns on that link: the module's timer
/// against this host's monotonic clock (scheduled shots name real instants, whatever clock times
/// the connection's waits), and whether a request went out since the last keep-alive. A new
/// link starts both afresh.
public final class ModuleLinkSession: Sendable {
    let session: ModuleSession
    private let moduleClock = Mutex(ModuleClock<ContinuousClock>())
    private let requested = Atomic(false)

    init(_ session: ModuleSession) {
        self.session = session
    }

    /// Notes that a request went out: the next keep-alive is not needed.
    func markRequested() {
        requested.store(true, ordering: .relaxed)
    }

    /// Whether a request went out since the last call.
    func takeRequested() -> Bool {
        requested.exchange(false, ordering: .relaxed)
    }

    func record(_ sample: ModuleClock<ContinuousClock>.Sample) {
        moduleClock.withLock { $0.add(sample) }
    }

    func estimate(at instant: ContinuousClock.Instant) -> ModuleClock<ContinuousClock>.Estimate? {
        moduleClock.withLock { $0.estimate(at: instant) }
    }
}

extension ConnectionDriver where D == ModuleConnectionDialect {
    /// A connection in `idle`; call ``connect()``.
    ///
    /// - Parameter dialect: the module protocol's codec.
    /// - Parameter seed: makes the retry jitter repeatable.
    public init(
        provider: any GATTLinkProvider,
        policy: ReconnectPolicy = ReconnectPolicy(),
        timing: ConnectionTiming = ConnectionTiming(),
        dialect: any Dialect = UnleashedV1(),
        clock: any Clock<Duration> = ContinuousClock(),
        seed: UInt64 = .random(in: .min ... .max)
    ) {
        self.init(ModuleConnectionDialect(provider: provider, timing: timing, codec: dialect, clock: clock),
                  policy: policy, clock: clock, seed: seed)
    }

    /// What the module said in its last successful handshake.
    public var identity: ModuleIdentity? { greeting }

    /// Sends a request on the ready session.
    ///
    /// - Throws: ``SessionError/disconnected(reason:)`` when the module is not ready now.
    public func request(_ opcode: Opcode, _ fields: Fields = Fields(), timeout: Duration? = nil) async throws(SessionError) -> Fields {
        guard state == .ready, let session else { throw .disconnected(reason: "not connected (\(state))") }
        session.markRequested()
        return try await session.session.request(opcode, fields, timeout: timeout)
    }

    /// How the current link has behaved: requests sent again, round trips and the wait before
    /// sending again; nil while there is no session.
    public func sessionFigures() async -> SessionFigures? {
        await session?.session.figures
    }

    /// Reads the module's timer with a `keepAlive` now, for scheduling shots on it (PROTOCOL.md
    /// §9.6); false when the module is not ready or has no such timer.
    @discardableResult
    public func sampleModuleClock() async -> Bool {
        guard state == .ready, let session, identity?.capabilities.contains(.scheduledFire) == true else { return false }
        session.markRequested()
        let timeout = dialect.timing.requestTimeout
        guard let sample = try? await ModuleConnectionDialect.timedKeepAlive(session.session, timeout: timeout) else { return false }
        session.record(sample)
        return true
    }

    /// The module's timer at `instant`, from the link's samples; nil before the first.
    public func moduleTime(at instant: ContinuousClock.Instant) -> ModuleClock<ContinuousClock>.Estimate? {
        session?.estimate(at: instant)
    }
}
