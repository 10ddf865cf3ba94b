public import DBus
import Foundation
import Synchronization
public import UnleashedKit

/// One client of BlueZ on its own D-Bus connection: the mirror of BlueZ's objects, kept current,
/// and the operations a module client needs (discovery, connect, pair, disconnect, forget), each
/// with BlueZ's known failure modes handled.
///
/// Use one client per BLE session: BlueZ ties discovery and notification sessions to the
/// connection, so closing the client ends them and a new one starts clean.
public actor BlueZClient {
    /// The connection to the bus; shared with the transport made for a link.
    public nonisolated let connection: DBusConnection
    /// What every wait of this client and of the links made with it is timed on.
    public nonisolated let clock: any Clock<Duration>
    /// BlueZ's objects as last seen.
    public private(set) var tree = BlueZObjectTree()
    /// The unique name of bluetoothd, or nil while it is not on the bus.
    public private(set) var bluezOwner: String?

    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var pump: Task<Void, Never>?

    private struct Waiter {
        let check: @Sendable (BlueZClient.Snapshot) -> WaitStep
        let continuation: CheckedContinuation<Result<Void, BlueZError>, Never>
    }

    /// What a wait sees each time BlueZ's objects change.
    public struct Snapshot: Sendable {
        public let tree: BlueZObjectTree
        /// False while bluetoothd is off the bus.
        public let bluezPresent: Bool
        /// False once the bus connection is gone.
        public let busConnected: Bool
    }

    /// What a wait makes of a snapshot.
    public enum WaitStep: Sendable {
        case pending, satisfied
        case failed(BlueZError)
    }

    private init(connection: DBusConnection, clock: any Clock<Duration>) {
        self.connection = connection
        self.clock = clock
    }

    /// Connects to BlueZ on `bus`: subscribes to its signals, then reads its objects.
    ///
    /// - Parameter clock: times the client's waits and pauses, and those of its links.
    /// - Throws: ``BlueZError/noSystemBus(_:)`` or ``BlueZError/bluezNotRunning``.
    public static func open(bus: DBusConnection.Bus = .system,
                            clock: any Clock<Duration> = ContinuousClock()) async throws(BlueZError) -> BlueZClient {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.open(bus)
        } catch {
            throw .noSystemBus(error.message)
        }
        let client = BlueZClient(connection: connection, clock: clock)
        do {
            try await client.start()
        } catch {
            connection.close()
            throw error
        }
        return client
    }

    private func start() async throws(BlueZError) {
        // Characteristic values are the transport's business: dropped on the connection's
        // thread, they cost the mirror no task switch, tree update or pass over the waiters.
        let signals = connection.signals { Self.isValueOnly($0) ? nil : $0 }
        do {
            for rule in BlueZName.matchRules { try await connection.addMatch(rule) }
        } catch {
            throw .dbus(error)
        }
        pump = Task { [weak self] in
            for await message in signals {
                guard let self else { return }
                await self.handle(message)
            }
            await self?.busGone()
        }
        do {
            bluezOwner = try await connection.nameOwner(BlueZName.service)
        } catch {
            throw .dbus(error)
        }
        guard bluezOwner != nil else { throw .bluezNotRunning }
        try await reload()
    }

    /// Has the bus route only `devicePath`'s signals here from now on.
    ///
    /// A client that holds one module's link needs nothing else, and in a rig every module's
    /// notifications would otherwise reach every module's connection: eight modules would mean
    /// eight copies of each signal routed, decoded and filtered. The device's own rules are added
    /// before the broad ones go, so no change is missed in between.
    public func narrow(to devicePath: String) async throws(BlueZError) {
        do {
            for rule in BlueZName.deviceMatchRules(devicePath) { try await connection.addMatch(rule) }
            for rule in BlueZName.objectMatchRules { try await connection.removeMatch(rule) }
        } catch {
            throw .dbus(error)
        }
    }

    /// Reads the whole object tree again (at start and after bluetoothd came back).
    private func reload() async throws(BlueZError) {
        let reply = try await call("/", BlueZName.objectManager, "GetManagedObjects", timeout: .seconds(10))
        tree.load(reply.first ?? .array(element: "{oa{sa{sv}}}", []))
        settleWaiters()
    }

    /// Ends the session: BlueZ drops this connection's discovery and notification sessions.
    public func close() {
        pump?.cancel()
        connection.close()
        failAllWaiters(.connectionLost("the client was closed"))
    }

    // MARK: - Signals

    private func handle(_ message: DBusMessage) async {
        if message.isSignal("org.freedesktop.DBus", "NameOwnerChanged"), message.body.count == 3,
           message.body[0].stringValue == BlueZName.service {
            let newOwner = message.body[2].stringValue ?? ""
            if newOwner.isEmpty {
                bluezOwner = nil
                tree.clear()
                settleWaiters()
            } else {
                bluezOwner = newOwner
                try? await reload()
            }
            return
        }
        guard message.sender == bluezOwner || message.sender == BlueZName.service else { return }
        if tree.apply(message) { settleWaiters() }
    }

    private static func isValueOnly(_ message: DBusMessage) -> Bool {
        guard message.member == "PropertiesChanged", message.body.count == 3,
              message.body[0].stringValue == BlueZName.characteristic,
              case .array(_, let changed) = message.body[1], changed.count == 1,
              case .dictEntry(.string("Value"), _) = changed[0] else { return false }
        return true
    }

    private func busGone() {
        bluezOwner = nil
        tree.clear()
        settleWaiters()
    }

    // MARK: - Waiting for BlueZ's objects to change

    /// Waits until `check` says the objects are as wanted (or failed), re-checking after every
    /// change; fails with ``BlueZError/timedOut(_:)`` naming `what` after `timeout`.
    public func wait(for what: String, timeout: Duration,
                     _ check: @escaping @Sendable (Snapshot) -> WaitStep) async throws(BlueZError) {
        switch check(snapshot) {
        case .satisfied: return
        case .failed(let error): throw error
        case .pending: break
        }
        nextWaiter += 1
        let id = nextWaiter
        let clock = clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            await self?.finishWaiter(id, .failure(.timedOut(what)))
        }
        let result = await withCheckedContinuation { continuation in
            waiters[id] = Waiter(check: check, continuation: continuation)
        }
        timer.cancel()
        try result.get()
    }

    private var snapshot: Snapshot {
        Snapshot(tree: tree, bluezPresent: bluezOwner != nil, busConnected: connection.isConnected)
    }

    private func settleWaiters() {
        let now = snapshot
        for (id, waiter) in waiters {
            switch waiter.check(now) {
            case .pending: continue
            case .satisfied: finishWaiter(id, .success(()))
            case .failed(let error): finishWaiter(id, .failure(error))
            }
        }
    }

    private func finishWaiter(_ id: Int, _ result: Result<Void, BlueZError>) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: result)
    }

    private func failAllWaiters(_ error: BlueZError) {
        for id in waiters.keys { finishWaiter(id, .failure(error)) }
    }

    // MARK: - Calls

    /// Calls a BlueZ method; every call has a timeout, because BlueZ calls can hang.
    @discardableResult
    public func call(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [],
                     timeout: Duration = .seconds(10)) async throws(BlueZError) -> [DBusValue] {
        do {
            return try await connection.call(BlueZName.service, path: path, interface: interface, member: member, body, timeout: timeout)
        } catch where error.name == DBusError.serviceUnknownName {
            throw .bluezNotRunning
        } catch where error.name == "org.freedesktop.DBus.Error.AccessDenied" {
            throw .permissionDenied(error.message)
        } catch {
            throw .dbus(error)
        }
    }

    /// Sets one property.
    public func set(_ path: String, _ interface: String, _ name: String, _ value: DBusValue) async throws(BlueZError) {
        try await call(path, BlueZName.properties, "Set", [.string(interface), .string(name), .variant(value)])
    }

    // MARK: - Adapters

    /// The adapter to use: the one named, else the first. Fails when there is none, it is not
    /// there, or it is powered off.
    public func adapter(named name: String?) throws(BlueZError) -> BlueZAdapter {
        let adapters = tree.adapters
        guard !adapters.isEmpty else { throw .noAdapter }
        let chosen: BlueZAdapter
        if let name {
            guard let named = adapters.first(where: { $0.name == name || $0.address.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw .adapterNotFound(name, available: adapters.map(\.name))
            }
            chosen = named
        } else {
            chosen = adapters[0]
        }
        guard chosen.powered else { throw .adapterPoweredOff(chosen.name) }
        return chosen
    }

    // MARK: - Discovery

    /// Starts discovery on `adapter` for LE devices offering `serviceUUID`, or for every LE
    /// device when nil (cameras advertise their brand in manufacturer data, not always a service).
    public func startDiscovery(on adapter: BlueZAdapter, serviceUUID: String?) async throws(BlueZError) {
        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .bool(false)]
        if let serviceUUID { filter["UUIDs"] = .strings([serviceUUID]) }
        try await call(adapter.path, BlueZName.adapter, "SetDiscoveryFilter", [.properties(filter)])
        do {
            try await call(adapter.path, BlueZName.adapter, "StartDiscovery")
        } catch .dbus(let error) where error.name == BlueZName.Error.inProgress {
            // This connection already has a session: that is what was asked for.
        } catch .dbus(let error) where error.name == BlueZName.Error.notReady {
            throw .adapterPoweredOff(adapter.name)
        }
    }

    /// Ends this client's discovery session and clears its filter; never fails.
    public func stopDiscovery(on adapter: BlueZAdapter) async {
        _ = try? await call(adapter.path, BlueZName.adapter, "StopDiscovery")
        _ = try? await call(adapter.path, BlueZName.adapter, "SetDiscoveryFilter", [.properties([:])])
    }

    /// The devices on `adapter` advertising now (BlueZ gives an RSSI only to devices a scan has
    /// heard) that offer `serviceUUID` or carry the module's company identifier. A paired module
    /// that is switched off is known to BlueZ but not listed.
    public func modules(on adapter: BlueZAdapter, serviceUUID: String) -> [BlueZDevice] {
        tree.devices(on: adapter.path).filter {
            $0.rssi != nil && ($0.serviceUUIDs.contains(serviceUUID.lowercased()) || $0.advertisement != nil)
        }
    }

    /// Finds a module by address or name: from BlueZ's known devices, else by scanning up to
    /// `timeout`.
    public func findModule(_ wanted: String, on adapter: BlueZAdapter, serviceUUID: String,
                           timeout: Duration) async throws(BlueZError) -> BlueZDevice {
        try await findDevice(wanted, on: adapter, serviceUUID: serviceUUID, timeout: timeout)
    }

    /// The devices on `adapter` advertising now that are modules (as ``modules(on:serviceUUID:)``)
    /// or cameras this project drives through their own remote protocol.
    public func sightings(on adapter: BlueZAdapter, moduleService: String) -> [BlueZDevice] {
        tree.devices(on: adapter.path).filter {
            $0.rssi != nil && ($0.serviceUUIDs.contains(moduleService.lowercased()) || $0.advertisement != nil || $0.camera != nil)
        }
    }

    /// Finds a device by address or name: from BlueZ's known devices, else by scanning up to
    /// `timeout` (for devices offering `serviceUUID`, or any device when nil).
    public func findDevice(_ wanted: String, on adapter: BlueZAdapter, serviceUUID: String?,
                           timeout: Duration) async throws(BlueZError) -> BlueZDevice {
        let match: @Sendable (BlueZDevice) -> Bool = { $0.matches(wanted) }
        if let known = tree.devices(on: adapter.path).first(where: match) { return known }
        try await startDiscovery(on: adapter, serviceUUID: serviceUUID)
        do {
            try await wait(for: "scanning for \(wanted)", timeout: timeout) { snapshot in
                guard snapshot.bluezPresent else { return .failed(.bluezNotRunning) }
                return snapshot.tree.devices(on: adapter.path).contains(where: match) ? .satisfied : .pending
            }
        } catch .timedOut {
            await stopDiscovery(on: adapter)
            throw .moduleNotFound(wanted)
        } catch {
            await stopDiscovery(on: adapter)
            throw error
        }
        await stopDiscovery(on: adapter)
        guard let found = tree.devices(on: adapter.path).first(where: match) else { throw .moduleNotFound(wanted) }
        return found
    }

    // MARK: - Connecting

    /// How connecting retries the failures BlueZ is known for.
    public struct ConnectPolicy: Sendable {
        /// Attempts in all, for connection aborts and `InProgress`, and the pauses between them
        /// (the project's one backoff, ``ReconnectPolicy``): 250 ms, then twice as long each time.
        public var retries = ReconnectPolicy(initialDelay: .milliseconds(250), maximumDelay: .seconds(2), jitter: 0, maximumAttempts: 4)
        /// How long `Connect` may take.
        public var connectTimeout: Duration = .seconds(30)
        /// How long service discovery may take after `Connect` returned.
        public var servicesTimeout: Duration = .seconds(20)
        /// How a link's reads and writes retry BlueZ's `InProgress` (one operation in flight per
        /// characteristic).
        public var inProgress = InProgressRetry()

        public init() {}
    }

    /// Connects to a device and waits until BlueZ has resolved its services and the service
    /// `serviceUUID` is among them.
    ///
    /// `Connect` returns once the link is up, before GATT discovery ends, so the wait for
    /// `ServicesResolved` races `Connected=false` and the device's removal. Aborts
    /// (`le-connection-abort-by-local`) are retried after BlueZ reports the link down; `InProgress`
    /// is cleared with `Disconnect` and retried.
    public func connect(_ devicePath: String, serviceUUID: String, policy: ConnectPolicy = ConnectPolicy()) async throws(BlueZError) {
        var lastError = BlueZError.connectionFailed("no attempt made")
        for attempt in 1...max(1, policy.retries.maximumAttempts ?? 1) {
            do {
                try await connectOnce(devicePath, serviceUUID: serviceUUID, policy: policy)
                return
            } catch .dbus(let error) where error.name == BlueZName.Error.failed && Self.isAbort(error.message) {
                lastError = .connectionFailed(error.message)
                try? await wait(for: "the aborted link to close", timeout: .seconds(2)) { snapshot in
                    snapshot.tree.device(at: devicePath)?.connected == true ? .pending : .satisfied
                }
                try? await clock.sleep(for: policy.retries.delay(beforeAttempt: attempt, unit: 0.5))
            } catch .dbus(let error) where error.name == BlueZName.Error.inProgress {
                // A stale Connect (from this or a crashed process) holds the device: cancel it.
                lastError = .connectionFailed(error.message)
                _ = try? await call(devicePath, BlueZName.device, "Disconnect", timeout: .seconds(5))
                try? await clock.sleep(for: policy.retries.delay(beforeAttempt: attempt, unit: 0.5))
            } catch .dbus(let error) where error.name == DBusError.unknownObjectName {
                throw .moduleNotFound(tree.device(at: devicePath)?.address ?? devicePath)
            } catch .dbus(let error) where error.name == DBusError.noReplyName {
                lastError = .timedOut("connecting")
                _ = try? await call(devicePath, BlueZName.device, "Disconnect", timeout: .seconds(5))
            } catch .dbus(let error) {
                throw .connectionFailed(error.message.isEmpty ? error.name : error.message)
            } catch .connectionLost(let reason) {
                lastError = .connectionLost(reason)
                try? await clock.sleep(for: policy.retries.delay(beforeAttempt: attempt, unit: 0.5))
            } catch .timedOut(let what) {
                // Services never resolved: drop the half-made link before the next attempt.
                lastError = .timedOut(what)
                await disconnect(devicePath)
            } catch .notAModule(let reason) {
                await disconnect(devicePath)
                throw .notAModule(reason)
            }
        }
        await disconnect(devicePath)
        throw lastError
    }

    /// A client of its own linked to the device `wanted` (address or name) on the adapter
    /// `adapterName`: found among BlueZ's devices or by a scan of up to 10 s (for devices
    /// offering `scanningFor`, or any), connected until `serviceUUID` is resolved, and the mirror
    /// narrowed to it. Module and camera links are made the same way; each has its own client
    /// (its own bus connection), so that the notification sessions of a lost link are not
    /// carried into the next. A failure takes the half-made link down and closes the client.
    ///
    /// - Parameter pairedOnly: refuses a device BlueZ has not paired, with ``BlueZError/notPaired(_:)``.
    static func link(to wanted: String, bus: DBusConnection.Bus, clock: any Clock<Duration>, adapterName: String?,
                     scanningFor scanService: String?, serviceUUID: String, policy: ConnectPolicy,
                     pairedOnly: Bool = false) async throws(BlueZError) -> (client: BlueZClient, device: BlueZDevice) {
        let client = try await open(bus: bus, clock: clock)
        do throws(BlueZError) {
            let adapter = try await client.adapter(named: adapterName)
            let device = try await client.findDevice(wanted, on: adapter, serviceUUID: scanService, timeout: .seconds(10))
            if pairedOnly && !device.paired { throw BlueZError.notPaired(wanted) }
            // connect() takes the link down itself when it fails.
            try await client.connect(device.path, serviceUUID: serviceUUID, policy: policy)
            do throws(BlueZError) {
                try await client.narrow(to: device.path)
            } catch {
                await client.disconnect(device.path)
                throw error
            }
            return (client, device)
        } catch {
            await client.close()
            throw error
        }
    }

    private func connectOnce(_ devicePath: String, serviceUUID: String, policy: ConnectPolicy) async throws(BlueZError) {
        let sawConnected = SeenFlag(tree.device(at: devicePath)?.connected == true)
        if !sawConnected.isSet {
            do {
                try await call(devicePath, BlueZName.device, "Connect", timeout: policy.connectTimeout)
            } catch .dbus(let error) where error.name == BlueZName.Error.alreadyConnected {
                // Another client connected it: use the link.
            }
        }
        try await wait(for: "service discovery", timeout: policy.servicesTimeout) { snapshot in
            guard snapshot.bluezPresent else { return .failed(.connectionLost("bluetoothd left the bus")) }
            guard let device = snapshot.tree.device(at: devicePath) else {
                return .failed(.connectionLost("the device disappeared from BlueZ"))
            }
            // The Connect reply can overtake the Connected=true signal: a false seen before any
            // true is stale, not a drop.
            if device.connected { sawConnected.set() }
            guard device.connected || !sawConnected.isSet else {
                return .failed(.connectionLost("the module disconnected during service discovery"))
            }
            return device.connected && device.servicesResolved ? .satisfied : .pending
        }
        // ServicesResolved can turn true before the objects are exported (bluez#1489): give them
        // a moment, then conclude the device has no such service.
        do {
            try await wait(for: "the module's service", timeout: .seconds(2)) { snapshot in
                snapshot.tree.hasService(serviceUUID, device: devicePath) ? .satisfied : .pending
            }
        } catch .timedOut {
            throw .notAModule("the device has no Unleashed service (\(serviceUUID))")
        }
    }

    private static func isAbort(_ message: String) -> Bool {
        message.contains("le-connection-abort-by-local") || message.contains("Software caused connection abort")
            || message.contains("br-connection-canceled")
    }

    /// Takes the link down and waits (briefly) for BlueZ to report it; true when it did.
    @discardableResult
    public func disconnect(_ devicePath: String) async -> Bool {
        _ = try? await call(devicePath, BlueZName.device, "Disconnect", timeout: .seconds(10))
        do {
            try await wait(for: "disconnecting", timeout: .seconds(5)) { snapshot in
                guard snapshot.bluezPresent else { return .failed(.bluezNotRunning) }
                return snapshot.tree.device(at: devicePath)?.connected == true ? .pending : .satisfied
            }
            return true
        } catch {
            return false
        }
    }

    /// Removes the device from BlueZ, with its pairing and its cached services.
    public func remove(_ devicePath: String, from adapter: BlueZAdapter) async throws(BlueZError) {
        do {
            try await call(adapter.path, BlueZName.adapter, "RemoveDevice", [.objectPath(devicePath)])
        } catch .dbus(let error) where error.name == BlueZName.Error.doesNotExist || error.name == DBusError.unknownObjectName {
            // Already gone.
        }
    }

    // MARK: - Pairing

    /// Pairs with the device, answering BlueZ's questions through `agent`. Connects first, with
    /// the retries of ``connect(_:serviceUUID:policy:)`` (`Pair` would connect too, but without
    /// them), and marks the device trusted so that BlueZ reconnects it without asking.
    public func pair(_ devicePath: String, serviceUUID: String, agent: PairingAgent,
                     policy: ConnectPolicy = ConnectPolicy(), timeout: Duration = .seconds(60)) async throws(BlueZError) {
        if tree.device(at: devicePath)?.paired == true { return }
        try await connect(devicePath, serviceUUID: serviceUUID, policy: policy)
        do {
            try await bond(devicePath, agent: agent, timeout: timeout)
        } catch {
            await disconnect(devicePath)
            throw error
        }
    }

    private func bond(_ devicePath: String, agent: PairingAgent, timeout: Duration) async throws(BlueZError) {
        try await agent.register(on: self)
        defer { Task { await agent.unregister(from: self) } }
        try? await set(devicePath, BlueZName.device, "Trusted", .bool(true))
        do {
            try await call(devicePath, BlueZName.device, "Pair", timeout: timeout)
        } catch .dbus(let error) where error.name == BlueZName.Error.alreadyExists {
            return
        } catch .dbus(let error) where BlueZName.Error.authentication.contains(error.name) {
            let reason = agent.lastRefusal ?? (error.message.isEmpty ? error.name : error.message)
            throw .pairingRefused(reason)
        } catch .dbus(let error) where error.name == DBusError.noReplyName {
            _ = try? await call(devicePath, BlueZName.device, "CancelPairing")
            throw .timedOut("pairing")
        }
        // The reply can overtake the Paired property change: let the mirror catch up.
        try? await wait(for: "the bond to show", timeout: .seconds(2)) { snapshot in
            snapshot.tree.device(at: devicePath)?.paired == true ? .satisfied : .pending
        }
    }
}

/// A flag that sendable closures can set and others read: a wait condition's, a notification
/// socket's "delivered something", a provider's "its notify socket failed".
final class SeenFlag: Sendable {
    private let value: Atomic<Bool>

    init(_ initial: Bool = false) { value = Atomic(initial) }

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() { value.store(true, ordering: .releasing) }
}
