public import CameraKit
public import Synchronization
public import UnleashedKit
public import UnleashedSimulator

/// A test rig step that did not finish in the simulated time allowed.
public struct RigTimeout: Error, CustomStringConvertible {
    public let description: String
}

/// A connection to a simulated module over a simulated radio, all on one test clock.
public final class ConnectionRig: Sendable {
    public let clock = RunClock()
    public let module: VirtualModule
    public let radio: SimulatedRadio
    public let connection: ModuleConnection
    public let states = Mutex<[ConnectionState]>([])

    public static let timing = ConnectionTiming(scanTimeout: .seconds(10), requestTimeout: .seconds(3),
                                         keepAliveInterval: .seconds(2), linkLossTimeout: .seconds(6))

    public init(camera: VirtualCamera = VirtualCamera(profile: .nikonLike), faults: LinkFaults = LinkFaults(),
         policy: ReconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(8)), seed: UInt64 = 1,
         recordsStates: Bool = true) {
        module = VirtualModule(camera: camera, clock: clock, utcNow: { 1_700_000_000_000 })
        radio = SimulatedRadio(module: module, faults: faults, seed: seed, clock: clock)
        connection = ModuleConnection(provider: radio, policy: policy, timing: Self.timing, clock: clock, seed: seed)
        // The connection's events have one consumer: a camera on this rig takes them instead.
        guard recordsStates else { return }
        let events = connection.events
        Task { [weak self] in
            for await event in events {
                if case .state(let state) = event { self?.states.withLock { $0.append(state) } }
            }
        }
    }

    public var phases: [ConnectionPhase] { states.withLock { $0.map(\.phase) } }

    /// Moves the test clock on in small steps until `condition` holds; false if it did not
    /// within `limit` of simulated time. Steps, not ``RunClock/flowing(until:_:)``: the link's
    /// timers (keep-alive, request timeouts, resends) always sleep on the clock, and a flow would
    /// run them out while the module is still answering.
    @discardableResult
    public func advance(until condition: () async -> Bool, step: Duration = .milliseconds(20), limit: Duration = .seconds(120)) async -> Bool {
        var waited = Duration.zero
        while waited <= limit {
            if await condition() { return true }
            await clock.advance(by: step)
            waited += step
        }
        return await condition()
    }

    public func advance(by duration: Duration, step: Duration = .milliseconds(20)) async {
        var waited = Duration.zero
        while waited < duration {
            await clock.advance(by: step)
            waited += step
        }
    }

    public func state() async -> ConnectionState { await connection.state }

    /// Connects and waits for ready.
    public func connect() async throws {
        await connection.connect()
        guard await advance(until: { await self.state() == .ready }) else { throw RigTimeout(description: "not ready") }
    }
}

/// Runs `operation` while moving the rig's test clock on, so that anything waiting on the clock
/// makes progress; returns the operation's result.
public func drive<T: Sendable>(_ rig: ConnectionRig, limit: Duration = .seconds(600), step: Duration = .milliseconds(20),
                        _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let finished = Mutex(false)
    let task = Task {
        defer { finished.withLock { $0 = true } }
        return try await operation()
    }
    let done = await rig.advance(until: { finished.withLock { $0 } }, step: step, limit: limit)
    if !done { task.cancel() }
    guard done else { throw RigTimeout(description: "still running after \(limit) of simulated time") }
    return try await task.value
}

extension ConnectionRig {
    /// A camera on this rig's connection, connected.
    public func camera(timing: ModuleCameraTiming = ModuleCameraTiming()) async throws -> ModuleCamera {
        let (connection, clock) = (connection, clock)
        return try await drive(self) { try await ModuleCamera(connection: connection, clock: clock, timing: timing) }
    }
}

