public import CameraKit

/// How a lost link is retried: capped exponential backoff with jitter, so that several clients
/// that lost the same device do not retry in lockstep. The connection to a module or a camera
/// follows it, and so does the daemon's configuration (its `[reconnect]` table).
public struct ReconnectPolicy: Hashable, Sendable {
    /// The delay before the first attempt.
    public var initialDelay: Duration
    /// No delay is longer than this, jitter included.
    public var maximumDelay: Duration
    /// Each attempt waits this many times longer than the one before.
    public var multiplier: Double
    /// Each delay is scaled by a random factor in `1 - jitter ..< 1 + jitter`.
    public var jitter: Double
    /// Attempts after which the connection gives up; nil retries for ever (a time-lapse rig).
    public var maximumAttempts: Int?
    /// How long opening a device that has not been reached yet goes on before giving up (the
    /// daemon's `give_up_after`, see `keepOpening`); nil for ever. A connection once made counts
    /// its attempts instead (``maximumAttempts``).
    public var giveUpAfter: Duration?

    public init(
        initialDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30),
        multiplier: Double = 2,
        jitter: Double = 0.2,
        maximumAttempts: Int? = nil,
        giveUpAfter: Duration? = nil
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
        self.maximumAttempts = maximumAttempts
        self.giveUpAfter = giveUpAfter
    }

    /// The delay before attempt `attempt` (1-based), given `unit`, a random number in 0..<1.
    public func delay(beforeAttempt attempt: Int, unit: Double) -> Duration {
        var base = initialDelay.seconds
        for _ in 1..<max(1, min(attempt, 64)) where base < maximumDelay.seconds { base *= multiplier }
        let jittered = base * (1 - jitter + 2 * jitter * unit)
        return .milliseconds(Int64(min(jittered, maximumDelay.seconds) * 1000))
    }

    func allowsAnother(after attempts: Int) -> Bool {
        maximumAttempts.map { attempts < $0 } ?? true
    }
}

/// The connection to one device (a module, or a camera through its own remote protocol) as a
/// plain value: inputs in, new state and actions out. It never sleeps or touches a link;
/// ``ConnectionDriver`` carries out its actions on a real link and clock, for every dialect. Every rule is a row of ``transitions``; an input that no row names for the current state
/// changes nothing (a late timer, a repeated request).
public struct ConnectionStateMachine: Sendable {
    /// What happened, as the driver saw it.
    public enum Input: Hashable, Sendable {
        /// Someone asked for the connection.
        case connectRequested
        /// Someone asked for the connection to end.
        case disconnectRequested
        /// The scan saw the device.
        case deviceFound
        /// The scan ended without seeing it.
        case scanTimedOut
        /// A link to the device is up.
        case linkUp
        /// Linking failed; it may work later.
        case linkFailed(String)
        /// The protocol's services were found and subscribed to.
        case servicesResolved
        /// The device lacks the protocol's services: not the device looked for, or its remote is off.
        case servicesMissing(String)
        /// The protocol's handshake (the module's `hello`, a brand's pairing or identification) ended well.
        case handshakeSucceeded
        /// The handshake failed in a way that may not recur.
        case handshakeFailed(String)
        /// The device speaks a version or mode this client cannot use (the module's protocol
        /// version, a camera's refusal of the remote); retrying does not help.
        case incompatible(String)
        /// The device stopped answering keep-alives.
        case keepAliveExpired
        /// The link went down.
        case linkLost(String)
        /// The wait before the next attempt is over.
        case retryDue
        /// The link was closed on request.
        case linkClosed

        /// The input without details, as the table names it.
        public var kind: Kind {
            switch self {
            case .connectRequested: .connectRequested
            case .disconnectRequested: .disconnectRequested
            case .deviceFound: .deviceFound
            case .scanTimedOut: .scanTimedOut
            case .linkUp: .linkUp
            case .linkFailed: .linkFailed
            case .servicesResolved: .servicesResolved
            case .servicesMissing: .servicesMissing
            case .handshakeSucceeded: .handshakeSucceeded
            case .handshakeFailed: .handshakeFailed
            case .incompatible: .incompatible
            case .keepAliveExpired: .keepAliveExpired
            case .linkLost: .linkLost
            case .retryDue: .retryDue
            case .linkClosed: .linkClosed
            }
        }

        /// What went wrong, for inputs that report a failure.
        var reason: String {
            switch self {
            case .linkFailed(let reason), .servicesMissing(let reason), .handshakeFailed(let reason),
                 .incompatible(let reason), .linkLost(let reason): reason
            case .keepAliveExpired: "the module stopped answering keep-alives"
            case .scanTimedOut: "no module found"
            default: "\(kind)"
            }
        }

        public enum Kind: String, CaseIterable, Hashable, Sendable {
            case connectRequested, disconnectRequested, deviceFound, scanTimedOut, linkUp, linkFailed,
                 servicesResolved, servicesMissing, handshakeSucceeded, handshakeFailed, incompatible,
                 keepAliveExpired, linkLost, retryDue, linkClosed
        }
    }

    /// What the driver must do, in order.
    public enum Action: String, CaseIterable, Hashable, Sendable {
        case startScan, stopScan, connect, resolveServices
        /// Start the protocol's handshake on the resolved services.
        case startHandshake
        case startKeepAlive, stopKeepAlive, closeLink
        /// Wait the `nextDelay` of the new `reconnecting` state, then feed `retryDue`.
        case scheduleRetry
        case cancelRetry
    }

    /// A condition on the attempts made so far, for rows that retry.
    public enum Guard: Hashable, Sendable {
        case always
        /// The policy allows another attempt.
        case retryAllowed
        /// The policy allows no more attempts.
        case retriesExhausted
    }

    /// One rule: in phase `from`, on `on` (when `when` holds), go to `to` and do `actions`.
    public struct Transition: Hashable, Sendable {
        public let from: ConnectionPhase
        public let on: Input.Kind
        public let when: Guard
        public let to: ConnectionPhase
        public let actions: [Action]
    }

    /// Every rule of the machine.
    public static let transitions: [Transition] = {
        var rows: [Transition] = []
        func row(_ from: ConnectionPhase, _ on: Input.Kind, _ when: Guard = .always, to: ConnectionPhase, _ actions: [Action] = []) {
            rows.append(Transition(from: from, on: on, when: when, to: to, actions: actions))
        }
        /// A failure that is worth retrying: back off, or give up when the policy says so.
        func retryable(_ from: ConnectionPhase, _ on: Input.Kind, first: [Action] = []) {
            row(from, on, .retryAllowed, to: .reconnecting, first + [.scheduleRetry])
            row(from, on, .retriesExhausted, to: .failed, first)
        }

        row(.idle, .connectRequested, to: .scanning, [.startScan])

        row(.scanning, .deviceFound, to: .connecting, [.stopScan, .connect])
        row(.scanning, .scanTimedOut, to: .failed, [.stopScan])
        row(.scanning, .disconnectRequested, to: .idle, [.stopScan])

        row(.connecting, .linkUp, to: .resolvingServices, [.resolveServices])
        retryable(.connecting, .linkFailed)
        retryable(.connecting, .linkLost)
        row(.connecting, .disconnectRequested, to: .disconnecting, [.closeLink])

        row(.resolvingServices, .servicesResolved, to: .handshaking, [.startHandshake])
        row(.resolvingServices, .servicesMissing, to: .failed, [.closeLink])
        retryable(.resolvingServices, .linkLost)
        row(.resolvingServices, .disconnectRequested, to: .disconnecting, [.closeLink])

        row(.handshaking, .handshakeSucceeded, to: .ready, [.startKeepAlive])
        retryable(.handshaking, .handshakeFailed, first: [.closeLink])
        row(.handshaking, .incompatible, to: .failed, [.closeLink])
        retryable(.handshaking, .linkLost)
        row(.handshaking, .disconnectRequested, to: .disconnecting, [.closeLink])

        retryable(.ready, .keepAliveExpired, first: [.stopKeepAlive, .closeLink])
        retryable(.ready, .linkLost, first: [.stopKeepAlive])
        row(.ready, .disconnectRequested, to: .disconnecting, [.stopKeepAlive, .closeLink])

        row(.reconnecting, .retryDue, to: .connecting, [.connect])
        row(.reconnecting, .disconnectRequested, to: .idle, [.cancelRetry])

        row(.disconnecting, .linkClosed, to: .idle)
        row(.disconnecting, .linkLost, to: .idle)

        row(.failed, .connectRequested, to: .scanning, [.startScan])
        row(.failed, .disconnectRequested, to: .idle)
        return rows
    }()

    private static let table: [ConnectionPhase: [Input.Kind: [Transition]]] = Dictionary(
        grouping: transitions, by: \.from
    ).mapValues { Dictionary(grouping: $0, by: \.on) }

    /// The state now.
    public private(set) var state: ConnectionState = .idle
    /// The policy for retries.
    public let policy: ReconnectPolicy
    /// Attempts made since the connection was last ready (or since the connect request).
    public private(set) var attempts = 0
    private var random: SplitMix64

    /// A machine in `idle`; `seed` makes its jitter repeatable.
    public init(policy: ReconnectPolicy = ReconnectPolicy(), seed: UInt64 = 0) {
        self.policy = policy
        random = SplitMix64(seed: seed)
    }

    /// A machine placed in `state` with `attempts` made: for tests that walk the table.
    init(state: ConnectionState, attempts: Int, policy: ReconnectPolicy, seed: UInt64 = 0) {
        self.init(policy: policy, seed: seed)
        self.state = state
        self.attempts = attempts
    }

    /// The row that applies to `input` now, if any.
    public func transition(for input: Input.Kind) -> Transition? {
        Self.table[state.phase]?[input]?.first { row in
            switch row.when {
            case .always: true
            case .retryAllowed: policy.allowsAnother(after: attempts)
            case .retriesExhausted: !policy.allowsAnother(after: attempts)
            }
        }
    }

    /// Applies `input`: moves to the next state and returns what the driver must do.
    public mutating func handle(_ input: Input) -> [Action] {
        guard let row = transition(for: input.kind) else { return [] }
        switch row.to {
        case .idle: state = .idle
        case .scanning:
            attempts = 0
            state = .scanning
        case .connecting: state = .connecting
        case .resolvingServices: state = .resolvingServices
        case .handshaking: state = .handshaking
        case .ready:
            attempts = 0
            state = .ready
        case .reconnecting:
            attempts += 1
            state = .reconnecting(attempt: attempts, nextDelay: policy.delay(beforeAttempt: attempts, unit: random.nextUnit()))
        case .disconnecting: state = .disconnecting
        case .failed: state = .failed(failure(for: input))
        }
        return row.actions
    }

    private func failure(for input: Input) -> ConnectionFailure {
        switch input {
        case .scanTimedOut: .notFound
        case .servicesMissing(let reason): .notAModule(reason)
        case .incompatible(let reason): .incompatible(reason)
        default: .gaveUp(attempts: attempts, lastError: input.reason)
        }
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64): jitter that tests can
/// repeat.
public struct SplitMix64: RandomNumberGenerator, Hashable, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double` (for arithmetic such as backoff, never for the wire).
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
