/// Where the connection to one module stands. Every surface (status output, events, the API)
/// reports this one value.
public enum ConnectionState: Hashable, Sendable {
    case idle
    case scanning
    case connecting
    case resolvingServices
    case handshaking
    case ready
    /// The link was lost or an attempt failed; attempt `attempt` starts after `nextDelay`.
    case reconnecting(attempt: Int, nextDelay: Duration)
    case disconnecting
    /// Given up; only a new connect request leaves this state.
    case failed(ConnectionFailure)

    /// The state without its details, as the transition table names it.
    public var phase: ConnectionPhase {
        switch self {
        case .idle: .idle
        case .scanning: .scanning
        case .connecting: .connecting
        case .resolvingServices: .resolvingServices
        case .handshaking: .handshaking
        case .ready: .ready
        case .reconnecting: .reconnecting
        case .disconnecting: .disconnecting
        case .failed: .failed
        }
    }
}

/// ``ConnectionState`` without associated values.
public enum ConnectionPhase: String, CaseIterable, Hashable, Sendable {
    case idle, scanning, connecting, resolvingServices, handshaking, ready, reconnecting, disconnecting, failed
}

/// Why a connection gave up.
public enum ConnectionFailure: Hashable, Sendable {
    /// No module answered the scan in time.
    case notFound
    /// The device connected but does not offer the Unleashed service.
    case notAModule(String)
    /// The module speaks no protocol version this client speaks.
    case incompatible(String)
    /// Every reconnect attempt the policy allows failed; the last one for this reason.
    case gaveUp(attempts: Int, lastError: String)
}

extension ConnectionFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notFound: "no module found"
        case .notAModule(let reason): "not an Unleashed module: \(reason)"
        case .incompatible(let reason): "incompatible module: \(reason)"
        case .gaveUp(let attempts, let lastError): "gave up after \(English.counting(attempts, "attempt")): \(lastError)"
        }
    }
}

extension ConnectionState: CustomStringConvertible {
    public var description: String {
        switch self {
        case .reconnecting(let attempt, let delay): "reconnecting (attempt \(attempt) in \(delay.shortDescription))"
        case .failed(let failure): "failed: \(failure)"
        default: phase.rawValue
        }
    }
}
