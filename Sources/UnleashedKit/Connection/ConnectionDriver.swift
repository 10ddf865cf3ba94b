public import CameraKit

/// How one step of a connection failed, in the terms the driver turns into the machine's inputs.
public enum ConnectionStepFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device is there but does not offer the protocol's service (the wrong device, or its
    /// remote switched off).
    case notThisDevice(String)
    /// The device speaks the protocol in a version or a mode this client cannot use; retrying
    /// does not help.
    case incompatible(String)
    /// The link went down.
    case lost(String)
    /// Anything else, which may work on the next attempt.
    case failed(String)

    public var description: String {
        switch self {
        case .notThisDevice(let reason), .incompatible(let reason), .lost(let reason), .failed(let reason): reason
        }
    }
}

/// What a session reports while its link is up.
public enum LinkReport<Event: Sendable>: Sendable {
    /// Something for the connection's events.
    case event(Event)
    /// The link went down.
    case lost(String)
}

/// What one keep-alive learnt.
public enum KeepAliveOutcome: Hashable, Sendable {
    /// The device is there.
    case alive
    /// The device stopped answering: the link is lost.
    case expired
    /// Keep-alives end without a verdict (they were cancelled).
    case stopped
}

/// What differs between the module's protocol and a camera brand's on one connection: how a
/// device is found and linked to, how its services are resolved into a session, the handshake,
/// the keep-alive and the events. Everything else (the order of the steps, retries, link
/// generations, closing) is the ``ConnectionDriver``'s, the same for every dialect.
public protocol ConnectionDialect: Sendable {
    /// A link that is up but whose services have not been looked at.
    associatedtype Link: Sendable
    /// The link with its services resolved: what requests and the handshake go through.
    associatedtype Session: Sendable
    /// What a successful handshake tells about the device.
    associatedtype Greeting: Sendable
    /// What the connection reports, state changes included.
    associatedtype Event: Sendable

    /// The thread the connection runs on; nil for Swift's shared pool.
    var executor: ExecutorThread? { get }
    /// How long a scan looks for the device.
    var scanTimeout: Duration { get }
    /// How long the handshake may take before it counts as failed; nil leaves the limit to the
    /// handshake itself.
    var handshakeLimit: Duration? { get }
    /// How often ``keepAlive(_:)`` runs while the connection is ready; nil for none.
    var keepAliveInterval: Duration? { get }
    /// What the device is called in messages ("module", "camera").
    var deviceWord: String { get }
    /// Whether ``ConnectionDriver/disconnect()`` ends ``ConnectionDriver/events`` too.
    var endsEventsOnDisconnect: Bool { get }

    /// Whether the device was seen within `timeout`.
    func discover(timeout: Duration) async -> Bool
    /// Links to the device that ``discover(timeout:)`` found.
    func connect() async throws(ConnectionStepFailure) -> Link
    /// Finds the protocol's services on `link` and subscribes to them.
    func resolve(_ link: Link) async throws(ConnectionStepFailure) -> Session
    /// Reads what `session` says outside requests and reports it, until the link ends.
    func relay(_ session: Session, to report: @escaping @Sendable (LinkReport<Event>) async -> Void) async
    /// Greets the device; a nil greeting keeps the one before.
    func handshake(_ session: Session) async throws(ConnectionStepFailure) -> Greeting?
    /// Proves the device is still there.
    func keepAlive(_ session: Session) async -> KeepAliveOutcome
    /// The event that reports a change of state.
    func stateChanged(_ state: ConnectionState) -> Event
    /// Ends a session; its link is closed after it.
    func close(_ session: Session) async
    /// Takes a link down; idempotent.
    func close(_ link: Link) async
}

extension ConnectionDialect {
    public var executor: ExecutorThread? { nil }
    public var handshakeLimit: Duration? { nil }
    public var endsEventsOnDisconnect: Bool { false }
    public func close(_ session: Session) async {}

    /// Whether a link provider's `discover` returned (the device was seen) rather than threw.
    public static func seen<Failure: Error>(_ discover: () async throws(Failure) -> Void) async -> Bool {
        do throws(Failure) {
            try await discover()
            return true
        } catch {
            return false
        }
    }

    /// A link provider's `connect`, its failure in its own words as one worth retrying.
    public static func linking<Link, Failure: Error & CustomStringConvertible>(
        _ connect: () async throws(Failure) -> Link
    ) async throws(ConnectionStepFailure) -> Link {
        do throws(Failure) {
            return try await connect()
        } catch {
            throw .failed(error.description)
        }
    }
}

/// Why waiting for a ready connection ended without one.
public enum ConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The connection gave up.
    case failed(ConnectionFailure)
    /// The connection was closed on request.
    case disconnected
    /// Not ready within the time allowed; the connection keeps trying.
    case notReady(ConnectionState, after: Duration)

    public var description: String { describing("device") }

    /// The error in words that name what was connected to: `module`, `camera`.
    public func describing(_ device: String) -> String {
        switch self {
        case .failed(let failure): "could not connect to the \(device): \(failure)"
        case .disconnected: "the connection to the \(device) was closed"
        case .notReady(let state, let after): "the \(device) was not ready within \(after.shortDescription) (\(state))"
        }
    }
}

/// The driver of a ``ConnectionStateMachine`` for modules and cameras alike: it carries out the
/// machine's actions (scan, connect, resolve, handshake, keep-alive while ready, close, retry on
/// the clock) through a ``ConnectionDialect``, feeds back what happened and keeps the session of
/// the current link. ``ModuleConnection`` and `RemoteConnection` are this driver over the
/// module's dialect and a camera brand's.
///
/// Work started for one link (a scan, a connect, a handshake) can finish after that link is
/// gone; each such result carries the link generation it was started for and is dropped when
/// stale.
public actor ConnectionDriver<D: ConnectionDialect> {
    /// State changes and the device's events, in order. One consumer.
    public nonisolated let events: AsyncStream<D.Event>

    /// The state now.
    public private(set) var state: ConnectionState = .idle
    /// What the device said in its last successful handshake.
    public private(set) var greeting: D.Greeting?

    /// The thread this connection runs on (the dialect's); nil for Swift's shared pool.
    public nonisolated let executor: ExecutorThread?
    private nonisolated let poolIsolation = PoolIsolation()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? poolIsolation.unownedExecutor
    }

    let dialect: D
    private var machine: ConnectionStateMachine
    private let clock: any Clock<Duration>
    private let sink: AsyncStream<D.Event>.Continuation

    private var link: D.Link?
    /// The session of the current link, once its services are resolved.
    private(set) var session: D.Session?
    private var generation = 0
    private var step: Task<Void, Never>?
    private var pump: Task<Void, Never>?
    private var keepAlive: Task<Void, Never>?
    private var retryTimer: Task<Void, Never>?
    /// Closes the links before; the latest waits for the ones before it.
    private var closing: Task<Void, Never>?
    private var waiters = StateWaiters()

    /// A connection in `idle`; call ``connect()``.
    ///
    /// - Parameter seed: makes the retry jitter repeatable.
    public init(_ dialect: D, policy: ReconnectPolicy = ReconnectPolicy(), clock: any Clock<Duration> = ContinuousClock(),
                seed: UInt64 = .random(in: .min ... .max)) {
        self.dialect = dialect
        executor = dialect.executor
        self.clock = clock
        machine = ConnectionStateMachine(policy: policy, seed: seed)
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    // MARK: - Public operations

    /// Starts connecting (or reconnecting after a failure); returns at once.
    public func connect() {
        apply(.connectRequested)
    }

    /// Waits until the device is ready.
    ///
    /// - Throws: ``ConnectionError/failed(_:)`` when the connection gives up,
    ///   ``ConnectionError/disconnected`` when it is closed, ``ConnectionError/notReady(_:after:)``
    ///   after `timeout` (nil waits as long as it takes).
    public func waitUntilReady(timeout: Duration? = nil) async throws(ConnectionError) {
        let settled = await waitForState(timeout: timeout) { [.ready, .failed, .idle].contains($0.phase) }
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
        if dialect.endsEventsOnDisconnect { sink.finish() }
    }

    /// The session while the connection is ready; nil otherwise.
    public var readySession: D.Session? {
        state == .ready ? session : nil
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

    private func settleWaiter(_ id: Int, with state: ConnectionState?) {
        waiters.settle(id, with: state)
    }

    // MARK: - The machine

    private func apply(_ input: ConnectionStateMachine.Input) {
        let actions = machine.handle(input)
        if machine.state != state {
            state = machine.state
            if [.reconnecting, .failed, .idle].contains(state.phase) { releaseLink() }
            sink.yield(dialect.stateChanged(state))
            waiters.changed(to: state)
        }
        for action in actions { perform(action) }
    }

    /// Applies `input` if it comes from the link generation still current.
    private func deliver(_ input: ConnectionStateMachine.Input, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        apply(input)
    }

    private func perform(_ action: ConnectionStateMachine.Action) {
        switch action {
        case .startScan: startScan()
        case .stopScan: step?.cancel()
        case .connect: startConnect()
        case .resolveServices: startResolving()
        case .startHandshake: startHandshake()
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
        let (current, dialect) = (generation, dialect)
        step = Task { [weak self] in
            let found = await dialect.discover(timeout: dialect.scanTimeout)
            await self?.deliver(found ? .deviceFound : .scanTimedOut, for: current)
        }
    }

    private func startConnect() {
        generation += 1
        let (current, dialect, closing) = (generation, dialect, closing)
        step = Task { [weak self] in
            await closing?.value
            do throws(ConnectionStepFailure) {
                let link = try await dialect.connect()
                guard let self else { return await dialect.close(link) }
                await self.linked(link, for: current)
            } catch {
                await self?.deliver(.linkFailed(error.description), for: current)
            }
        }
    }

    private func linked(_ newLink: D.Link, for linkGeneration: Int) async {
        guard linkGeneration == generation else { return await dialect.close(newLink) }
        link = newLink
        apply(.linkUp)
    }

    private func startResolving() {
        guard let link else { return apply(.linkLost("the link closed")) }
        let (current, dialect) = (generation, dialect)
        step = Task { [weak self] in
            do throws(ConnectionStepFailure) {
                let session = try await dialect.resolve(link)
                await self?.resolved(session, for: current)
            } catch .notThisDevice(let reason) {
                await self?.deliver(.servicesMissing(reason), for: current)
            } catch {
                await self?.deliver(.linkLost(error.description), for: current)
            }
        }
    }

    /// Keeps the session and relays what it reports from now on, before the handshake starts.
    private func resolved(_ newSession: D.Session, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        session = newSession
        let dialect = dialect
        pump = Task { [weak self] in
            await dialect.relay(newSession) { [weak self] report in await self?.relayed(report, for: linkGeneration) }
        }
        apply(.servicesResolved)
    }

    private func relayed(_ report: LinkReport<D.Event>, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        switch report {
        case .event(let event): sink.yield(event)
        case .lost(let reason): apply(.linkLost(reason))
        }
    }

    private func startHandshake() {
        guard let session else { return apply(.linkLost("the link closed")) }
        let (current, dialect, clock) = (generation, dialect, clock)
        step = Task { [weak self] in
            let timer = dialect.handshakeLimit.map { limit in
                Task { [weak self] in
                    try? await clock.sleep(for: limit)
                    if !Task.isCancelled {
                        await self?.deliver(.handshakeFailed(
                            "the \(dialect.deviceWord) did not finish its handshake within \(limit.shortDescription)"), for: current)
                    }
                }
            }
            defer { timer?.cancel() }
            do throws(ConnectionStepFailure) {
                let greeting = try await dialect.handshake(session)
                await self?.handshakeDone(greeting, for: current)
            } catch .incompatible(let reason) {
                await self?.deliver(.incompatible(reason), for: current)
            } catch .lost(let reason) {
                await self?.deliver(.linkLost(reason), for: current)
            } catch {
                await self?.deliver(.handshakeFailed(error.description), for: current)
            }
        }
    }

    private func handshakeDone(_ greeting: D.Greeting?, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        if let greeting { self.greeting = greeting }
        apply(.handshakeSucceeded)
    }

    private func startKeepAlive() {
        keepAlive?.cancel()
        guard let interval = dialect.keepAliveInterval else { return }
        let (current, clock, dialect) = (generation, clock, dialect)
        keepAlive = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    try await clock.sleep(for: interval)
                } catch {
                    return
                }
                guard let self else { return }
                guard let session = await self.readySession(for: current) else { continue }
                switch await dialect.keepAlive(session) {
                case .alive: continue
                case .expired:
                    await self.deliver(.keepAliveExpired, for: current)
                    return
                case .stopped: return
                }
            }
        }
    }

    /// The session, if the connection is ready on link generation `linkGeneration`.
    private func readySession(for linkGeneration: Int) -> D.Session? {
        linkGeneration == generation ? readySession : nil
    }

    /// Closes the link and reports it closed only once it is: a program that disconnects and
    /// exits must not leave the device linked (BlueZ keeps a link its client forgot).
    private func closeLink() {
        let closing = releaseLink()
        let current = generation
        Task { [weak self] in
            await closing.value
            await self?.deliver(.linkClosed, for: current)
        }
    }

    /// Drops the session and link of the current generation; results still on their way for
    /// them are ignored from now on. Returns the task that closes them.
    @discardableResult
    private func releaseLink() -> Task<Void, Never> {
        generation += 1
        step?.cancel()
        keepAlive?.cancel()
        pump?.cancel()
        let (oldSession, oldLink, previous, dialect) = (session, link, closing, dialect)
        session = nil
        link = nil
        // Closes run one after another, and the next link waits for them (startConnect): a
        // disconnect still on its way must not take down the link made after it.
        let task = Task {
            await previous?.value
            if let oldSession { await dialect.close(oldSession) }
            if let oldLink { await dialect.close(oldLink) }
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

/// The isolation of an actor that may run on an ``ExecutorThread`` or, without one, as any
/// actor does: a plain actor to lend its executor.
actor PoolIsolation {}
