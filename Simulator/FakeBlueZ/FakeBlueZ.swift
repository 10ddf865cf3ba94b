public import DBus
import UnleashedKit
#if canImport(Glibc)
import Glibc
#endif
import UnleashedProtocol
import UnleashedSimulator

/// A stand-in for bluetoothd: owns `org.bluez` on a bus and serves BlueZ's adapter, device and
/// GATT-client API, with a simulated Unleashed module (``VirtualModule``) or a simulated camera
/// (a `SimulatedCameraBody`, speaking its maker's own protocol) behind each device's GATT objects.
///
/// It keeps BlueZ's rules that clients trip over (sessions tied to the caller's bus name, one
/// read and one write in flight per characteristic, `Connect` answered before services resolve,
/// signatures checked strictly), so that a client that works against it works against BlueZ
/// 5.66. Tests and `unleashed-sim` steer it through a control interface on its own bus name,
/// `org.unleashed.Simulator`, which survives a simulated bluetoothd restart.
///
/// All state lives in this actor. Method calls from the bus are handled one at a time in the
/// order they arrived, so writes reach a module in the order a client sent them.
public actor FakeBlueZ {
    /// The bus name bluetoothd owns.
    public static let busName = "org.bluez"
    /// The control interface's bus name: a name of its own, so that it stays through a restart.
    public static let controlName = "org.unleashed.Simulator"
    /// The control interface's object path.
    public static let controlPath = "/org/unleashed/Simulator"
    /// The control interface's interface name.
    public static let controlInterface = "org.unleashed.Simulator1"

    /// How the fake was set up.
    public nonisolated let configuration: Configuration

    var modules: [SimulatedModule] = []
    var cameras: [SimulatedCamera] = []
    /// Cameras the `linkloss` fault or `LoseLink` took out of range, until when.
    var camerasAway: [Int: ContinuousClock.Instant] = [:]
    var adapters: [Adapter] = []
    var devices: [String: Device] = [:]
    /// Every exported object: path, interface, property name, value.
    var objects: [String: [String: [String: DBusValue]]] = [:]
    /// Registered pairing agents by the unique name of their owner.
    var agents: [String: Agent] = [:]
    var defaultAgentOwner: String?
    var faults: FaultPlan
    var faultTasks: [Task<Void, Never>] = []
    /// Addresses of the peers whose `linkloss` faults run: from their first connection under the current plan.
    var linkLossArmed: Set<String> = []
    var counters: [String: Int] = [:]
    /// The latest packets that reached a module.
    var writeLog: [LoggedWrite] = []
    /// The latest shutter presses, written from the modules' own actors.
    nonisolated let pressLog = PressLog()
    var random: SplitMix64
    var nextPairingID = 0

    /// The connection that owns `org.bluez`; nil while bluetoothd is "down".
    var bluez: DBusConnection?
    /// Counts bluetoothd's lives: calls that reached an earlier one are not answered by this one.
    var incarnation = 0
    private var bus: DBusConnection.Bus?
    private var control: DBusConnection?
    private var restarting: Task<Void, Never>?
    private var background: [Task<Void, Never>] = []
    private var stopped = false

    private let incoming: (stream: AsyncStream<Incoming>, continuation: AsyncStream<Incoming>.Continuation)
    private let ending: (stream: AsyncStream<String>, continuation: AsyncStream<String>.Continuation)

    /// What the fake handles, one at a time in the order it arrived: method calls, and clients
    /// leaving the bus (after their last calls, so that no session outlives its client).
    enum Incoming: Sendable {
        case call(DBusIncomingCall, from: Endpoint)
        case departure(String)
    }

    /// The connection a call came in on.
    enum Endpoint: Sendable {
        case bluez(incarnation: Int)
        case control
    }

    /// A fake that has not touched any bus yet; ``start(bus:)`` brings it up.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        faults = configuration.faults
        random = SplitMix64(seed: configuration.seed)
        incoming = AsyncStream.makeStream(of: Incoming.self)
        ending = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Connects to `bus`, takes the control name and `org.bluez`, and exports the adapters.
    ///
    /// - Throws: ``FakeBlueZError`` when the configuration is impossible, the bus cannot be
    ///   reached, or a name is already taken (a real bluetoothd is running).
    public func start(bus: DBusConnection.Bus) async throws(FakeBlueZError) {
        try validate(configuration)
        cameras = SimulatedCamera.make(configuration)
        self.bus = bus
        modules = await SimulatedModule.make(configuration)
        for module in modules {
            let (log, address) = (pressLog, module.address)
            await module.module.observePresses { lateness in log.append(address, lateness: lateness) }
        }
        adapters = (0..<configuration.adapters).map { Adapter(index: $0, powered: configuration.powered) }
        for module in modules {
            log("module \(module.address) (\(module.serialNumber), \(module.name)): passkey \(module.passkeyText)")
        }
        for camera in cameras {
            log("camera \(camera.address) (\(camera.body.brand.displayName) \(camera.body.model)): passkey "
                + SimulatedModule.zeroPadded(Int(camera.passkey), width: 6))
        }
        do throws(FakeBlueZError) {
            try await serveControl(on: bus)
            try await bringUp()
        } catch {
            stop()
            throw error
        }
        scheduleRestarts(faults.restarts)
    }

    /// Takes the control name (after making sure `org.bluez` is free, the likelier clash) and
    /// starts handling calls and watching clients leave the bus.
    private func serveControl(on bus: DBusConnection.Bus) async throws(FakeBlueZError) {
        let control = try await open(bus)
        self.control = control
        let sink = incoming.continuation
        control.handleMethodCalls { sink.yield(.call($0, from: .control)) }
        let departures = control.signals()
        let bluetoothd: String?
        do throws(DBusError) {
            bluetoothd = try await control.nameOwner(Self.busName)
            try await control.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        } catch {
            throw .bus(error)
        }
        if let bluetoothd { throw .nameTaken(Self.busName, owner: bluetoothd) }
        try await take(Self.controlName, on: control)
        background.append(Task { [weak self] in
            for await signal in departures where signal.isSignal("org.freedesktop.DBus", "NameOwnerChanged") {
                guard signal.body.count == 3, let name = signal.body[0].stringValue, name.hasPrefix(":"),
                      signal.body[2].stringValue == "" else { continue }
                sink.yield(.departure(name))
            }
            await self?.busLost()
        })
        let stream = incoming.stream
        background.append(Task { [weak self] in
            for await next in stream {
                guard let self else { return }
                await self.handle(next)
            }
        })
    }

    /// Releases both names, drops every link and closes the connections.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        restarting?.cancel()
        for path in devices.keys { dropLink(path, connectError: BlueZError.failed("Cancelled"), pairError: BlueZError.authenticationCanceled) }
        for task in faultTasks + background + adapters.compactMap(\.ticker) + devices.values.compactMap(\.removal) { task.cancel() }
        bluez?.close()
        bluez = nil
        control?.close()
        control = nil
        incoming.continuation.finish()
        ending.continuation.finish()
    }

    /// Returns when the bus has gone away (with what happened) or the fake was stopped (nil).
    public func waitUntilEnded() async -> String? {
        for await reason in ending.stream { return reason }
        return nil
    }

    // MARK: - bluetoothd's life

    /// Opens a connection for bluetoothd, exports its objects, owns `org.bluez`, and announces them.
    private func bringUp() async throws(FakeBlueZError) {
        guard let bus else { return }
        let connection = try await open(bus)
        incarnation += 1
        let incarnation = self.incarnation
        let sink = incoming.continuation
        connection.handleMethodCalls { sink.yield(.call($0, from: .bluez(incarnation: incarnation))) }
        exportStaticObjects()
        do {
            try await take(Self.busName, on: connection)
        } catch {
            connection.close()
            objects = [:]
            throw error
        }
        bluez = connection
        for (path, interfaces) in objects.sorted(by: { $0.key < $1.key }) {
            emitInterfacesAdded(path, interfaces)
        }
        log("bluetoothd is up as \(connection.uniqueName)")
    }

    private func exportStaticObjects() {
        objects = [:]
        objects["/org/bluez"] = withStandardInterfaces(["org.bluez.AgentManager1": [:]])
        for adapter in adapters { objects[adapter.path] = withStandardInterfaces([InterfaceSpec.adapter.name: adapterProperties(adapter)]) }
        for (path, device) in devices.sorted(by: { $0.key < $1.key }) {
            objects[path] = withStandardInterfaces([InterfaceSpec.device.name: deviceProperties(device)])
        }
    }

    /// Simulates bluetoothd restarting: `org.bluez` goes away for `down` (clients see its owner
    /// leave), every link and session ends, and it comes back with the adapters and the paired
    /// devices, disconnected.
    func restartBluetoothd(down: Duration) async {
        guard bluez != nil, !stopped else { return }
        count("restarts")
        log("bluetoothd restarts, away for \(down.compactText)")
        // Without the connection nothing is announced: a restarted bluetoothd starts afresh.
        let old = bluez
        bluez = nil
        for path in devices.keys {
            dropLink(path, connectError: BlueZError.failed("Cancelled"), pairError: BlueZError.authenticationCanceled)
        }
        for index in adapters.indices {
            adapters[index].discoveryClients = []
            adapters[index].filters = [:]
            adapters[index].ticker?.cancel()
            adapters[index].ticker = nil
        }
        for (path, device) in devices where !device.paired {
            device.removal?.cancel()
            devices[path] = nil
        }
        agents = [:]
        defaultAgentOwner = nil
        objects = [:]
        if let old {
            // Let the name go before closing, so that its owner's departure is all clients see.
            try? await old.releaseName(Self.busName)
            old.close()
        }
        restarting = Task { [weak self] in
            try? await Task.sleep(for: down)
            guard !Task.isCancelled, let self else { return }
            do throws(FakeBlueZError) {
                try await self.bringUp()
            } catch {
                await self.end("bluetoothd could not come back: \(error)")
            }
        }
    }

    func scheduleRestarts(_ restarts: [FaultPlan.TimedFault]) {
        for restart in restarts {
            faultTasks.append(schedule(after: restart.after) { fake in
                Task { await fake.restartBluetoothd(down: restart.length) }
            })
        }
    }

    private func busLost() {
        guard !stopped else { return }
        end("the bus went away")
    }

    private func end(_ reason: String) {
        log(reason)
        ending.continuation.yield(reason)
        stop()
    }

    // MARK: - Connections and names

    private func open(_ bus: DBusConnection.Bus) async throws(FakeBlueZError) -> DBusConnection {
        do {
            return try await DBusConnection.open(bus)
        } catch {
            throw .bus(error)
        }
    }

    private func take(_ name: String, on connection: DBusConnection) async throws(FakeBlueZError) {
        let owned: Bool
        do throws(DBusError) {
            owned = try await connection.requestName(name)
        } catch {
            throw .bus(error)
        }
        guard owned else { throw .nameTaken(name, owner: (try? await connection.nameOwner(name)) ?? nil) }
    }

    private func validate(_ configuration: Configuration) throws(FakeBlueZError) {
        guard (0...255).contains(configuration.modules) else { throw .invalidConfiguration("modules must be 0 to 255") }
        guard configuration.cameras.count <= 255 else { throw .invalidConfiguration("at most 255 cameras") }
        guard (0...16).contains(configuration.adapters) else { throw .invalidConfiguration("adapters must be 0 to 16") }
        guard (23...517).contains(configuration.mtu) else { throw .invalidConfiguration("the MTU must be 23 to 517") }
    }

    // MARK: - Helpers shared by the extensions

    func log(_ line: String) {
        configuration.log(line)
    }

    func count(_ counter: String) {
        counters[counter, default: 0] += 1
    }

    /// Notes a packet that reached a module, or a value written to a camera, keeping at least
    /// the last 4096.
    func logWrite(_ packet: [UInt8], module: String, received: UInt64) {
        writeLog.append(LoggedWrite(nanoseconds: received, module: module, packet: packet))
        // Trimmed in batches: removing one entry at a time moves the whole log on every write.
        if writeLog.count > 2 * 4096 { writeLog.removeFirst(writeLog.count - 4096) }
    }

    /// A packet written to a module's Command characteristic, or a value to a camera's
    /// characteristic.
    public struct LoggedWrite: Sendable {
        /// When its `WriteValue` call came off the bus (CLOCK_MONOTONIC nanoseconds, the clock
        /// every process on the machine shares).
        public let nanoseconds: UInt64
        /// The module's (or camera's) address.
        public let module: String
        public let packet: [UInt8]
    }

    /// The packets that reached a module whose calls came off the bus at or after `nanoseconds`,
    /// in the order they were taken: for measuring how long a client takes to get a request to a
    /// module, and how far apart requests to several modules cross the D-Bus boundary.
    public func writes(since nanoseconds: UInt64) -> [LoggedWrite] {
        writeLog.filter { $0.nanoseconds >= nanoseconds }
    }

    /// A shutter press by a module's camera.
    public struct LoggedPress: Sendable {
        /// The instant of the press on the module's timeline, placed on CLOCK_MONOTONIC (the
        /// clock of ``LoggedWrite/nanoseconds``): when the module handled it, less how late it was.
        public let nanoseconds: UInt64
        /// How long after that instant the simulated module got to it: the host's wake-up delay,
        /// which a module's hardware timer would not have.
        public let latenessNanoseconds: UInt64
        /// The module's (or camera's) address.
        public let module: String
    }

    /// The presses at or after `nanoseconds`, in the order the modules handled them: for
    /// measuring how close together a rig's cameras fired.
    public nonisolated func presses(since nanoseconds: UInt64) -> [LoggedPress] {
        pressLog.entries(since: nanoseconds)
    }

    /// Runs `work` on the actor after `delay`, unless the returned task is cancelled first.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable (isolated FakeBlueZ) -> Void) -> Task<Void, Never> {
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled, let self else { return }
            await self.perform(work)
        }
    }

    /// Runs `work` on the actor: how tasks hand results back.
    func perform(_ work: @Sendable (isolated FakeBlueZ) -> Void) {
        work(self)
    }

    /// A client's unique name left the bus: its discovery sessions, notify sessions and agent end.
    func clientLeft(_ name: String) {
        endDiscoverySessions(of: name)
        endNotifySessions(of: name)
        if agents.removeValue(forKey: name) != nil { log("agent of \(name) unregistered: it left the bus") }
        if defaultAgentOwner == name { defaultAgentOwner = nil }
    }
}

/// Why the fake could not start.
public enum FakeBlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bus could not be reached or refused a request.
    case bus(DBusError)
    /// Someone else owns a name the fake needs.
    case nameTaken(String, owner: String?)
    /// The configuration asks for something impossible.
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .bus(let error): "the bus: \(error)"
        case .nameTaken(let name, let owner):
            "\(name) is already owned\(owner.map { " by \($0)" } ?? "") (is bluetoothd or another simulator running on this bus?)"
        case .invalidConfiguration(let reason): reason
        }
    }
}
