public import UnleashedProtocol

/// A snapshot of the module and its camera, as `getStatus` reports it.
public struct CameraStatus: Hashable, Sendable {
    public var moduleBattery: Int
    public var cameraBattery: Int?
    public var storage: StorageState?
    public var shotsRemaining: Int?
    public var cameraPower: CameraPower
    public var exposureMode: ExposureMode?
    public var meteredEV: ExposureStops?
    public var busy: Bool
    public var shotCounter: Int

    init(_ fields: Fields) {
        moduleBattery = Int(fields.moduleBattery ?? 0)
        cameraBattery = fields.cameraBattery.map(Int.init)
        storage = fields.storageState
        shotsRemaining = fields.shotsRemaining.map(Int.init)
        cameraPower = fields.cameraPower ?? .off
        exposureMode = fields.exposureMode
        meteredEV = fields.meteredEV
        busy = fields.busy ?? false
        shotCounter = Int(fields.shotCounter ?? 0)
    }
}

/// A picture the camera reported taken.
public struct Shot: Hashable, Sendable {
    /// The module's shot counter for this picture.
    public var counter: Int
    /// From sending `shoot` to the camera's report, as this host measured it.
    public var latency: Duration
    /// The camera's clock at the shot, if it told.
    public var cameraTime: UInt64?
}

/// Why a camera operation failed, worded for the person who asked.
public enum CameraError: Error, Hashable, Sendable {
    case unknownSetting(String)
    case unreadableValue(SettingID, String)
    case settingNotOffered(SettingID)
    case readOnly(SettingID)
    case valueNotOffered(SettingValue, nearest: [SettingValue], offered: [SettingValue])
    case shotNotReported(after: Duration)
    case session(SessionError)
}

extension CameraError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unknownSetting(let name):
            "there is no setting called '\(name)'; settings are: \(SettingID.userNames.joined(separator: ", "))"
        case .unreadableValue(let setting, let text):
            "'\(text)' is not a \(setting.displayName) value; write it like \(setting.valueExample)"
        case .settingNotOffered(let setting):
            "this camera has no \(setting.displayName) setting"
        case .readOnly(let setting):
            "this camera reports \(setting.displayName) but does not let it be changed"
        case .valueNotOffered(let value, let nearest, let offered):
            "\(value.setting.displayName) \(value.text) is not offered by this camera; "
                + (nearest.isEmpty
                    ? "it offers: \(offered.map(\.text).joined(separator: ", "))"
                    : "nearest: \(nearest.map(\.text).joined(separator: ", "))")
        case .shotNotReported(let after):
            "the camera accepted the trigger but reported no picture within \(after.shortDescription)"
        case .session(let error):
            error.description
        }
    }
}

/// A camera behind an Unleashed module: the first cut of the camera API, over a ``ModuleSession``.
public actor ModuleCamera {
    /// What the module said in the handshake.
    public nonisolated let identity: ModuleIdentity

    private let session: ModuleSession
    private let clock: any Clock<Duration>
    /// Armed shot reports by ticket: nil until the report arrives.
    private var shotReports: [Int: Fields?] = [:]
    private var shotWaiters: [Int: CheckedContinuation<Fields?, Never>] = [:]
    private var nextTicket = 0
    private var eventPump: Task<Void, Never>?

    /// Says `hello` on `session` and starts following the module's events.
    public init(session: ModuleSession, clock: any Clock<Duration> = ContinuousClock()) async throws(CameraError) {
        self.session = session
        self.clock = clock
        do {
            identity = try await session.start()
        } catch {
            throw .session(error)
        }
        let events = session.events
        eventPump = Task { [weak self] in
            for await event in events {
                await self?.handle(event)
            }
            await self?.releaseShotWaiters()
        }
    }

    /// The module's and camera's state now.
    public func status() async throws(CameraError) -> CameraStatus {
        CameraStatus(try await request(.getStatus))
    }

    /// Every setting the camera has, with the values it offers now.
    public func settings() async throws(CameraError) -> [SettingDescriptor] {
        try await request(.listSettings).descriptors
    }

    /// One setting's value now.
    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        let fields = try await request(.getSetting, Fields { $0.setting = setting })
        guard let value = fields.value else { throw .settingNotOffered(setting) }
        return value
    }

    /// Reads a value as a person typed it for `setting`.
    public nonisolated func parse(_ text: String, for setting: SettingID) throws(CameraError) -> SettingValue {
        guard let value = SettingValue(setting: setting, text: text) else { throw .unreadableValue(setting, text) }
        return value
    }

    /// Changes a setting, after checking the camera offers the value; returns the value in effect.
    ///
    /// - Throws: ``CameraError/valueNotOffered(_:nearest:offered:)`` naming the nearest offered
    ///   values, so the caller can say what would work.
    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
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
        })
        return fields.value ?? value
    }

    /// Takes one picture and waits until the camera reports it.
    public func shoot(reportTimeout: Duration = .seconds(10)) async throws(CameraError) -> Shot {
        let ticket = armShotReport()
        let elapsed = stopwatch(clock)
        do {
            _ = try await session.request(.shoot)
        } catch {
            disarmShotReport(ticket)
            throw .session(error)
        }
        let report = await shotReport(ticket, timeout: reportTimeout)
        let latency = elapsed()
        guard let fields = report, let counter = fields.shotCounter else {
            throw .shotNotReported(after: reportTimeout)
        }
        return Shot(counter: Int(counter), latency: latency, cameraTime: fields.cameraTime)
    }

    /// Ends the session and the link.
    public func close() async {
        await session.close()
        eventPump?.cancel()
    }

    // MARK: - Internals

    private func request(_ opcode: Opcode, _ fields: Fields = Fields()) async throws(CameraError) -> Fields {
        do {
            return try await session.request(opcode, fields)
        } catch {
            throw .session(error)
        }
    }

    /// Starts listening for the next `shotCompleted` before the trigger is sent, so a fast
    /// camera's report cannot slip past.
    private func armShotReport() -> Int {
        nextTicket += 1
        shotReports[nextTicket] = .some(nil)
        return nextTicket
    }

    private func disarmShotReport(_ ticket: Int) {
        shotReports[ticket] = nil
        shotWaiters.removeValue(forKey: ticket)?.resume(returning: nil)
    }

    private func shotReport(_ ticket: Int, timeout: Duration) async -> Fields? {
        if case .some(.some(let fields)) = shotReports[ticket] {
            shotReports[ticket] = nil
            return fields
        }
        let clock = clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            if !Task.isCancelled { await self?.disarmShotReport(ticket) }
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { shotWaiters[ticket] = $0 }
    }

    private func handle(_ event: SessionEvent) {
        guard case .module(.shotCompleted, let fields) = event else { return }
        for (ticket, report) in shotReports where report == nil {
            if let waiter = shotWaiters.removeValue(forKey: ticket) {
                shotReports[ticket] = nil
                waiter.resume(returning: fields)
            } else {
                shotReports[ticket] = .some(fields)
            }
        }
    }

    private func releaseShotWaiters() {
        for ticket in Array(shotReports.keys) { disarmShotReport(ticket) }
    }
}

/// Starts timing on `clock`; the returned function tells the time elapsed since.
public func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
}
