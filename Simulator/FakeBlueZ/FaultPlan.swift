public import UnleashedSimulator
import UnleashedKit

extension FakeBlueZ {
    /// Faults of the radio and of bluetoothd, as `--faults` and the control interface's
    /// `SetFaults` take them: comma-separated items, e.g. `connect-abort=2,resolve-delay=3s,linkloss=5s@10s,restart=1s@1m,refuse-pairing`.
    ///
    /// | Item | Meaning |
    /// |---|---|
    /// | `connect-abort=N` | the next N connection attempts come up and drop at once: `le-connection-abort-by-local` |
    /// | `resolve-delay=D` | services take D to resolve after the link is up |
    /// | `linkloss=D@T` | T after a module's first connection its link drops and it is out of range for D; may repeat |
    /// | `restart=D@T` | T after the plan starts bluetoothd restarts, away for D; may repeat |
    /// | `refuse-pairing` | every pairing is rejected |
    ///
    /// Durations are written as ``parseDuration(_:)`` reads them: `250ms`, `3s`, `1m`.
    public struct FaultPlan: Sendable, Hashable {
        /// Connection attempts still to abort.
        public var connectAborts = 0
        /// Replaces ``Timing/resolveDelay`` when set.
        public var resolveDelay: Duration?
        /// Outages after a module's first connection.
        public var linkLosses: [TimedFault] = []
        /// Restarts of bluetoothd after the plan starts.
        public var restarts: [TimedFault] = []
        /// Whether pairing is rejected.
        public var refusePairing = false

        /// Something that happens `after` a starting point and lasts `length`.
        public struct TimedFault: Sendable, Hashable {
            /// How long it lasts.
            public var length: Duration
            /// When it happens, from its starting point.
            public var after: Duration

            public init(length: Duration, after: Duration) {
                self.length = length
                self.after = after
            }
        }

        /// No faults.
        public init() {}

        /// Reads a plan; the error names the item at fault and says what was expected. An empty
        /// text is no faults.
        public init(parsing text: String) throws(FaultPlanError) {
            guard !text.isEmpty else { return }
            var seen: Set<String> = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                let (name, value) = Self.split(item)
                guard seen.insert(name).inserted || ["linkloss", "restart"].contains(name) else {
                    throw FaultPlanError(item: item, expected: "\(name) only once")
                }
                switch name {
                case "connect-abort":
                    guard let count = value.flatMap({ Int($0) }), count >= 0 else {
                        throw FaultPlanError(item: item, expected: "connect-abort=N, a whole number")
                    }
                    connectAborts = count
                case "resolve-delay":
                    guard let delay = value.flatMap(parseDuration) else {
                        throw FaultPlanError(item: item, expected: "resolve-delay=DURATION, e.g. resolve-delay=3s")
                    }
                    resolveDelay = delay
                case "linkloss", "restart":
                    guard let fault = value.flatMap(Self.timed), name == "restart" || fault.length > .zero else {
                        throw FaultPlanError(item: item, expected: "\(name)=DURATION@AFTER, e.g. \(name)=5s@30s")
                    }
                    if name == "linkloss" { linkLosses.append(fault) } else { restarts.append(fault) }
                case "refuse-pairing":
                    guard value == nil else { throw FaultPlanError(item: item, expected: "refuse-pairing without a value") }
                    refusePairing = true
                default:
                    throw FaultPlanError(item: item, expected: "one of connect-abort, resolve-delay, linkloss, restart, refuse-pairing")
                }
            }
        }

        private static func split(_ item: String) -> (String, String?) {
            guard let cut = item.firstIndex(of: "=") else { return (item, nil) }
            return (String(item[..<cut]), String(item[item.index(after: cut)...]))
        }

        private static func timed(_ text: String) -> TimedFault? {
            let pieces = text.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 2, let length = parseDuration(pieces[0]), let after = parseDuration(pieces[1]) else { return nil }
            return TimedFault(length: length, after: after)
        }
    }

    /// A fault plan item that could not be read (the simulator's one error type for plans).
    public typealias FaultPlanError = UnleashedSimulator.FaultPlanError
}
