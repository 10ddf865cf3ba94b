public import CameraKit

/// The callers of a connection's `waitForState` that are still waiting: each resumed with the
/// first state it wants, or with nil when its time runs out. The ``ConnectionDriver`` (modules'
/// and cameras' connections alike) keeps its waiters in one of these.
public struct StateWaiters: Sendable {
    private struct Waiter: Sendable {
        let isWanted: @Sendable (ConnectionState) -> Bool
        let continuation: CheckedContinuation<ConnectionState?, Never>
    }

    private var waiting: [Int: Waiter] = [:]
    private var lastID = 0

    public init() {}

    /// A new waiter's id, for ``add(_:isWanted:continuation:)`` and ``settle(_:with:)``.
    public mutating func nextID() -> Int {
        lastID += 1
        return lastID
    }

    public mutating func add(_ id: Int, isWanted: @escaping @Sendable (ConnectionState) -> Bool,
                             continuation: CheckedContinuation<ConnectionState?, Never>) {
        waiting[id] = Waiter(isWanted: isWanted, continuation: continuation)
    }

    /// Resumes waiter `id` with `state` (nil: it timed out), if it still waits.
    public mutating func settle(_ id: Int, with state: ConnectionState?) {
        waiting.removeValue(forKey: id)?.continuation.resume(returning: state)
    }

    /// Resumes every waiter that wants `state`.
    public mutating func changed(to state: ConnectionState) {
        for (id, waiter) in waiting where waiter.isWanted(state) { settle(id, with: state) }
    }
}
