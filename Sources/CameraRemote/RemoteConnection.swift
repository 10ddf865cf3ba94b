public import CameraKit
import CameraProtocols
public import UnleashedKit

/// How long a camera connection waits for each step.
public struct RemoteTiming: Hashable, Sendable {
    /// How long a scan looks for the camera.
    public var scanTimeout: Duration
    /// How long one step of an operation waits for the camera's answer.
    public var stepTimeout: Duration
    /// How long the handshake may take: Canon and Fujifilm wait for a person to confirm on
    /// the camera at the first pairing.
    public var handshakeTimeout: Duration

    public init(scanTimeout: Duration = .seconds(10), stepTimeout: Duration = .seconds(3), handshakeTimeout: Duration = .seconds(60)) {
        self.scanTimeout = scanTimeout
        self.stepTimeout = stepTimeout
        self.handshakeTimeout = handshakeTimeout
    }
}

/// What a camera connection reports, in order.
public enum RemoteConnectionEvent: Hashable, Sendable {
    case state(ConnectionState)
    /// Something the camera said outside a request.
    case signal(RemoteSignal)
    /// A packet that broke the protocol's framing; the connection carries on.
    case protocolError(String)
}

/// The link to one camera kept up by the project's connection state machine (the same table
/// and backoff a module's link follows): scan, connect, subscribe, the brand's handshake, its
/// keep-alive while ready, and after a loss, retries spaced by ``ReconnectPolicy`` so that a
/// camera that went away costs a connection attempt only now and then, not a radio kept busy.
public actor RemoteConnection {
    /// State changes and camera signals. One consumer.
    public nonisolated let events: AsyncStream<RemoteConnectionEvent>
    public private(set) var state: ConnectionState = .idle
    /// The model the last handshake reported.
    public private(set) var model: String?

    private var machine: ConnectionStateMachine
    private let provider: any GATTLinkProvider
    private let driver: any CameraRemoteDriver
    private let timing: RemoteTiming
    private let clock: any Clock<Duration>
    private let sink: AsyncStream<RemoteConnectionEvent>.Continuation

    private var link: (any GATTLink)?
    private var context: RemoteContext?
    private var generation = 0
    private var step: Task<Void, Never>?
    private var pump: Task<Void, Never>?
    private var keepAlive: Task<Void, Never>?
    private var retryTimer: Task<Void, Never>?
    private var closing: Task<Void, Never>?
    private var waiters = StateWaiters()

    public init(provider: any GATTLinkProvider, driver: any CameraRemoteDriver, policy: ReconnectPolicy = ReconnectPolicy(),
                timing: RemoteTiming = RemoteTiming(), clock: any Clock<Duration> = ContinuousClock(),
                seed: UInt64 = .random(in: .min ... .max)) {
        self.provider = provider
        self.driver = driver
        self.timing = timing
        self.clock = clock
        machine = ConnectionStateMachine(policy: policy, seed: seed)
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    /// Starts connecting; returns at once.
    public func connect() {
        apply(.connectRequested)
    }

    /// Waits until the camera is ready; fails when the connection gives up or is closed, or
    /// after `timeout` (nil waits as long as it takes).
    public func waitUntilReady(timeout: Duration? = nil) async throws(ConnectionError) {
        let settled = await waitForState(timeout: timeout) { [.ready, .failed, .idle].contains($0.phase) }
        switch settled {
        case .ready?: return
        case .failed(let failure)?: throw .failed(failure)
        case .idle?: throw .disconnected
        default: throw .notReady(state, after: timeout ?? .zero)
        }
    }

    /// Ends the connection for good; returns once the link is closed.
    public func disconnect() async {
        apply(.disconnectRequested)
        _ = await waitForState(timeout: nil) { $0 == .idle }
        await closing?.value
        sink.finish()
    }

    /// The context for an operation now, or the reason there is none.
    public func currentContext() throws(CameraError) -> RemoteContext {
        guard state == .ready, let context else {
            throw .device(DeviceFailure(.disconnected, "the camera is not connected (\(state))"))
        }
        return context
    }

    /// Waits until the state satisfies `isWanted`; nil after `timeout`.
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
            sink.yield(.state(state))
            waiters.changed(to: state)
        }
        for action in actions { perform(action) }
    }

    private func deliver(_ input: ConnectionStateMachine.Input, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        apply(input)
    }

    private func perform(_ action: ConnectionStateMachine.Action) {
        switch action {
        case .startScan: run { provider, _, timing in
            do throws(GATTError) {
                try await provider.discover(timeout: timing.scanTimeout)
                return .deviceFound
            } catch {
                return .scanTimedOut
            }
        }
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

    /// Runs one step for the current generation and applies what it returns.
    private func run(_ body: @escaping @Sendable (any GATTLinkProvider, any CameraRemoteDriver, RemoteTiming) async -> ConnectionStateMachine.Input) {
        generation += 1
        let (current, provider, driver, timing) = (generation, provider, driver, timing)
        step = Task { [weak self] in
            let input = await body(provider, driver, timing)
            await self?.deliver(input, for: current)
        }
    }

    private func startConnect() {
        generation += 1
        let (current, provider, closing) = (generation, provider, closing)
        step = Task { [weak self] in
            await closing?.value
            do throws(GATTError) {
                let link = try await provider.connect()
                guard let self else { return await link.close() }
                await self.linked(link, for: current)
            } catch {
                await self?.deliver(.linkFailed(error.description), for: current)
            }
        }
    }

    private func linked(_ newLink: any GATTLink, for linkGeneration: Int) async {
        guard linkGeneration == generation else { return await newLink.close() }
        link = newLink
        let driver = driver
        let inbox = NotificationInbox { driver.makeAssembler(for: $0) }
        context = RemoteContext(link: newLink, inbox: inbox, stepTimeout: timing.stepTimeout, clock: clock) {
            driver.explain($0, during: $1)
        }
        let events = newLink.events
        pump = Task { [weak self] in
            for await event in events {
                switch event {
                case .value(let characteristic, let packet):
                    switch await inbox.deliver(packet, on: characteristic) {
                    case .success(let message?):
                        for signal in driver.events(from: message, on: characteristic) { await self?.report(.signal(signal), for: linkGeneration) }
                    case .success(nil): break
                    case .failure(let error): await self?.report(.protocolError(error.description), for: linkGeneration)
                    }
                case .disconnected(let reason):
                    await inbox.linkLost(reason)
                    await self?.deliver(.linkLost(reason), for: linkGeneration)
                    return
                }
            }
        }
        apply(.linkUp)
    }

    private func report(_ event: RemoteConnectionEvent, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        sink.yield(event)
    }

    private func startResolving() {
        guard let link else { return apply(.linkLost("the link closed")) }
        let (current, subscriptions) = (generation, driver.subscriptions)
        step = Task { [weak self] in
            for characteristic in subscriptions {
                guard await link.offers(characteristic) else {
                    await self?.deliver(.servicesMissing("the camera has no characteristic \(characteristic.characteristic); "
                        + "check that its Bluetooth remote is switched on"), for: current)
                    return
                }
                do throws(GATTError) {
                    try await link.subscribe(characteristic)
                } catch {
                    await self?.deliver(.linkLost(error.description), for: current)
                    return
                }
            }
            await self?.deliver(.servicesResolved, for: current)
        }
    }

    private func startHandshake() {
        guard let context else { return apply(.linkLost("the link closed")) }
        let (current, driver, limit, clock) = (generation, driver, timing.handshakeTimeout, clock)
        step = Task { [weak self] in
            let timer = Task {
                try? await clock.sleep(for: limit)
                if !Task.isCancelled { await self?.deliver(.handshakeFailed("the camera did not finish its handshake within \(limit.shortDescription)"), for: current) }
            }
            defer { timer.cancel() }
            do throws(CameraError) {
                let model = try await driver.handshake(context)
                await self?.handshakeDone(model, for: current)
            } catch .device(let failure) where failure.kind == .disconnected {
                await self?.deliver(.linkLost(failure.message), for: current)
            } catch .device(let failure) where failure.kind == .unsupported || failure.kind == .permissionDenied {
                await self?.deliver(.incompatible(failure.message), for: current)
            } catch {
                await self?.deliver(.handshakeFailed(error.description), for: current)
            }
        }
    }

    private func handshakeDone(_ model: String?, for linkGeneration: Int) {
        guard linkGeneration == generation else { return }
        if let model { self.model = model }
        apply(.handshakeSucceeded)
    }

    private func startKeepAlive() {
        keepAlive?.cancel()
        guard let interval = driver.keepAliveInterval, let context else { return }
        let (current, clock, driver) = (generation, clock, driver)
        keepAlive = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    try await clock.sleep(for: interval)
                    try await driver.keepAlive(context)
                } catch is CancellationError {
                    return
                } catch let error as CameraError {
                    if case .cancelled = error { return }
                    await self?.deliver(.keepAliveExpired, for: current)
                    return
                } catch {
                    return
                }
            }
        }
    }

    private func closeLink() {
        let closing = releaseLink()
        let current = generation
        Task { [weak self] in
            await closing.value
            await self?.deliver(.linkClosed, for: current)
        }
    }

    @discardableResult
    private func releaseLink() -> Task<Void, Never> {
        generation += 1
        step?.cancel()
        keepAlive?.cancel()
        pump?.cancel()
        let (oldLink, previous) = (link, closing)
        link = nil
        context = nil
        let task = Task {
            await previous?.value
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
