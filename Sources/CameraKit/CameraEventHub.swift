import Synchronization

/// Hands every event a camera reports to each subscriber of ``Camera/events()``, on a stream of
/// its own, until the camera closes. Backends own one; a subscriber that goes away is forgotten
/// at once, without a hop through the camera's actor.
public final class CameraEventHub: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<CameraEvent>.Continuation] = [:]
        var lastID = 0
        var closed = false
    }

    private let state = Mutex(State())

    public init() {}

    /// A new stream of the events from now on; already finished when the camera has closed.
    public func subscribe() -> AsyncStream<CameraEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CameraEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            state.lastID += 1
            state.subscribers[state.lastID] = continuation
            return state.lastID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many subscriptions are open: for a server to check that clients which left were let go.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Sends `event` to every subscriber.
    public func yield(_ event: CameraEvent) {
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.yield(event) }
    }

    /// Ends every stream; later subscriptions end at once.
    public func finish() {
        let ending = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in ending { continuation.finish() }
    }
}
