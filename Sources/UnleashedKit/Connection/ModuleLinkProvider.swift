/// Why finding or linking to a module failed.
public enum LinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing that looks like the module was seen in time.
    case notFound
    /// The device is there but does not offer the Unleashed service.
    case notAModule(String)
    /// The attempt failed and may work later (out of range, page timeout, busy adapter).
    case failed(String)

    public var description: String {
        switch self {
        case .notFound: "no module found"
        case .notAModule(let reason): "not an Unleashed module: \(reason)"
        case .failed(let reason): reason
        }
    }
}

/// The radio side of a connection: how to find one module, link to it and find its service. BlueZ
/// implements it for real modules, the simulator for demo mode and tests. ``ModuleConnection``
/// calls these in order and decides what to do when one fails.
public protocol ModuleLinkProvider: Sendable {
    /// Returns when the module has been seen advertising.
    func discover(timeout: Duration) async throws(LinkError)
    /// Opens a link to the module found by ``discover(timeout:)``.
    func connect() async throws(LinkError) -> any ModuleLink
    /// The thread the connection, its sessions and its camera run on, for a link whose packets
    /// arrive on a descriptor that thread polls: the packet and the request waiting for it are
    /// then one thread's work. Nil (the default) runs them on Swift's shared pool.
    var executor: ExecutorThread? { get }
}

extension ModuleLinkProvider {
    public var executor: ExecutorThread? { nil }
}

/// The isolation of an actor that may run on an ``ExecutorThread`` or, without one, as any
/// actor does: a plain actor to lend its executor.
actor PoolIsolation {}

/// A link that is up but whose GATT service has not been looked at yet.
public protocol ModuleLink: Sendable {
    /// Finds the Unleashed service and its characteristics and subscribes to events: the packet
    /// transport over them.
    func resolveServices() async throws(LinkError) -> any Transport
    /// Takes the link down; idempotent.
    func close() async
}
