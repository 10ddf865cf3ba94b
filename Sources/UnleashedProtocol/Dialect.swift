/// The seam between the engine and a module's wire format.
///
/// Everything above this protocol (sessions, the camera API, the intervalometer) speaks in
/// ``Message`` values. ``UnleashedV1`` is the project's own protocol (PROTOCOL.md), which the
/// simulator also speaks. Foolography does not publish its modules' protocol; a mapping captured
/// from a real module would be another conforming type, translating to and from ``Message``.
public protocol Dialect: Sendable {
    /// A short name for logs and `--help`.
    var name: String { get }
    /// The GATT service and characteristics the transport uses.
    var gatt: GATTLayout { get }
    /// The packets, in order, that carry `message` over a link with this ATT MTU.
    func packets(for message: Message, mtu: Int) throws(MessageEncodingError) -> [[UInt8]]
    /// A receiver for one direction of one link.
    func makeReceiver(mtu: Int) throws(MessageEncodingError) -> any PacketReceiver
}

/// Turns incoming packets into messages for one direction of one link.
public protocol PacketReceiver: Sendable {
    /// Takes in one packet: any bytes give messages, errors, both or neither, never a trap.
    mutating func receive(_ packet: [UInt8]) -> Received
    /// Forgets a partial message, as after a disconnection.
    mutating func reset()
}

/// What one packet yielded.
public struct Received: Hashable, Sendable {
    public var errors: [ReceiveError]
    public var message: Message?

    public init(errors: [ReceiveError] = [], message: Message? = nil) {
        self.errors = errors
        self.message = message
    }
}

/// The UUIDs of a module's GATT service and characteristics (PROTOCOL.md §1).
public struct GATTLayout: Hashable, Sendable {
    public var service: String
    public var command: String
    public var event: String
    public var info: String

    public init(service: String, command: String, event: String, info: String) {
        self.service = service
        self.command = command
        self.event = event
        self.info = info
    }
}

/// Unleashed protocol version 1, as PROTOCOL.md defines it.
public struct UnleashedV1: Dialect {
    /// The protocol version this dialect speaks.
    public static let protocolVersion: UInt8 = 1

    public static let gattLayout = GATTLayout(
        service: "7a4e0001-c3d2-4f1b-8e5a-2b9d6f0c1e37",
        command: "7a4e0002-c3d2-4f1b-8e5a-2b9d6f0c1e37",
        event: "7a4e0003-c3d2-4f1b-8e5a-2b9d6f0c1e37",
        info: "7a4e0004-c3d2-4f1b-8e5a-2b9d6f0c1e37"
    )

    public init() {}

    public var name: String { "unleashed-v1" }
    public var gatt: GATTLayout { Self.gattLayout }

    public func packets(for message: Message, mtu: Int) throws(MessageEncodingError) -> [[UInt8]] {
        try Fragmenter(mtu: mtu).packets(for: message.encoded())
    }

    public func makeReceiver(mtu: Int) throws(MessageEncodingError) -> any PacketReceiver {
        Receiver(reassembler: try Reassembler(mtu: mtu))
    }

    /// Reassembles packets (PROTOCOL.md §3.2) and decodes what they deliver (§4, §5).
    public struct Receiver: PacketReceiver {
        var reassembler: Reassembler

        public mutating func receive(_ packet: [UInt8]) -> Received {
            let step = reassembler.receive(packet)
            var received = Received(errors: step.errors.map(ReceiveError.framing))
            if let bytes = step.message {
                do throws(MessageDecodingError) {
                    received.message = try Message(decoding: bytes)
                } catch {
                    received.errors.append(.decoding(error))
                }
            }
            return received
        }

        public mutating func reset() { reassembler.reset() }
    }
}

/// The Foolography part of a module's advertisement (PROTOCOL.md §2).
public struct ModuleAdvertisement: Hashable, Sendable {
    /// Foolography GmbH's Bluetooth company identifier.
    public static let companyIdentifier: UInt16 = 0x03EF

    /// Which camera connector the module has.
    public struct Model: RawWireEnumeration {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let nikon = Model(rawValue: 0x01)
        public static let canon = Model(rawValue: 0x02)
        public static let sony = Model(rawValue: 0x03)
        public static let fujifilm = Model(rawValue: 0x04)
        public static let panasonic = Model(rawValue: 0x05)
        public static let simulated = Model(rawValue: 0xF0)

        public static let known: [(Model, String)] = [
            (.nikon, "nikon"), (.canon, "canon"), (.sony, "sony"), (.fujifilm, "fujifilm"),
            (.panasonic, "panasonic"), (.simulated, "simulated"),
        ]
    }

    /// The state bits of the advertisement.
    public struct State: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let cameraAttached = State(rawValue: 1 << 0)
        public static let cameraOn = State(rawValue: 1 << 1)
        public static let pairingOpen = State(rawValue: 1 << 2)
        public static let clientConnected = State(rawValue: 1 << 3)
        public static let batteryLow = State(rawValue: 1 << 4)
    }

    public var model: Model
    public var state: State

    /// The camera connector the module is built for, as people name it ("Nikon").
    public var modelName: String {
        switch model {
        case .nikon: "Nikon"
        case .canon: "Canon"
        case .sony: "Sony"
        case .fujifilm: "Fujifilm"
        case .panasonic: "Panasonic"
        case .simulated: "simulated"
        default: "unknown model 0x" + String(model.rawValue, radix: 16)
        }
    }

    public init(model: Model, state: State) {
        self.model = model
        self.state = state
    }

    /// The manufacturer data after the company identifier, as BlueZ reports it (keyed by company).
    public var manufacturerData: [UInt8] { [0x01, model.rawValue, state.rawValue & 0x1F] }

    /// Reads manufacturer data filed under ``companyIdentifier``; nil for a format this version
    /// does not know, rather than a misreading.
    public init?(manufacturerData bytes: [UInt8]) {
        guard bytes.count >= 3, bytes[0] == 0x01 else { return nil }
        self.init(model: Model(rawValue: bytes[1]), state: State(rawValue: bytes[2] & 0x1F))
    }
}
