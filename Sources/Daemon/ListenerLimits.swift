import Foundation
import Synchronization
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
import Glibc
#endif

/// What a network listener (the web app's, the TCP control API's) grants one client, so that
/// nobody on the network can hold the daemon's descriptors: a connection that sends no whole
/// request head in ``requestHeadTimeout`` (from connecting, or from its last answer) is
/// closed, and so is one whose body takes longer than ``bodyTimeout``; past
/// ``maxConnections`` at once each new connection is closed as soon as it is accepted. The connections
/// of all network listeners stay below the process's descriptor limit with a reserve to spare,
/// so that the Unix socket, the journal and the Bluetooth link always have descriptors.
public struct ListenerLimits: Sendable, Equatable {
    public var requestHeadTimeout: Duration
    public var bodyTimeout: Duration
    /// Connections at once on each network listener.
    public var maxConnections: Int

    public init(requestHeadTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30), maxConnections: Int) {
        self.requestHeadTimeout = requestHeadTimeout
        self.bodyTimeout = bodyTimeout
        self.maxConnections = maxConnections
    }

    /// Descriptors kept for everything but the network listeners' connections: the Unix
    /// socket's clients, the journal, D-Bus, MQTT, cameras, event streams.
    static let reserve = 256
    /// The most connections one listener takes, whatever the limit.
    static let ceiling = 512

    /// The limits for a process allowed `descriptors` open files shared by `listeners`
    /// network listeners: each gets an equal share of what the reserve leaves, at most
    /// ``ceiling``, at least 8.
    public static func forDescriptorLimit(_ descriptors: Int, listeners: Int) -> ListenerLimits {
        let share = (descriptors - reserve) / max(1, listeners)
        return ListenerLimits(maxConnections: min(ceiling, max(8, share)))
    }

    /// This process's soft limit on open files (`RLIMIT_NOFILE`; the unit's `LimitNOFILE`).
    public static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, rlim_t(Int.max / 2)))
    }

    /// Hummingbird's HTTP/1 settings for these limits, for one listener: its idle timeout closes
    /// a connection with no request under way, which is also one whose request head has not all
    /// arrived; the handlers close a slow body and a connection past the cap.
    func http1() -> HTTP1Channel.Configuration {
        let open = OpenConnections(limit: maxConnections)
        let bodyTimeout = bodyTimeout
        return HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionCapHandler(open), BodyDeadlineHandler(timeout: bodyTimeout)],
            idleTimeout: .nanoseconds(requestHeadTimeout.nanoseconds))
    }
}

/// The connections open on one listener, against its cap.
final class OpenConnections: Sendable {
    let limit: Int
    private let count = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection in; false (and not counted) when the listener is at its cap.
    func admit() -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, actual) = count.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = actual
        }
        return false
    }

    func release() {
        count.subtract(1, ordering: .acquiringAndReleasing)
    }
}

/// Closes a connection at once when its listener already holds its cap, and counts the others
/// out when they close. Accepting and closing costs a descriptor for a moment; holding it would
/// cost it for as long as the client likes, and a process out of descriptors cannot even accept
/// on its Unix socket.
final class ConnectionCapHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let open: OpenConnections
    private var admitted = false

    init(_ open: OpenConnections) {
        self.open = open
    }

    func handlerAdded(context: ChannelHandlerContext) {
        admitted = open.admit()
        if !admitted { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if admitted { open.release() }
        admitted = false
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to Int64.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : whole &+ attoseconds / 1_000_000_000
    }
}

/// Closes a connection whose request body has not all arrived within its timeout of the head:
/// a body trickled a byte at a time would otherwise hold the connection as long as it likes.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: Duration
    private var deadline: Scheduled<Void>?

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let loop = context.eventLoop.assumeIsolated()
            deadline = loop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [context] in
                context.close(promise: nil)
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
