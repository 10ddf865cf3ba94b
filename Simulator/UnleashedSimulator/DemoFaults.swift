import UnleashedKit

/// A fault plan for demo mode, written as `--demo-faults` takes it: comma-separated items, e.g.
/// `drop=0.05,corrupt=0.01,duplicate=0.01,reorder=0.02,delay=0.1:200ms,busy=0.05,linkloss=30s@2m,reboot@5m,poweroff@10m`.
///
/// | Item | Meaning |
/// |---|---|
/// | `drop=P`, `corrupt=P`, `duplicate=P`, `reorder=P` | per-packet probability, 0 to 1 |
/// | `delay=P:D` | a packet arrives `D` late with probability `P` |
/// | `busy=P` | a camera command is refused with `busy` with probability `P` |
/// | `linkloss=D@T` | at `T` after start the module goes out of range for `D`; may repeat |
/// | `reboot@T` | at `T` the module restarts (unreachable while it boots); may repeat |
/// | `poweroff@T` | at `T` the camera is switched off |
///
/// Durations are written as ``parseDuration(_:)`` reads them: `250ms`, `30s`, `1m30s`, `2h`.
public struct DemoFaults: Hashable, Sendable {
    /// What every packet risks.
    public var link = LinkFaults()
    /// The probability that a camera command is refused with `busy`.
    public var busy = 0.0
    /// Outages: when (after start) and for how long.
    public var outages: [(at: Duration, length: Duration)] = []
    /// When (after start) the module restarts.
    public var reboots: [Duration] = []
    /// When (after start) the camera is switched off.
    public var powerOff: Duration?

    public init() {}

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.link == rhs.link && lhs.busy == rhs.busy && lhs.reboots == rhs.reboots && lhs.powerOff == rhs.powerOff
            && lhs.outages.elementsEqual(rhs.outages) { $0.at == $1.at && $0.length == $1.length }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(link)
        hasher.combine(busy)
        hasher.combine(reboots)
        hasher.combine(powerOff)
        for outage in outages {
            hasher.combine(outage.at)
            hasher.combine(outage.length)
        }
    }

    /// Reads a plan; the error names the item at fault and says what was expected.
    public init(parsing text: String) throws(DemoFaultsError) {
        var seen: Set<String> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let (name, value) = try Self.split(item)
            guard seen.insert(name).inserted || Self.repeatable.contains(name) else {
                throw DemoFaultsError(item: item, expected: "\(name) only once")
            }
            switch name {
            case "drop": link.drop = try Self.probability(value, item)
            case "corrupt": link.corrupt = try Self.probability(value, item)
            case "duplicate": link.duplicate = try Self.probability(value, item)
            case "reorder": link.reorder = try Self.probability(value, item)
            case "busy": busy = try Self.probability(value, item)
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
            case "reboot", "poweroff":
                guard value.first == "@", let at = parseDuration(String(value.dropFirst())) else {
                    throw DemoFaultsError(item: item, expected: "\(name)@TIME, e.g. \(name)@5m")
                }
                if name == "reboot" { reboots.append(at) } else { powerOff = at }
            default:
                throw DemoFaultsError(item: item, expected: "one of drop, corrupt, duplicate, reorder, delay, busy, linkloss, reboot, poweroff")
            }
        }
    }

    private static let repeatable: Set<String> = ["linkloss", "reboot"]

    /// The name of an item and the rest: `drop` and `0.05` from `drop=0.05`, `reboot` and `@5m`
    /// from `reboot@5m`.
    private static func split(_ item: String) throws(DemoFaultsError) -> (String, String) {
        guard let cut = item.firstIndex(where: { $0 == "=" || $0 == "@" }), cut != item.startIndex else {
            throw DemoFaultsError(item: item, expected: "name=value or name@time")
        }
        let name = String(item[..<cut])
        let rest = item[cut...]
        return (name, String(rest.first == "=" ? rest.dropFirst() : rest))
    }

    private static func probability(_ text: String, _ item: String) throws(DemoFaultsError) -> Double {
        guard let value = Double(text), (0...1).contains(value) else {
            throw DemoFaultsError(item: item, expected: "a probability from 0 to 1")
        }
        return value
    }

    /// One timed fault.
    private enum Event {
        case linkLoss(Duration), reboot, powerOff
    }

    /// The timed faults in the order they happen; at the same time, in the order written.
    private var timeline: [(at: Duration, event: Event)] {
        let events = outages.map { ($0.at, Event.linkLoss($0.length)) } + reboots.map { ($0, Event.reboot) }
            + (powerOff.map { [($0, Event.powerOff)] } ?? [])
        return events.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
    }

    /// Starts the module's and the timed part of the plan against `radio` and its module; times
    /// count from now on `clock`. Cancel the task to stop it.
    public func schedule(on radio: SimulatedRadio, clock: any Clock<Duration> = ContinuousClock()) -> Task<Void, Never> {
        let (timeline, busy) = (timeline, busy)
        let (_, sleepUntil) = elapsedTime(on: clock)
        return Task {
            if busy > 0 { await radio.module.setBusyRefusals(busy) }
            for (at, event) in timeline {
                guard (try? await sleepUntil(at)) != nil else { return }
                switch event {
                case .linkLoss(let length): radio.loseLink(for: length, reason: "the module went out of range (demo fault plan)")
                case .reboot: await radio.module.reboot()
                case .powerOff: await radio.module.setCameraPower(.off)
                }
            }
        }
    }
}

/// A `--demo-faults` item that could not be read.
public typealias DemoFaultsError = FaultPlanError

/// An item of a fault plan (`--demo-faults`, `unleashed-sim bluez --faults`) that could not be read.
public struct FaultPlanError: Error, Hashable, Sendable, CustomStringConvertible {
    public var item: String
    public var expected: String

    public init(item: String, expected: String) {
        self.item = item
        self.expected = expected
    }

    public var description: String { "cannot read '\(item)': expected \(expected)" }
}
