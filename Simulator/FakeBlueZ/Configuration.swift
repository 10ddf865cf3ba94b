public import UnleashedSimulator

extension FakeBlueZ {
    /// What the fake serves and how fast it answers: `unleashed-sim bluez` fills it from its
    /// options, tests build one directly.
    public struct Configuration: Sendable {
        /// Simulated Unleashed modules in range, each behind its own device object.
        public var modules: Int
        /// Cameras in range beside the modules, each a simulated body behind its own device object,
        /// at the addresses ``SimulatedCameraCatalog/address(index:)`` gives, in this order.
        public var cameras: [CameraSource] = []
        /// Adapters `hci0`, `hci1`, ...; zero is a machine without Bluetooth.
        public var adapters: Int
        /// Whether the adapters start powered.
        public var powered: Bool
        /// The ATT MTU of every link (the `MTU` property, and the limit on written values).
        public var mtu: Int
        /// How pairing authenticates.
        public var pairing: PairingMode
        /// What goes wrong, and when.
        public var faults: FaultPlan
        /// The camera body attached to every module.
        public var profile: CameraProfile
        /// Other bodies for some modules, by index from 0: a rig of mixed cameras.
        public var profileOverrides: [Int: CameraProfile] = [:]
        /// How far some modules' own timers run fast (positive) or slow, in parts per million,
        /// by index from 0: clocks that drift apart, as real modules' crystals do.
        public var timerDriftPPM: [Int: Double] = [:]
        /// Makes RSSI, passkeys and the modules' own randomness repeatable.
        public var seed: UInt64
        /// How long each step takes.
        public var timing: Timing
        /// Where the fake says what happens (stderr in `unleashed-sim`).
        public var log: @Sendable (String) -> Void

        /// Two modules on one powered adapter, Just Works pairing, no faults, real timing.
        public init(
            modules: Int = 2, adapters: Int = 1, powered: Bool = true, mtu: Int = 247,
            pairing: PairingMode = .justWorks, faults: FaultPlan = FaultPlan(),
            profile: CameraProfile = CameraProfile.all[0], seed: UInt64 = 1, timing: Timing = Timing(),
            log: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.modules = modules
            self.adapters = adapters
            self.powered = powered
            self.mtu = mtu
            self.pairing = pairing
            self.faults = faults
            self.profile = profile
            self.seed = seed
            self.timing = timing
            self.log = log
        }
    }

    /// How `Device1.Pair()` authenticates, as the module's I/O capabilities would decide.
    public enum PairingMode: String, Sendable, CaseIterable {
        /// LE Secure Connections "Just Works": no agent is asked (the module's default, PROTOCOL.md §1).
        case justWorks = "justworks"
        /// Numeric comparison: the agent's `RequestConfirmation` must accept the module's passkey.
        case confirm
        /// Passkey entry: the agent's `RequestPasskey` must return the module's passkey.
        case passkey
    }

    /// The delays of the simulated radio and bluetoothd. The defaults are close to a real
    /// adapter's; tests lengthen the hold times so that overlapping operations are observable.
    public struct Timing: Sendable {
        /// From `Connect()` until the link is up (and the call is answered).
        public var linkDelay: Duration = .milliseconds(30)
        /// From the link coming up until the GATT objects are exported and `ServicesResolved`.
        public var resolveDelay: Duration = .milliseconds(50)
        /// From `StartDiscovery()` until the modules' first advertisements are reported.
        public var discoveryDelay: Duration = .milliseconds(150)
        /// How often RSSI is reported again while discovering.
        public var rssiInterval: Duration = .seconds(1)
        /// How long an unpaired, unconnected device stays once nobody discovers (BlueZ's `TemporaryTimeout`).
        public var temporaryTimeout: Duration = .seconds(30)
        /// How long a read or a write request is in flight: a second one meanwhile gets `InProgress`.
        public var operationHold: Duration = .milliseconds(10)
        /// How long Just Works pairing takes once the link is up.
        public var pairingDelay: Duration = .milliseconds(20)
        /// Under the `connect-abort` fault, how long `Connected` stays true before the abort.
        public var abortDelay: Duration = .milliseconds(20)

        /// A real adapter's timing.
        public init() {}

        /// Short steps, for tests and benchmarks that set up many links and should not wait for
        /// a real adapter's delays.
        public static var quick: Timing {
            var timing = Timing()
            timing.discoveryDelay = .milliseconds(20)
            timing.rssiInterval = .milliseconds(200)
            timing.linkDelay = .milliseconds(10)
            timing.resolveDelay = .milliseconds(30)
            timing.pairingDelay = .milliseconds(10)
            return timing
        }
    }
}
