import UnleashedKit
import Synchronization

/// What a simulated radio does wrong, each a probability per packet from 0 to 1.
///
/// Everything is drawn from one seeded generator, so a run with the same seed and the same
/// traffic fails the same way.
public struct LinkFaults: Hashable, Sendable {
    /// The packet never arrives.
    public var drop: Double
    /// One bit of the packet is flipped.
    public var corrupt: Double
    /// The packet arrives twice.
    public var duplicate: Double
    /// The packet is held back and arrives after the next one in the same direction.
    public var reorder: Double
    /// The packet arrives `delay` late (later packets may overtake it).
    public var delayProbability: Double
    public var delay: Duration

    public init(drop: Double = 0, corrupt: Double = 0, duplicate: Double = 0, reorder: Double = 0,
                delayProbability: Double = 0, delay: Duration = .milliseconds(200)) {
        self.drop = drop
        self.corrupt = corrupt
        self.duplicate = duplicate
        self.reorder = reorder
        self.delayProbability = delayProbability
        self.delay = delay
    }

    /// A perfect radio.
    public var isNone: Bool { self == LinkFaults() }
}

/// Applies ``LinkFaults`` to the packets of one link.
final class FaultInjector: Sendable {
    enum Direction: Hashable, Sendable {
        case toCentral, toPeripheral
    }

    private struct State {
        var faults: LinkFaults
        var random: SplitMix64
        var held: [Direction: [UInt8]] = [:]
    }

    private let state: Mutex<State>
    private let clock: any Clock<Duration>

    init(faults: LinkFaults, seed: UInt64, clock: any Clock<Duration>) {
        state = Mutex(State(faults: faults, random: SplitMix64(seed: seed)))
        self.clock = clock
    }

    func setFaults(_ faults: LinkFaults) {
        state.withLock { $0.faults = faults }
    }

    /// Passes one packet on through `deliver`, now, later, twice, changed, or not at all.
    func pass(_ packet: [UInt8], _ direction: Direction, deliver: @escaping @Sendable ([UInt8]) -> Void) {
        let (now, late) = state.withLock { state -> ([[UInt8]], [UInt8]?) in
            let faults = state.faults
            if faults.isNone { return ([packet], nil) }
            func roll(_ probability: Double) -> Bool { probability > 0 && state.random.nextUnit() < probability }
            if roll(faults.drop) { return ([], nil) }
            var packet = packet
            if roll(faults.corrupt), !packet.isEmpty {
                let bit = Int(state.random.next() % UInt64(packet.count * 8))
                packet[bit / 8] ^= 1 << (bit % 8)
            }
            if roll(faults.delayProbability) { return ([], packet) }
            var out = roll(faults.duplicate) ? [packet, packet] : [packet]
            if let held = state.held.removeValue(forKey: direction) {
                out.append(held)
            } else if roll(faults.reorder) {
                state.held[direction] = out.removeFirst()
            }
            return (out, nil)
        }
        for packet in now { deliver(packet) }
        if let late {
            let (clock, delay) = (clock, state.withLock { $0.faults.delay })
            Task {
                try? await clock.sleep(for: delay)
                deliver(late)
            }
        }
    }
}
