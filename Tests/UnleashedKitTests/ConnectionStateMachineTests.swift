import CameraKit
import Testing
@testable import UnleashedKit

typealias Machine = ConnectionStateMachine

extension ConnectionStateMachine.Input {
    /// An input of `kind`, with a made-up reason where it carries one.
    static func example(_ kind: Kind) -> Self {
        switch kind {
        case .connectRequested: .connectRequested
        case .disconnectRequested: .disconnectRequested
        case .deviceFound: .deviceFound
        case .scanTimedOut: .scanTimedOut
        case .linkUp: .linkUp
        case .linkFailed: .linkFailed("page timeout")
        case .servicesResolved: .servicesResolved
        case .servicesMissing: .servicesMissing("no Unleashed service")
        case .handshakeSucceeded: .handshakeSucceeded
        case .handshakeFailed: .handshakeFailed("no answer to hello")
        case .incompatible: .incompatible("module speaks 2-3")
        case .keepAliveExpired: .keepAliveExpired
        case .linkLost: .linkLost("out of range")
        case .retryDue: .retryDue
        case .linkClosed: .linkClosed
        }
    }
}

extension ConnectionState {
    /// A state in `phase`, with made-up details.
    static func example(_ phase: ConnectionPhase) -> Self {
        switch phase {
        case .idle: .idle
        case .scanning: .scanning
        case .connecting: .connecting
        case .resolvingServices: .resolvingServices
        case .handshaking: .handshaking
        case .ready: .ready
        case .reconnecting: .reconnecting(attempt: 1, nextDelay: .seconds(1))
        case .disconnecting: .disconnecting
        case .failed: .failed(.notFound)
        }
    }
}

@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    static let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0.2, maximumAttempts: 3)

    @Test("every row of the transition table does what it says", arguments: Machine.transitions.map(Row.init))
    func row(_ named: Row) {
        let row = named.transition
        let attempts = row.when == .retriesExhausted ? 3 : 1
        var machine = Machine(state: .example(row.from), attempts: attempts, policy: Self.policy)
        #expect(machine.transition(for: row.on) == row)
        let actions = machine.handle(.example(row.on))
        #expect(machine.state.phase == row.to)
        #expect(actions == row.actions)
        if row.to == .reconnecting {
            guard case .reconnecting(let attempt, let delay) = machine.state else { return }
            #expect(attempt == attempts + 1)
            #expect(delay > .zero && delay <= Self.policy.maximumDelay)
        }
    }

    @Test("an input no row names for the state changes nothing and asks for nothing")
    func unlisted() {
        let listed = Set(Machine.transitions.map { "\($0.from)/\($0.on)" })
        var checked = 0
        for phase in ConnectionPhase.allCases {
            for kind in Machine.Input.Kind.allCases where !listed.contains("\(phase)/\(kind)") {
                var machine = Machine(state: .example(phase), attempts: 1, policy: Self.policy)
                let before = machine.state
                #expect(machine.handle(.example(kind)).isEmpty, "\(phase) on \(kind)")
                #expect(machine.state == before, "\(phase) on \(kind)")
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test("each state and input has at most one row whose guard holds")
    func deterministic() {
        for phase in ConnectionPhase.allCases {
            for kind in Machine.Input.Kind.allCases {
                let rows = Machine.transitions.filter { $0.from == phase && $0.on == kind }
                let guards = rows.map(\.when)
                #expect(guards.count <= 2 && Set(guards).count == guards.count, "\(phase) on \(kind)")
                if guards.count == 2 { #expect(Set(guards) == [.retryAllowed, .retriesExhausted], "\(phase) on \(kind)") }
            }
        }
    }

    @Test("every state can be reached from idle and idle can be reached from every state")
    func reachable() {
        var reached: Set<ConnectionPhase> = [.idle]
        var frontier: [ConnectionPhase] = [.idle]
        while let phase = frontier.popLast() {
            for row in Machine.transitions where row.from == phase && !reached.contains(row.to) {
                reached.insert(row.to)
                frontier.append(row.to)
            }
        }
        #expect(reached == Set(ConnectionPhase.allCases))
        for phase in ConnectionPhase.allCases where phase != .idle {
            var machine = Machine(state: .example(phase), attempts: 0, policy: Self.policy)
            _ = machine.handle(.disconnectRequested)
            _ = machine.handle(.linkClosed)
            #expect(machine.state == .idle, "a disconnect request from \(phase) ends in idle")
        }
    }

    @Test("every input and every action appears in the table")
    func everyNameUsed() {
        #expect(Set(Machine.transitions.map(\.on)) == Set(Machine.Input.Kind.allCases))
        #expect(Set(Machine.transitions.flatMap(\.actions)) == Set(Machine.Action.allCases))
        #expect(Set(Machine.transitions.map(\.from)).union(Machine.transitions.map(\.to)) == Set(ConnectionPhase.allCases))
    }

    @Test("a first connection walks scan, connect, services and handshake to ready")
    func happyPath() {
        var machine = Machine(policy: Self.policy)
        #expect(machine.handle(.connectRequested) == [.startScan])
        #expect(machine.handle(.deviceFound) == [.stopScan, .connect])
        #expect(machine.handle(.linkUp) == [.resolveServices])
        #expect(machine.handle(.servicesResolved) == [.startHandshake])
        #expect(machine.handle(.handshakeSucceeded) == [.startKeepAlive])
        #expect(machine.state == .ready)
    }

    @Test("lost links back off exponentially with jitter, capped, and give up when the policy says")
    func backoff() {
        var machine = Machine(state: .ready, attempts: 0, policy: ReconnectPolicy(
            initialDelay: .seconds(1), maximumDelay: .seconds(5), jitter: 0.2, maximumAttempts: 5), seed: 7)
        var delays: [Duration] = []
        var actions = machine.handle(.linkLost("out of range"))
        while let delay = machine.retryDelay(after: actions) {
            delays.append(delay)
            #expect(machine.handle(.retryDue) == [.connect])
            actions = machine.handle(.linkFailed("page timeout"))
        }
        #expect(delays.count == 5)
        let nominal: [Double] = [1, 2, 4, 5, 5]
        for (delay, nominal) in zip(delays, nominal) {
            #expect(delay.seconds >= nominal * 0.8 - 0.001 && delay.seconds <= min(nominal * 1.2, 5))
        }
        #expect(Set(delays).count > 2, "jitter varies the delays")
        #expect(machine.state == .failed(.gaveUp(attempts: 5, lastError: "page timeout")))
    }

    @Test("the same seed gives the same delays; another seed other delays")
    func seededJitter() {
        func delays(seed: UInt64) -> [Duration] {
            var machine = Machine(state: .ready, attempts: 0, policy: Self.policy, seed: seed)
            var result: [Duration] = []
            var actions = machine.handle(.keepAliveExpired)
            while let delay = machine.retryDelay(after: actions) {
                result.append(delay)
                _ = machine.handle(.retryDue)
                actions = machine.handle(.linkFailed("x"))
            }
            return result
        }
        #expect(delays(seed: 1) == delays(seed: 1))
        #expect(delays(seed: 1) != delays(seed: 2))
    }

    @Test("a successful reconnect starts the attempt count again")
    func resetOnReady() {
        var machine = Machine(state: .ready, attempts: 0, policy: Self.policy)
        _ = machine.handle(.linkLost("gone"))
        _ = machine.handle(.retryDue)
        _ = machine.handle(.linkFailed("page timeout"))
        #expect(machine.attempts == 2)
        _ = machine.handle(.retryDue)
        _ = machine.handle(.linkUp)
        _ = machine.handle(.servicesResolved)
        _ = machine.handle(.handshakeSucceeded)
        #expect(machine.state == .ready && machine.attempts == 0)
        _ = machine.handle(.linkLost("gone again"))
        #expect(machine.state.phase == .reconnecting && machine.attempts == 1)
    }

    @Test("a user disconnect while reconnecting ends in idle and never retries")
    func disconnectWhileReconnecting() {
        var machine = Machine(state: .ready, attempts: 0, policy: Self.policy)
        _ = machine.handle(.linkLost("gone"))
        #expect(machine.handle(.disconnectRequested) == [.cancelRetry])
        #expect(machine.handle(.retryDue).isEmpty, "a retry timer that fires late does nothing")
        #expect(machine.state == .idle)
    }

    @Test("a module of another protocol version or no module at all fails without retrying")
    func permanentFailures() {
        var machine = Machine(state: .handshaking, attempts: 0, policy: Self.policy)
        #expect(machine.handle(.incompatible("module speaks 2-3")) == [.closeLink])
        #expect(machine.state == .failed(.incompatible("module speaks 2-3")))
        machine = Machine(state: .resolvingServices, attempts: 0, policy: Self.policy)
        _ = machine.handle(.servicesMissing("no Unleashed service"))
        #expect(machine.state == .failed(.notAModule("no Unleashed service")))
        machine = Machine(state: .scanning, attempts: 0, policy: Self.policy)
        _ = machine.handle(.scanTimedOut)
        #expect(machine.state == .failed(.notFound))
    }
}

/// A table row, named for the test report.
struct Row: CustomTestStringConvertible, Sendable {
    let transition: ConnectionStateMachine.Transition

    var testDescription: String {
        let row = transition
        return "\(row.from) on \(row.on)" + (row.when == .always ? "" : " (\(row.when))") + " -> \(row.to) \(row.actions.map(\.rawValue))"
    }
}

extension ConnectionStateMachine {
    /// The delay the driver waits when `actions` schedule a retry.
    func retryDelay(after actions: [Action]) -> Duration? {
        guard actions.contains(.scheduleRetry), case .reconnecting(_, let delay) = state else { return nil }
        return delay
    }
}
