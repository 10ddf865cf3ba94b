public import CameraKit
import UnleashedProtocol

/// How patient a ``ModuleCamera`` is.
public struct ModuleCameraTiming: Hashable, Sendable {
    /// How long an operation waits for the module to be (re)connected before failing.
    public var reconnectWait: Duration
    /// How long after the exposure a picture may take to be reported.
    public var shotReportGrace: Duration

    public init(reconnectWait: Duration = .seconds(30), shotReportGrace: Duration = .seconds(10)) {
        self.reconnectWait = reconnectWait
        self.shotReportGrace = shotReportGrace
    }
}

/// A camera behind an Unleashed module, over a ``ModuleConnection`` that reconnects on its own.
///
/// Shots are accounted for by the module's shot counter: a picture is reported once, from its
/// `shotCompleted` event or, when that event was lost (a gap in the event numbering, a dropped
/// link), from the counter that `getStatus` reads back. A trigger whose outcome cannot be learned
/// fails with a typed reason; it is never reported twice.
public actor ModuleCamera: Camera {
    public nonisolated let identity: CameraIdentity

    /// The thread this camera runs on, its connection's (see ``GATTLinkProvider/executor``);
    /// nil for Swift's shared pool. A caller that prefers it for its task
    /// (`withTaskExecutorPreference`) makes a request and its answer one thread's work.
    public nonisolated var executor: ExecutorThread? { connection.executor }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? poolIsolation.unownedExecutor
    }

    private nonisolated let poolIsolation = PoolIsolation()
    private nonisolated let connection: ModuleConnection
    private let clock: any Clock<Duration>
    private let timing: ModuleCameraTiming
    private let hub = CameraEventHub()
    private var waiters: [Int: Waiter] = [:]
    private var nextID = 0
    private var pump: Task<Void, Never>?
    /// The module's shot counter as last learned; nil until read.
    private var shotCounter: Int?
    /// The highest counter handed out in a ``Shot``: no counter is reported twice.
    private var reportedThrough = Int.min
    /// Events may have been lost since the counter was read.
    private var needsResync = true
    private var shutterSpeed: SettingValue?
    /// The connection's states up to its first `ready` happened before this camera existed.
    private var pastFirstReady = false

    /// Connects through `connection` and waits until the module is ready.
    ///
    /// - Parameter connectTimeout: how long to wait for the first connection.
    public init(connection: ModuleConnection, clock: any Clock<Duration> = ContinuousClock(),
                timing: ModuleCameraTiming = ModuleCameraTiming(), connectTimeout: Duration = .seconds(20),
                name: String = "module") async throws(CameraError) {
        self.connection = connection
        self.clock = clock
        self.timing = timing
        await connection.connect()
        do {
            try await connection.waitUntilReady(timeout: connectTimeout)
        } catch {
            await connection.disconnect()
            throw .notConnected(error.describing("module"))
        }
        let module = await connection.identity
        identity = CameraIdentity(
            name: name, firmwareVersion: module?.firmwareVersion, protocolVersion: module?.protocolVersion,
            capabilities: module?.capabilities ?? [], cameraModel: module?.cameraModel)
        let events = connection.events
        pump = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    // MARK: - Camera

    public func events() -> AsyncStream<CameraEvent> {
        hub.subscribe()
    }

    /// How many subscriptions to ``events()`` are open.
    public nonisolated var eventSubscriberCount: Int { hub.subscriberCount }

    public func status() async throws(CameraError) -> CameraStatus {
        let fields = try await request(.getStatus, retryAfterLinkLoss: true)
        let counter = Int(fields.shotCounter ?? 0)
        learnCounter(counter)
        if let ev = fields.meteredEV { lastMeteredEV = ev }
        return CameraStatus(
            connection: await connection.state,
            moduleBattery: fields.moduleBattery.map(Int.init),
            cameraBattery: fields.cameraBattery.map(Int.init),
            storage: fields.storageState,
            shotsRemaining: fields.shotsRemaining.map(Int.init),
            cameraPower: fields.cameraPower ?? .off,
            exposureMode: fields.exposureMode,
            meteredEV: fields.meteredEV,
            busy: fields.busy ?? false,
            shotCounter: counter)
    }

    public func settings() async throws(CameraError) -> [SettingDescriptor] {
        try requireCapability(.readSettings, "reading settings")
        let descriptors = try await request(.listSettings, retryAfterLinkLoss: true).descriptors
        if let shutter = descriptors.first(where: { $0.setting == .shutterSpeed }) { shutterSpeed = shutter.value }
        return descriptors
    }

    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        try requireCapability(.readSettings, "reading settings")
        let fields = try await request(.getSetting, Fields { $0.setting = setting }, retryAfterLinkLoss: true)
        guard let value = fields.value else { throw .settingNotOffered(setting) }
        if setting == .shutterSpeed { shutterSpeed = value }
        return value
    }

    /// - Throws: ``CameraError/valueNotOffered(_:nearest:offered:)`` naming the nearest offered
    ///   values, so the caller can say what would work; nothing is sent then.
    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        try requireCapability(.writeSettings, "changing settings")
        let setting = value.setting
        guard let descriptor = try await settings().first(where: { $0.setting == setting }) else {
            throw .settingNotOffered(setting)
        }
        guard !descriptor.readOnly else { throw .readOnly(setting) }
        guard descriptor.choices.contains(value) else {
            throw .valueNotOffered(value, nearest: value.nearest(among: descriptor.choices), offered: descriptor.choices)
        }
        let fields = try await request(.setSetting, Fields {
            $0.setting = setting
            $0.value = value
        }, retryAfterLinkLoss: true)
        let inEffect = fields.value ?? value
        if setting == .shutterSpeed { shutterSpeed = inEffect }
        return inEffect
    }

    public func focus(hold: Bool = false) async throws(CameraError) -> FocusResult {
        try requireCapability(.focus, "focusing")
        let fields = try await request(.halfPress, Fields { $0.hold = hold ? true : nil })
        return fields.focusResult ?? .failed
    }

    public func release() async throws(CameraError) {
        _ = try await request(.release, retryAfterLinkLoss: true)
    }

    /// How many times a trigger refused as `busy` is sent again, each after the camera says it
    /// is ready (or a short pause): `busy` means nothing was done, so a retry is safe.
    static let busyRetries = 3

    public func shoot() async throws(CameraError) -> Shot {
        try await shoot(scheduledAt: nil)
    }

    public var schedulesShots: Bool {
        get async {
            guard identity.capabilities.contains(.scheduledFire) else { return false }
            return await connection.moduleTime(at: .now) != nil
        }
    }

    /// The furthest ahead a shot is scheduled on the module; a later instant is waited for here
    /// first (modules refuse more than 2 s, PROTOCOL.md §9.6).
    static let longestScheduleLead: Duration = .seconds(1)

    public func shoot(at instant: ContinuousClock.Instant) async throws(CameraError) -> Shot {
        guard await schedulesShots else {
            try await waitUntil(instant)
            return try await shoot(scheduledAt: nil)
        }
        if instant - .now > Self.longestScheduleLead { try await waitUntil(instant - Self.longestScheduleLead) }
        return try await shoot(scheduledAt: instant)
    }

    /// How long a scheduled shot's answer may take once the module has pressed: as long as any
    /// request's (PROTOCOL.md §9.1).
    static let answerAfterPress: Duration = .seconds(3)

    /// A shot now, or pressed by the module at `instant` on its own timer, with the requests the
    /// link sent again meanwhile (``Shot/resent``): the session's count before and after, so it
    /// also counts another caller's request resent at the same time.
    private func shoot(scheduledAt instant: ContinuousClock.Instant?) async throws(CameraError) -> Shot {
        let resentBefore = await connection.sessionFigures()?.retransmissions
        var shot = try await takeShot(scheduledAt: instant)
        if let resentBefore, let resentAfter = await connection.sessionFigures()?.retransmissions {
            // A new session (the link came back meanwhile) counts from zero.
            shot.resent = resentAfter >= resentBefore ? resentAfter - resentBefore : resentAfter
        }
        return shot
    }

    private func takeShot(scheduledAt instant: ContinuousClock.Instant?) async throws(CameraError) -> Shot {
        try requireCapability(.shoot, "shooting")
        var lostLinkRetried = false
        var busyRetries = Self.busyRetries
        while true {
            try await ensureReady()
            let baseline = try await knownShotCounter()
            let reportWait = try await exposureTime() + timing.shotReportGrace
            let ticket = arm { event in
                if case .shotCompleted(let counter, _) = event { return counter > baseline }
                return event.mayHaveLostEvents
            }
            defer { disarm(ticket) }
            let elapsed = stopwatch(clock)
            do {
                var trigger = Fields()
                var timeout: Duration?
                if let instant, let estimate = await connection.moduleTime(at: instant) {
                    trigger.fireAt = estimate.moduleMicros
                    // The module answers once it has pressed: the time limit runs from then.
                    timeout = Self.answerAfterPress + max(.zero, instant - .now)
                }
                _ = try await request(.shoot, trigger, timeout: timeout)
            } catch .refused(_, .busy, let message) {
                guard busyRetries > 0 else { throw .refused(Opcode.shoot.description, .busy, message: message) }
                busyRetries -= 1
                await waitUntilNotBusy(within: .milliseconds(500))
                continue
            } catch {
                if let shot = try await confirmAfterFailedTrigger(error, baseline: baseline, elapsed: elapsed) { return shot }
                // The link dropped before the module took the trigger, and the counter shows no
                // picture: the old link is gone, so nothing can still arrive; trigger again once.
                if case .notConnected = error, !lostLinkRetried {
                    lostLinkRetried = true
                    continue
                }
                throw error
            }
            return try await awaitPicture(ticket, baseline: baseline, within: reportWait, elapsed: elapsed)
        }
    }

    /// Waits for the camera's `busy` = false event, or `limit`, whichever comes first.
    private func waitUntilNotBusy(within limit: Duration) async {
        let ticket = arm { $0 == .busy(false) }
        defer { disarm(ticket) }
        _ = await wait(ticket, timeout: limit)
    }

    public func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        try requireCapability(.bulb, "bulb exposure")
        let milliseconds = duration.wholeMilliseconds
        guard (1...86_400_000).contains(milliseconds) else {
            throw .invalidArgument("a bulb exposure lasts from 1 ms to 24 h")
        }
        try await ensureReady()
        let current = try await value(of: .shutterSpeed)
        guard case .shutterSpeed(let speed) = current, speed.isBulb else { throw .notInBulbMode(current: current) }
        let baseline = try await knownShotCounter()
        let ticket = arm { event in
            switch event {
            case .shotCompleted(let counter, _): counter > baseline
            case .bulbDeadlineFired: true
            default: event.mayHaveLostEvents
            }
        }
        defer { disarm(ticket) }
        let elapsed = stopwatch(clock)
        do {
            // The module times the exposure to the millisecond and closes the shutter itself,
            // whether or not this host is still there (PROTOCOL.md §7.7).
            _ = try await request(.bulbStart, Fields { $0.duration = UInt32(milliseconds) })
        } catch {
            await endBulbIfOpen()
            guard let shot = try await confirmAfterFailedTrigger(error, baseline: baseline, elapsed: elapsed) else { throw error }
            return BulbExposure(shot: shot, exposed: nil, ending: .deadline)
        }
        return try await awaitBulb(ticket, baseline: baseline, duration: duration, elapsed: elapsed)
    }

    public func startVideo() async throws(CameraError) {
        try requireCapability(.video, "video recording")
        _ = try await request(.videoStart)
    }

    public func stopVideo() async throws(CameraError) -> Duration {
        try requireCapability(.video, "video recording")
        let fields = try await request(.videoStop, retryAfterLinkLoss: true)
        return .milliseconds(Int64(fields.duration ?? 0))
    }

    public func setTime(_ time: WallTime) async throws(CameraError) {
        try requireCapability(.setTime, "setting the camera's clock")
        guard (-720...840).contains(time.utcOffsetMinutes) else {
            throw .invalidArgument("the UTC offset must be between -12:00 and +14:00")
        }
        _ = try await request(.setTime, Fields {
            $0.utcTime = time.unixMilliseconds
            $0.utcOffset = Int16(time.utcOffsetMinutes)
        }, retryAfterLinkLoss: true)
    }

    public func geotag(_ position: GeoPosition) async throws(CameraError) {
        try requireCapability(.geotag, "geotagging")
        if let problem = position.problem { throw .invalidArgument(problem) }
        _ = try await request(.geotag, Fields {
            $0.latitude = Int32((position.latitude * 10_000_000).rounded())
            $0.longitude = Int32((position.longitude * 10_000_000).rounded())
            $0.altitude = position.altitude.map { Int32(($0 * 100).rounded()) }
            $0.utcTime = position.fixTime
        }, retryAfterLinkLoss: true)
    }

    public func close() async {
        await connection.disconnect()
        pump?.cancel()
        for id in Array(waiters.keys) { settle(id, with: .closed) }
        hub.finish()
    }

    /// The state of the link now.
    public var connectionState: ConnectionState {
        get async { await connection.state }
    }

    public var isReady: Bool {
        get async { await connection.state == .ready }
    }

    /// Reads the shot counter and shutter speed now if they are not known, so that `shoot()`
    /// at the deadline sends its trigger without a round trip first. A failed read is left for
    /// the shot itself to report.
    public func prepareShot() async -> Bool {
        guard await isReady else { return false }
        _ = try? await knownShotCounter()
        _ = try? await exposureTime()
        // A fresh reading of the module's timer keeps a scheduled shot's error to this round trip.
        await connection.sampleModuleClock()
        return await isReady
    }

    public private(set) var lastMeteredEV: ExposureStops?

    // MARK: - Requests

    private func requireCapability(_ capability: Capabilities, _ what: String) throws(CameraError) {
        guard identity.capabilities.contains(capability) else { throw .unsupported(what) }
    }

    /// Waits (up to ``ModuleCameraTiming/reconnectWait``) until the module is connected.
    private func ensureReady() async throws(CameraError) {
        guard await connection.state != .ready else { return }
        do {
            try await connection.waitUntilReady(timeout: timing.reconnectWait)
        } catch {
            throw .notConnected(error.describing("module"))
        }
    }

    /// Sends a request once the module is ready. Requests that are safe to run twice are sent
    /// again once after the link is regained.
    private func request(_ opcode: Opcode, _ fields: Fields = Fields(), timeout: Duration? = nil,
                         retryAfterLinkLoss: Bool = false) async throws(CameraError) -> Fields {
        for attempt in 0... {
            try await ensureReady()
            do {
                return try await connection.request(opcode, fields, timeout: timeout)
            } catch {
                let failure = CameraError(error)
                switch failure {
                case .notConnected:
                    needsResync = true
                    // The session saw the link drop before the connection's state did; let the
                    // state catch up so the next wait is for the reconnection.
                    _ = await connection.waitForState(timeout: .seconds(2)) { $0 != .ready }
                    if retryAfterLinkLoss && attempt == 0 { continue }
                case .timedOut:
                    needsResync = true
                    if retryAfterLinkLoss && attempt == 0 { continue }
                default:
                    break
                }
                throw failure
            }
        }
        preconditionFailure("unreachable")
    }

    /// The module's shot counter, read again if events may have been lost since it was learned.
    private func knownShotCounter() async throws(CameraError) -> Int {
        if needsResync || shotCounter == nil {
            needsResync = false
            _ = try await status()
        }
        return shotCounter ?? 0
    }

    private func learnCounter(_ counter: Int) {
        shotCounter = max(shotCounter ?? counter, counter)
    }

    /// How long the camera's current shutter speed keeps the shutter open.
    private func exposureTime() async throws(CameraError) -> Duration {
        let speed: SettingValue
        if let shutterSpeed {
            speed = shutterSpeed
        } else if identity.capabilities.contains(.readSettings) {
            speed = try await value(of: .shutterSpeed)
        } else {
            return .zero
        }
        guard case .shutterSpeed(let shutter) = speed, !shutter.isBulb else { return .zero }
        return .nanoseconds(Int64(shutter.numerator) * 1_000_000_000 / Int64(shutter.denominator))
    }

    // MARK: - Shot accounting

    /// After a trigger failed: a refusal is final; a timeout or a lost link may hide a picture
    /// that was taken, so the counter decides. Nil when the counter shows no picture.
    private func confirmAfterFailedTrigger(_ error: CameraError, baseline: Int, elapsed: @Sendable () -> Duration) async throws(CameraError) -> Shot? {
        switch error {
        case .timedOut, .notConnected:
            return await confirmByCounter(baseline: baseline, elapsed: elapsed)
        default:
            throw error
        }
    }

    /// Reads the counter back; a picture the camera took since `baseline` is reported once.
    ///
    /// When the camera's own report reached `ticket` meanwhile (it often follows the gap that
    /// raised the doubt), that report is used: it carries the camera's time.
    private func confirmByCounter(baseline: Int, elapsed: @Sendable () -> Duration, ticket: Int? = nil) async -> Shot? {
        let status: CameraStatus
        do throws(CameraError) {
            status = try await self.status()
        } catch {
            needsResync = true
            return nil
        }
        needsResync = false
        guard status.shotCounter > baseline else { return nil }
        if let ticket, var waiter = waiters[ticket],
           let index = waiter.queued.firstIndex(where: { if case .event(.shotCompleted(let counter, _)) = $0 { counter > baseline } else { false } }),
           case .event(.shotCompleted(let counter, let cameraTime)) = waiter.queued.remove(at: index) {
            waiters[ticket] = waiter
            if let shot = claim(counter, cameraTime: cameraTime, elapsed: elapsed, byCounter: false) { return shot }
        }
        return claim(status.shotCounter, cameraTime: nil, elapsed: elapsed, byCounter: true)
    }

    private func claim(_ counter: Int, cameraTime: UInt64?, elapsed: @Sendable () -> Duration, byCounter: Bool) -> Shot? {
        guard counter > reportedThrough else { return nil }
        reportedThrough = counter
        learnCounter(counter)
        return Shot(counter: counter, latency: elapsed(), cameraTime: cameraTime, confirmedByCounter: byCounter)
    }

    private func awaitPicture(_ ticket: Int, baseline: Int, within limit: Duration, elapsed: @escaping @Sendable () -> Duration) async throws(CameraError) -> Shot {
        while true {
            let remaining = limit - elapsed()
            switch await wait(ticket, timeout: max(remaining, .zero)) {
            case .event(.shotCompleted(let counter, let cameraTime)):
                if let shot = claim(counter, cameraTime: cameraTime, elapsed: elapsed, byCounter: false) { return shot }
            case .event:
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) { return shot }
            case .timedOut:
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) { return shot }
                throw .shotNotReported(after: limit)
            case .cancelled, .closed:
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) { return shot }
                throw .cancelled
            }
        }
    }

    /// Waits for a bulb exposure to end. Every way out closes the shutter: the module's deadline,
    /// `bulbEnd` when the caller is cancelled or the wait runs out, the module itself on link loss.
    private func awaitBulb(_ ticket: Int, baseline: Int, duration: Duration, elapsed: @escaping @Sendable () -> Duration) async throws(CameraError) -> BulbExposure {
        let limit = duration + timing.shotReportGrace
        var exposed: Duration?
        var ending = BulbExposure.Ending.deadline
        while true {
            switch await wait(ticket, timeout: max(limit - elapsed(), .zero)) {
            case .event(.bulbDeadlineFired(let length)):
                exposed = length
            case .event(.shotCompleted(let counter, let cameraTime)):
                if let shot = claim(counter, cameraTime: cameraTime, elapsed: elapsed, byCounter: false) {
                    return BulbExposure(shot: shot, exposed: exposed, ending: ending)
                }
            case .event:
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) {
                    return BulbExposure(shot: shot, exposed: exposed, ending: ending)
                }
            case .cancelled:
                ending = .stoppedEarly
                exposed = await endBulbIfOpen() ?? exposed
                // The picture is still reported; wait for it without listening to cancellation.
                let report = await waitIgnoringCancellation(ticket, timeout: timing.shotReportGrace)
                if case .event(.shotCompleted(let counter, let cameraTime)) = report,
                   let shot = claim(counter, cameraTime: cameraTime, elapsed: elapsed, byCounter: false) {
                    return BulbExposure(shot: shot, exposed: exposed, ending: ending)
                }
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) {
                    return BulbExposure(shot: shot, exposed: exposed, ending: ending)
                }
                throw .cancelled
            case .timedOut, .closed:
                await endBulbIfOpen()
                if let shot = await confirmByCounter(baseline: baseline, elapsed: elapsed, ticket: ticket) {
                    return BulbExposure(shot: shot, exposed: exposed, ending: ending)
                }
                throw .shotNotReported(after: limit)
            }
        }
    }

    /// Sends `bulbEnd` if the module is reachable; returns how long the shutter was open when
    /// it was still open. Not cancellable: it is how cancellation closes the shutter.
    @discardableResult
    private func endBulbIfOpen() async -> Duration? {
        guard await connection.state == .ready,
              let fields = try? await connection.request(.bulbEnd),
              let milliseconds = fields.duration
        else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    // MARK: - Events

    private func handle(_ event: ModuleConnectionEvent) {
        let cameraEvent: CameraEvent
        switch event {
        case .state(let state):
            guard pastFirstReady else {
                pastFirstReady = state == .ready
                return
            }
            if state != .ready { needsResync = true }
            cameraEvent = .connection(state)
        case .missedEvents(let count):
            needsResync = true
            cameraEvent = .missedEvents(count)
        case .protocolError:
            return
        case .module(let code, let fields):
            guard let translated = CameraEvent(code, fields) else { return }
            cameraEvent = translated
        }
        switch cameraEvent {
        case .shotCompleted(let counter, _): learnCounter(counter)
        case .settingChanged(let value) where value.setting == .shutterSpeed: shutterSpeed = value
        case .meteredEV(let ev): lastMeteredEV = ev
        default: break
        }
        hub.yield(cameraEvent)
        for (id, waiter) in waiters where waiter.isWanted(cameraEvent) { settle(id, with: .event(cameraEvent)) }
    }

    // MARK: - Waiting for events

    private enum WaitResult: Sendable {
        case event(CameraEvent)
        case timedOut
        case cancelled
        case closed
    }

    /// Events wanted by one operation, armed before its request goes out so that a fast reply
    /// cannot slip past.
    private struct Waiter {
        let isWanted: @Sendable (CameraEvent) -> Bool
        var queued: [WaitResult] = []
        var continuation: CheckedContinuation<WaitResult, Never>?
        var round = 0
    }

    private func arm(_ isWanted: @escaping @Sendable (CameraEvent) -> Bool) -> Int {
        nextID += 1
        waiters[nextID] = Waiter(isWanted: isWanted)
        return nextID
    }

    private func disarm(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation?.resume(returning: .closed)
    }

    private func settle(_ id: Int, with result: WaitResult, round: Int? = nil) {
        guard var waiter = waiters[id], round == nil || round == waiter.round else { return }
        if let continuation = waiter.continuation {
            waiter.continuation = nil
            waiters[id] = waiter
            continuation.resume(returning: result)
        } else {
            waiter.queued.append(result)
            waiters[id] = waiter
        }
    }

    /// The next wanted event (or what ended the wait); cancelling the calling task ends it.
    private func wait(_ id: Int, timeout: Duration) async -> WaitResult {
        await withTaskCancellationHandler {
            await waitIgnoringCancellation(id, timeout: timeout, cancelled: Task.isCancelled, cancellable: true)
        } onCancel: {
            Task { await self.settle(id, with: .cancelled) }
        }
    }

    /// Like ``wait(_:timeout:)`` but deaf to cancellation, for the steps that clean up after it.
    private func waitIgnoringCancellation(_ id: Int, timeout: Duration, cancelled: Bool = false, cancellable: Bool = false) async -> WaitResult {
        guard var waiter = waiters[id] else { return .closed }
        if cancelled { return .cancelled }
        if !cancellable { waiter.queued.removeAll { if case .cancelled = $0 { true } else { false } } }
        if !waiter.queued.isEmpty {
            let first = waiter.queued.removeFirst()
            waiters[id] = waiter
            return first
        }
        waiter.round += 1
        let round = waiter.round
        waiters[id] = waiter
        let clock = clock
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            await self?.settle(id, with: .timedOut, round: round)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            waiters[id]?.continuation = continuation
        }
    }
}

extension CameraEvent {
    /// An event that means others may have been lost: the state they carried must be re-read.
    var mayHaveLostEvents: Bool {
        switch self {
        case .missedEvents: true
        case .connection(let state): state != .ready
        default: false
        }
    }

    /// The camera event for a module event; nil for codes this version does not know.
    init?(_ code: EventCode, _ fields: Fields) {
        switch code {
        case .shotCompleted:
            self = .shotCompleted(counter: Int(fields.shotCounter ?? 0), cameraTime: fields.cameraTime)
        case .settingChanged:
            guard let value = fields.value else { return nil }
            self = .settingChanged(value)
        case .battery:
            self = .battery(module: Int(fields.moduleBattery ?? 0), camera: fields.cameraBattery.map(Int.init))
        case .storage:
            self = .storage(fields.storageState ?? .ok, shotsRemaining: fields.shotsRemaining.map(Int.init))
        case .cameraPower:
            self = .cameraPower(fields.cameraPower ?? .off)
        case .busy:
            self = .busy(fields.busy ?? false)
        case .meteredEV:
            guard let ev = fields.meteredEV else { return nil }
            self = .meteredEV(ev)
        case .bulbDeadlineFired:
            self = .bulbDeadlineFired(.milliseconds(Int64(fields.duration ?? 0)))
        case .error:
            self = .error(FailureReason(fields.statusCode ?? .internalError), message: fields.errorMessage)
        default:
            return nil
        }
    }
}

/// Starts timing on `clock`; the returned function tells the time elapsed since.
public func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
}
