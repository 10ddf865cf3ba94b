public import UnleashedKit
import Synchronization

/// A radio link in memory: packets written by the central arrive at the peripheral and
/// notifications from the peripheral arrive at the central, in order, with the ATT size limit
/// enforced as a real link would.
///
/// Demo mode and tests put a ``VirtualModule`` on the ``peripheral`` end and a session on the
/// ``central`` end, so every byte goes through the codec both ways.
public final class InMemoryLink: Sendable {
    /// The client's end, a ``Transport``.
    public let central: Central
    /// The module's end.
    public let peripheral: Peripheral

    /// A connected link with this ATT MTU.
    ///
    /// - Parameters:
    ///   - faults: what the radio does wrong, from `seed`; delays run on `clock`.
    public init(
        mtu: Int = 247,
        faults: LinkFaults = LinkFaults(),
        seed: UInt64 = 0,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let (toPeripheral, peripheralSink) = AsyncStream.makeStream(of: TransportEvent.self)
        let (toCentral, centralSink) = AsyncStream.makeStream(of: TransportEvent.self)
        let shared = Shared(
            mtu: mtu, centralSink: centralSink, peripheralSink: peripheralSink,
            injector: FaultInjector(faults: faults, seed: seed, clock: clock))
        central = Central(shared: shared, events: toCentral)
        peripheral = Peripheral(shared: shared, writes: toPeripheral)
    }

    /// Drops the link from the radio's side, as when the module goes out of range.
    public func sever(reason: String = "link lost") {
        central.shared.disconnect(reason: reason)
    }

    /// Changes what the radio does wrong from now on (a module going silent, a noisy room).
    public func setFaults(_ faults: LinkFaults) {
        central.shared.injector.setFaults(faults)
    }

    struct LinkState {
        var connected = true
    }

    final class Shared: Sendable {
        let mtu: Int
        let state: Mutex<LinkState>
        let centralSink: AsyncStream<TransportEvent>.Continuation
        let peripheralSink: AsyncStream<TransportEvent>.Continuation
        let injector: FaultInjector

        init(mtu: Int, centralSink: AsyncStream<TransportEvent>.Continuation,
             peripheralSink: AsyncStream<TransportEvent>.Continuation, injector: FaultInjector) {
            self.mtu = mtu
            self.state = Mutex(LinkState())
            self.centralSink = centralSink
            self.peripheralSink = peripheralSink
            self.injector = injector
        }

        /// Delivers packets to one side under the lock so messages never interleave, through
        /// the fault injector: a packet may be dropped, corrupted, repeated, held back or delayed.
        func deliver(_ packets: [[UInt8]], _ direction: FaultInjector.Direction) throws(TransportError) {
            let limit = mtu - 3
            let sink = direction == .toCentral ? centralSink : peripheralSink
            try state.withLock { state throws(TransportError) in
                guard state.connected else { throw .notConnected }
                if let large = packets.first(where: { $0.count > limit }) {
                    throw .packetTooLarge(size: large.count, limit: limit)
                }
                for packet in packets {
                    injector.pass(packet, direction) { sink.yield(.packet($0)) }
                }
            }
        }

        func disconnect(reason: String) {
            let wasConnected = state.withLock { state in
                defer { state.connected = false }
                return state.connected
            }
            guard wasConnected else { return }
            for sink in [centralSink, peripheralSink] {
                sink.yield(.disconnected(reason: reason))
                sink.finish()
            }
        }
    }

    /// The client's end of the link.
    public final class Central: Transport {
        let shared: Shared
        public let events: AsyncStream<TransportEvent>

        init(shared: Shared, events: AsyncStream<TransportEvent>) {
            self.shared = shared
            self.events = events
        }

        public var mtu: Int { shared.mtu }

        public nonisolated(nonsending) func send(_ packets: [[UInt8]]) async throws(TransportError) {
            try shared.deliver(packets, .toPeripheral)
        }

        public nonisolated(nonsending) func close() async {
            shared.disconnect(reason: "closed by the client")
        }
    }

    /// The module's end of the link.
    public final class Peripheral: Sendable {
        let shared: Shared
        /// Packets written by the client, then the disconnection.
        public let writes: AsyncStream<TransportEvent>

        init(shared: Shared, writes: AsyncStream<TransportEvent>) {
            self.shared = shared
            self.writes = writes
        }

        public var mtu: Int { shared.mtu }

        /// Sends notifications to the client; all packets of one message together.
        public func notify(_ packets: [[UInt8]]) throws(TransportError) {
            try shared.deliver(packets, .toCentral)
        }
    }
}
