public import CameraKit
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

/// Why waiting for a ready connection ended without one.
public enum ConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The connection gave up.
    case failed(ConnectionFailure)
    /// The connection was closed on request.
    case disconnected
    /// Not ready within the time allowed; the connection keeps trying.
    case notReady(ConnectionState, after: Duration)

    public var description: String {
        switch self {
        case .failed(let failure): "could not connect to the module: \(failure)"
        case .disconnected: "the connection to the module was closed"
        case .notReady(let state, let after): "the module was not ready within \(after.shortDescription) (\(state))"
        }
    }
}

/// The driver of a ``ConnectionStateMachine``: it carries out the machine's actions on a
/// ``ModuleLinkProvider`` and a clock, feeds back what happened, and keeps one ``ModuleSession``
/// while the module is ready.
///
/// Work started for one link (a scan, a connect, a hello) can finish after that link is gone;
/// each such result carries the link generation it was started for and is dropped when stale.
public actor ModuleConnection {
    /// State changes and module events, in order. One consumer.
    public nonisolated let events: AsyncStream<ModuleConnectionEvent>

    /// The state now.
    public private(set) var state: ConnectionState = .idle
    /// What the module said in its last successful handshake.
    public private(set) var identity: ModuleIdentity?

    /// The provider's thread, where this connection, its sessions and its camera run; nil for
    /// Swift's shared pool.
    public nonisolated let executor: ExecutorThread?
    private nonisolated let poolIsolation = PoolIsolation()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? poolIsolation.unownedExecutor
    }

    private var machine: ConnectionStateMachine
    private let provider: any ModuleLinkProvider
    private let dialect: any Dialect
    private let clock: any Clock<Duration>
    private let timing: ConnectionTiming
    private let eventSink: AsyncStream<ModuleConnectionEvent>.Continuation

    private var link: (any ModuleLink)?
    private var session: ModuleSession?
    private var generation = 0
    private var step: Task<Void, Never>?
    private var retryTimer: Task<Void, Never>?
    /// Closes the links before; the latest waits for the ones before it.
    private var closing: Task<Void, Never>?
    private var keepAlive: Task<Void, Never>?
    private var requestedSinceKeepAlive = false
    /// The module's timer against this host's monotonic clock, from this link's keep-alives:
    /// scheduled shots name real instants, whatever clock times the connection's waits.
    private var moduleClock = ModuleClock<ContinuousClock>()
    private var waiters = StateWaiters()

    /// A connection in `idle`; call ``connect()``.
    ///
    /// - Parameter seed: makes the retry jitter repeatable.
    public init(
        provider: any ModuleLinkProvider,
        policy: ReconnectPolicy = ReconnectPolicy(),
        timing: ConnectionTiming = ConnectionTiming(),
        dialect: any Dialect = UnleashedV1(),
        clock: any Clock<Duration> = ContinuousClock(),
        seed: UInt64 = .random(in: .min ... .max)
    ) {
        self.provider = provider
        executor = provider.executor
        self.timing = timing
        self.dialect = dialect
        self.clock = clock
        machine = ConnectionStateMachine(policy: policy, seed: seed)
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    // MARK: - Public operations

    /// Starts connecting (or reconnecting after a failure); returns at once.
    public func connect() {
        apply(.connectRequested)
    }

    /// Waits until the module is ready.
    ///
    /// - Throws: ``ConnectionError/failed(_:)`` when the connection gives up,
    ///   ``ConnectionError/disconnected`` when it is closed, ``ConnectionError/notReady(_:after:)``
    ///   after `timeout` (nil waits as long as it takes).
    public func waitUntilReady(timeout: Duration? = nil) async throws(ConnectionError) {
        let settled = await waitForState(timeout: timeout) { state in
            switch state.phase {
            case .ready, .failed, .idle: true
            default: false
            }
        }
        switch settled {
        case .ready?: return
        case .failed(let failure)?: throw .failed(failure)
        case .idle?: throw .disconnected
        default: throw .notReady(state, after: timeout ?? .zero)
        }
    }

    /// Ends the connection and never reconnects; returns when the link is closed.
    public func disconnect() async {
        apply(.disconnectRequested)
        _ = await waitForState(timeout: nil) { $0 == .idle }
        await closing?.value
    }

    /// Sends a request on the ready session.
    ///
    /// - Throws: ``SessionError/disconnected(reason:)`` when the module is not ready now.
    public func request(_ opcode: Opcode, _ fields: Fields = Fields(), timeout: Duration? = nil) async throws(SessionError) -> Fields {
        guard state == .ready, let session else { throw .disconnected(reason: "not connected (\(state))") }
        requestedSinceKeepAlive = true
        return try await session.request(opcode, fields, timeout: timeout)
    }

    /// How the current link has behaved: requests sent again, round trips and the wait before
    /// sending again; nil while there is no session.
    public func sessionFigures() async -> SessionFigures? {
        await session?.figures
    }

    /// Reads the module's timer with a `keepAlive` now, for scheduling shots on it (PROTOCOL.md
    /// §9.6); false when the module is not ready or has no such timer.
    @discardableResult
    public func sampleModuleClock() async -> Bool {
        guard state == .ready, let session, identity?.capabilities.contains(.scheduledFire) == true else { return false }
        requestedSinceKeepAlive = true
        let current = generation
        guard let sample = try? await Self.timedKeepAlive(session, timeout: timing.requestTimeout) else { return false }
        record(sample, for: current)
        return true
    }

    /// The module's timer at `instant`, from the link's samples; nil before the first.
    public func moduleTime(at instant: ContinuousClock.Instant) -> ModuleClock<ContinuousClock>.Estimate? {
        moduleClock.estimate(at: instant)
    }

    /// A keep-alive timed on the host's clock, outside the actor so that no hop to it is timed;
    /// its answer is a sample when it carries the module's timer.
    private static func timedKeepAlive(_ session: ModuleSession, timeout: Duration) async throws(SessionError) -> ModuleClock<ContinuousClock>.Sample? {
        let sent = ContinuousClock.now
        let fields = try await session.request(.keepAlive, timeout: timeout)
        let received = ContinuousClock.now
        return fields.uptimeMicros.map { ModuleClock<ContinuousClock>.Sample(sent: sent, received: received, moduleMicros: $0) }
    }

    private func record(_ sample: ModuleClock<ContinuousClock>.Sample, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        moduleClock.add(sample)
    }

    /// Waits until the state satisfies `isWanted` and returns it; nil after `timeout`.
    public func waitForState(timeout: Duration?, where isWanted: @escaping @Sendable (ConnectionState) -> Bool) async -> ConnectionState? {
        if isWanted(state) { return state }
        let id = waiters.nextID()
        let clock = clock
        let timer = timeout.map { limit in
            Task { [weak self] in
                try? await clock.sleep(for: limit)
                if !Task.isCancelled { await self?.settleWaiter(id, with: nil) }
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            waiters.add(id, isWanted: isWanted, continuation: continuation)
        }
    }

    // MARK: - The machine

    private func apply(_ input: ConnectionStateMachine.Input) {
        let actions = machine.handle(input)
        if machine.state != state {
            state = machine.state
            if [.reconnecting, .failed, .idle].contains(state.phase) { releaseLink() }
            eventSink.yield(.state(state))
            waiters.changed(to: state)
        }
        for action in actions { perform(action) }
    }

    /// Applies `input` if it comes from the link generation still current.
    private func deliver(_ input: ConnectionStateMachine.Input, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        apply(input)
    }

    private func settleWaiter(_ id: Int, with state: ConnectionState?) {
        waiters.settle(id, with: state)
    }

    private func perform(_ action: ConnectionStateMachine.Action) {
        switch action {
        case .startScan: startScan()
        case .stopScan: step?.cancel()
        case .connect: startConnect()
        case .resolveServices: startResolving()
        case .startHandshake: startHello()
        case .startKeepAlive: startKeepAlive()
        case .stopKeepAlive: keepAlive?.cancel()
        case .closeLink: closeLink()
        case .scheduleRetry:
            if case .reconnecting(_, let delay) = machine.state { scheduleRetry(after: delay) }
        case .cancelRetry: retryTimer?.cancel()
        }
    }

    private func startScan() {
        generation += 1
        let (current, provider, timeout) = (generation, provider, timing.scanTimeout)
        step = Task { [weak self] in
            do {
                try await provider.discover(timeout: timeout)
                await self?.deliver(.deviceFound, for: current)
            } catch {
                await self?.deliver(.scanTimedOut, for: current)
            }
        }
    }

    private func startConnect() {
        generation += 1
        let (current, provider, closing) = (generation, provider, closing)
        step = Task { [weak self] in
            await closing?.value
            do throws(LinkError) {
                let link = try await provider.connect()
                guard let self else { return await link.close() }
                await self.linked(link, for: current)
            } catch {
                await self?.deliver(.linkFailed(error.description), for: current)
            }
        }
    }

    private func linked(_ newLink: any ModuleLink, for linkGeneration: Int) async {
        guard linkGeneration == generation else { return await newLink.close() }
        link = newLink
        apply(.linkUp)
    }

    private func startResolving() {
        guard let link else { return apply(.linkLost("the link closed")) }
        let current = generation
        step = Task { [weak self] in
            do throws(LinkError) {
                let transport = try await link.resolveServices()
                await self?.resolved(transport, for: current)
            } catch .notAModule(let reason) {
                await self?.deliver(.servicesMissing(reason), for: current)
            } catch {
                await self?.deliver(.linkLost(error.description), for: current)
            }
        }
    }

    private func resolved(_ transport: any Transport, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        do {
            // On the provider's thread only where the link reads its packets there too: over
            // messages they arrive on the bus connection's thread, and the session keeps the pool.
            let readsHere = executor != nil && (transport as? any DirectTransport)?.readingThread === executor
            session = try ModuleSession(transport: transport, dialect: dialect, clock: clock, requestTimeout: timing.requestTimeout,
                                        retransmission: timing.retransmission, executor: readsHere ? executor : nil)
            apply(.servicesResolved)
        } catch {
            apply(.servicesMissing(error.description))
        }
    }

    private func startHello() {
        guard let session else { return apply(.linkLost("the link closed")) }
        let current = generation
        let sessionEvents = session.events
        Task { [weak self] in
            for await event in sessionEvents {
                guard let self else { return }
                await self.forward(event, for: current)
            }
        }
        step = Task { [weak self] in
            do throws(SessionError) {
                let identity = try await session.start()
                await self?.handshakeDone(identity, for: current)
            } catch .versionMismatch(let module, let client) {
                await self?.deliver(.incompatible(SessionError.versionMismatch(module: module, client: client).description), for: current)
            } catch .disconnected(let reason) {
                await self?.deliver(.linkLost(reason), for: current)
            } catch {
                await self?.deliver(.handshakeFailed(error.description), for: current)
            }
        }
    }

    private func handshakeDone(_ identity: ModuleIdentity, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        self.identity = identity
        apply(.handshakeSucceeded)
    }

    private func forward(_ event: SessionEvent, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        switch event {
        case .module(let code, let fields): eventSink.yield(.module(code, fields))
        case .missedEvents(let count): eventSink.yield(.missedEvents(count))
        case .protocolError(let error): eventSink.yield(.protocolError(error))
        case .disconnected(let reason): apply(.linkLost(reason))
        }
    }

    private func startKeepAlive() {
        keepAlive?.cancel()
        let (current, clock, timing) = (generation, clock, timing)
        requestedSinceKeepAlive = false
        keepAlive = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    try await clock.sleep(for: timing.keepAliveInterval)
                } catch {
                    return
                }
                guard let self, let session = await self.sessionNeedingKeepAlive(for: current) else { continue }
                do throws(SessionError) {
                    if let sample = try await Self.timedKeepAlive(session, timeout: timing.linkLossTimeout) {
                        await self.record(sample, for: current)
                    }
                } catch .timedOut {
                    await self.deliver(.keepAliveExpired, for: current)
                    return
                } catch {
                    // A refusal still proves the link is alive; a lost link is reported by the session.
                }
            }
        }
    }

    /// The session, if no request went out since the last look and it is still current.
    private func sessionNeedingKeepAlive(for linkGeneration: Int) -> ModuleSession? {
        guard linkGeneration == generation, state == .ready else { return nil }
        defer { requestedSinceKeepAlive = false }
        return requestedSinceKeepAlive ? nil : session
    }

    /// Closes the link and reports it closed only once it is: a program that disconnects and
    /// exits must not leave the module linked (BlueZ keeps a link its client forgot).
    private func closeLink() {
        let closing = releaseLink()
        let current = generation
        Task { [weak self] in
            await closing.value
            await self?.deliver(.linkClosed, for: current)
        }
    }

    /// Drops the session and link of the current generation; results still on their way for
    /// them are ignored from now on. Requests outstanding on the session fail as disconnected.
    /// Returns the task that closes them.
    @discardableResult
    private func releaseLink() -> Task<Void, Never> {
        generation += 1
        moduleClock.reset()
        step?.cancel()
        keepAlive?.cancel()
        let (oldSession, oldLink, previous) = (session, link, closing)
        session = nil
        link = nil
        // Closes run one after another, and the next link waits for them (startConnect): a
        // disconnect still on its way must not take down the link made after it.
        let task = Task {
            await previous?.value
            await oldSession?.close()
            await oldLink?.close()
        }
        closing = task
        return task
    }

    private func scheduleRetry(after delay: Duration) {
        retryTimer?.cancel()
        let (current, clock) = (generation, clock)
        retryTimer = Task { [weak self] in
            do {
                try await clock.sleep(for: delay)
            } catch {
                return
            }
            await self?.deliver(.retryDue, for: current)
        }
    }
}
