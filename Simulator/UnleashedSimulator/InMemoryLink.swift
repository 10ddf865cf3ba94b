public import GATT
public import UnleashedKit
public import UnleashedProtocol
import Synchronization

/// A radio link in memory: packets the central writes to the module's Command characteristic
/// arrive at the peripheral, and the peripheral's notifications arrive at the central as values
/// of the Event characteristic, in order, with the ATT size limit enforced as a real link would.
///
/// Demo mode and tests put a ``VirtualModule`` on the ``peripheral`` end and a session on the
/// ``central`` end, so every byte goes through the codec both ways.
public final class InMemoryLink: Sendable {
    /// The client's end: a ``GATTLink``, as BlueZ's is.
    public let central: Central
    /// The module's end.
    public let peripheral: Peripheral

    /// A connected link with this ATT MTU.
    ///
    /// - Parameters:
    ///   - faults: what the radio does wrong, from `seed`; delays run on `clock`.
    ///   - gatt: where the module's characteristics are.
    public init(
        mtu: Int = 247,
        faults: LinkFaults = LinkFaults(),
        seed: UInt64 = 0,
        clock: any Clock<Duration> = ContinuousClock(),
        gatt: GATTLayout = UnleashedV1.gattLayout
    ) {
        let (toPeripheral, peripheralSink) = AsyncStream.makeStream(of: TransportEvent.self)
        let (toCentral, centralSink) = AsyncStream.makeStream(of: GATTLinkEvent.self)
        let shared = Shared(
            mtu: mtu, gatt: gatt, centralSink: centralSink, peripheralSink: peripheralSink,
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
        let command: GATTCharacteristicID
        let event: GATTCharacteristicID
        let state: Mutex<LinkState>
        let centralSink: AsyncStream<GATTLinkEvent>.Continuation
        let peripheralSink: AsyncStream<TransportEvent>.Continuation
        let injector: FaultInjector

        init(mtu: Int, gatt: GATTLayout, centralSink: AsyncStream<GATTLinkEvent>.Continuation,
             peripheralSink: AsyncStream<TransportEvent>.Continuation, injector: FaultInjector) {
            self.mtu = mtu
            command = gatt.commandCharacteristic
            event = gatt.eventCharacteristic
            self.state = Mutex(LinkState())
            self.centralSink = centralSink
            self.peripheralSink = peripheralSink
            self.injector = injector
        }

        /// Delivers packets to one side under the lock so messages never interleave, through
        /// the fault injector: a packet may be dropped, corrupted, repeated, held back or delayed.
        func deliver(_ packets: [[UInt8]], _ direction: FaultInjector.Direction) throws(TransportError) {
            let limit = mtu - 3
            try state.withLock { state throws(TransportError) in
                guard state.connected else { throw .notConnected }
                if let large = packets.first(where: { $0.count > limit }) {
                    throw .packetTooLarge(size: large.count, limit: limit)
                }
                for packet in packets {
                    switch direction {
                    case .toCentral: injector.pass(packet, direction) { [event, centralSink] in centralSink.yield(.value(event, $0)) }
                    case .toPeripheral: injector.pass(packet, direction) { [peripheralSink] in peripheralSink.yield(.packet($0)) }
                    }
                }
            }
        }

        func disconnect(reason: String) {
            let wasConnected = state.withLock { state in
                defer { state.connected = false }
                return state.connected
            }
            guard wasConnected else { return }
            centralSink.yield(.disconnected(reason: reason))
            centralSink.finish()
            peripheralSink.yield(.disconnected(reason: reason))
            peripheralSink.finish()
        }
    }

    /// The client's end of the link: the module's Command and Event characteristics. Values of
    /// the Event characteristic flow from the start, as the module notifies only in answer to
    /// a client that has subscribed.
    public final class Central: GATTLink {
        let shared: Shared
        public let events: AsyncStream<GATTLinkEvent>

        init(shared: Shared, events: AsyncStream<GATTLinkEvent>) {
            self.shared = shared
            self.events = events
        }

        public var mtu: Int { shared.mtu }

        public func offers(_ characteristic: GATTCharacteristicID) async -> Bool {
            characteristic == shared.command || characteristic == shared.event
        }

        public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError) {
            try await send([value], to: characteristic)
        }

        public nonisolated(nonsending) func send(_ values: [[UInt8]], to characteristic: GATTCharacteristicID) async throws(GATTError) {
            guard characteristic == shared.command else { throw .missing(characteristic) }
            do throws(TransportError) {
                try shared.deliver(values, .toPeripheral)
            } catch .notConnected {
                throw .notConnected("the link is down")
            } catch {
                throw .failed(error.description)
            }
        }

        public func read(_ characteristic: GATTCharacteristicID) async throws(GATTError) -> [UInt8] {
            guard await offers(characteristic) else { throw .missing(characteristic) }
            throw .refused(.readNotPermitted)
        }

        public func subscribe(_ characteristic: GATTCharacteristicID) async throws(GATTError) {
            guard characteristic == shared.event else { throw .missing(characteristic) }
        }

        public func close() async {
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
