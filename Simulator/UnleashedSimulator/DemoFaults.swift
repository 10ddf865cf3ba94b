import UnleashedKit

/// A fault plan for demo mode, written as `--demo-faults` takes it: comma-separated items,
/// e.g. `drop=0.05,corrupt=0.01,reorder=0.02,delay=0.1:200ms,linkloss=30s@2m`.
///
/// | Item | Meaning |
/// |---|---|
/// | `drop=P`, `corrupt=P`, `duplicate=P`, `reorder=P` | per-packet probability, 0 to 1 |
/// | `delay=P:D` | a packet arrives `D` late with probability `P` |
/// | `linkloss=D@T` | at `T` after start the module goes out of range for `D`; may repeat |
public struct DemoFaults: Hashable, Sendable {
    /// What every packet risks.
    public var link = LinkFaults()
    /// Outages: when (after start) and for how long.
    public var outages: [(at: Duration, length: Duration)] = []

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.link == rhs.link && lhs.outages.elementsEqual(rhs.outages) { $0.at == $1.at && $0.length == $1.length }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(link)
        for outage in outages {
            hasher.combine(outage.at)
            hasher.combine(outage.length)
        }
    }

    /// Reads a plan; the error names the item at fault and says what was expected.
    public init(parsing text: String) throws(DemoFaultsError) {
        for item in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw DemoFaultsError(item: item, expected: "name=value") }
            let (name, value) = (parts[0], parts[1])
            switch name {
            case "drop": link.drop = try Self.probability(value, item)
            case "corrupt": link.corrupt = try Self.probability(value, item)
            case "duplicate": link.duplicate = try Self.probability(value, item)
            case "reorder": link.reorder = try Self.probability(value, item)
            case "delay":
                let pieces = value.split(separator: ":", maxSplits: 1).map(String.init)
                guard pieces.count == 2, let delay = parseDuration(pieces[1]) else {
                    throw DemoFaultsError(item: item, expected: "delay=PROBABILITY:DURATION, e.g. delay=0.1:200ms")
                }
                link.delayProbability = try Self.probability(pieces[0], item)
                link.delay = delay
            case "linkloss":
                let pieces = value.split(separator: "@", maxSplits: 1).map(String.init)
                guard pieces.count == 2, let length = parseDuration(pieces[0]), let at = parseDuration(pieces[1]), length > .zero else {
                    throw DemoFaultsError(item: item, expected: "linkloss=DURATION@TIME, e.g. linkloss=30s@2m")
                }
                outages.append((at, length))
            default:
                throw DemoFaultsError(item: item, expected: "one of drop, corrupt, duplicate, reorder, delay, linkloss")
            }
        }
    }

    private static func probability(_ text: String, _ item: String) throws(DemoFaultsError) -> Double {
        guard let value = Double(text), (0...1).contains(value) else {
            throw DemoFaultsError(item: item, expected: "a probability from 0 to 1")
        }
        return value
    }

    /// Starts the timed part of the plan against `radio`; cancel the task to stop it.
    public func schedule(on radio: SimulatedRadio, clock: any Clock<Duration> = ContinuousClock()) -> Task<Void, Never> {
        let outages = outages.sorted { $0.at < $1.at }
        return Task {
            var elapsed = Duration.zero
            for outage in outages {
                guard (try? await clock.sleep(for: outage.at - elapsed)) != nil else { return }
                elapsed = outage.at
                radio.loseLink(for: outage.length, reason: "the module went out of range (demo fault plan)")
            }
        }
    }
}

/// A `--demo-faults` item that could not be read.
public struct DemoFaultsError: Error, Hashable, Sendable, CustomStringConvertible {
    public var item: String
    public var expected: String

    public var description: String { "cannot read '\(item)': expected \(expected)" }
}
