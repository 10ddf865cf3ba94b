public import UnleashedSimulator
import Foundation
import UnleashedKit

/// What goes wrong with the simulated tethered camera, written as `--faults` takes it:
/// comma-separated items, e.g. `busy=0.1,unplug=5s@30s`.
///
/// | Item | Meaning |
/// |---|---|
/// | `busy=P` | InitiateCapture and SetDevicePropValue are refused with DeviceBusy with probability `P` |
/// | `unplug=D@T` | at `T` after start the camera disappears for `D`: both connections drop and new ones are refused; may repeat |
public struct PTPIPFaultPlan: Sendable, Equatable {
    /// The probability that a command is refused with DeviceBusy.
    public var busy = 0.0
    /// When (after start) the camera disappears, and for how long.
    public var unplugs: [Unplug] = []

    /// One disappearance of the camera.
    public struct Unplug: Sendable, Equatable {
        public var at: Duration
        public var length: Duration

        public init(at: Duration, length: Duration) {
            self.at = at
            self.length = length
        }
    }

    public init(busy: Double = 0, unplugs: [Unplug] = []) {
        self.busy = busy
        self.unplugs = unplugs
    }

    /// Reads a plan; the error names the item at fault and says what was expected.
    public init(parsing text: String) throws(FaultPlanError) {
        var seenBusy = false
        for item in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            switch (parts.first, parts.count) {
            case ("busy", 2):
                guard !seenBusy else { throw FaultPlanError(item: item, expected: "busy only once") }
                guard let probability = Double(parts[1]), (0...1).contains(probability) else {
                    throw FaultPlanError(item: item, expected: "a probability from 0 to 1")
                }
                seenBusy = true
                busy = probability
            case ("unplug", 2):
                let times = parts[1].split(separator: "@", maxSplits: 1).map(String.init)
                guard times.count == 2, let length = parseDuration(times[0]), let at = parseDuration(times[1]), length > .zero else {
                    throw FaultPlanError(item: item, expected: "unplug=DURATION@TIME, e.g. unplug=5s@30s")
                }
                unplugs.append(Unplug(at: at, length: length))
            default:
                throw FaultPlanError(item: item, expected: "busy=PROBABILITY or unplug=DURATION@TIME")
            }
        }
    }
}

/// How the simulated tethered camera behaves.
public struct PTPIPCameraOptions: Sendable {
    /// The body: its settings ladders, timings, card size and battery.
    public var profile: CameraProfile
    /// Makes the busy fault repeatable.
    public var seed: UInt64
    /// Pictures the card holds; nil for the profile's.
    public var cardCapacity: Int?
    public var faults: PTPIPFaultPlan
    /// Multiplies every simulated duration (shutter lag, exposure, write time); 0.01 makes a
    /// 1 s exposure take 10 ms, which keeps tests fast.
    public var timeScale: Double
    /// The largest packet a client may send; a longer one closes its connection.
    public var maximumPacketSize: Int
    /// The camera's name in the PTP/IP handshake.
    public var friendlyName: String
    /// The light in front of the camera, from the server's start; nil for a constant scene that
    /// 1/125 s at f/8, ISO 100 exposes correctly. Pictures come out as bright as this light and
    /// the settings make them, so an exposure ramp can be tried over libgphoto2.
    public var scene: SceneLight?
    /// Where log lines go (the CLI writes them to stderr).
    public var log: @Sendable (String) -> Void
    /// Called for each thing worth counting, in order (the CLI prints them as JSON lines).
    public var onEvent: @Sendable (PTPIPCameraEvent) -> Void

    public init(profile: CameraProfile = .nikonLike, seed: UInt64 = 1, cardCapacity: Int? = nil, faults: PTPIPFaultPlan = PTPIPFaultPlan(),
                timeScale: Double = 1, maximumPacketSize: Int = 1 << 20, friendlyName: String = "Unleashed Simulator",
                scene: SceneLight? = nil, log: @escaping @Sendable (String) -> Void = { _ in }, onEvent: @escaping @Sendable (PTPIPCameraEvent) -> Void = { _ in }) {
        self.profile = profile
        self.seed = seed
        self.cardCapacity = cardCapacity
        self.faults = faults
        self.timeScale = timeScale
        self.maximumPacketSize = maximumPacketSize
        self.friendlyName = friendlyName
        self.scene = scene
        self.log = log
        self.onEvent = onEvent
    }
}

/// Something that happened on the simulated camera, for counting and for the CLI's stdout.
public enum PTPIPCameraEvent: Sendable, Equatable {
    /// A client connected; `kind` is `command`, `event`, or `refused` while unplugged.
    case connection(remote: String, kind: String)
    case sessionOpened(sessions: Int)
    case sessionClosed(sessions: Int)
    /// A picture was written to the card, `brightness` stops from a correct exposure.
    case capture(file: String, bytes: [UInt8], brightness: Double)
    case download(file: String, bytes: Int)
    /// A capture was refused: `busy` or `full`.
    case refused(reason: String)
    case unplugged
    case replugged

    /// The event as one JSON object, as the CLI prints it.
    public var jsonLine: String {
        switch self {
        case .connection(let remote, let kind): #"{"event":"connection","remote":\#(quoted(remote)),"kind":\#(quoted(kind))}"#
        case .sessionOpened(let sessions): #"{"event":"sessionOpened","sessions":\#(sessions)}"#
        case .sessionClosed(let sessions): #"{"event":"sessionClosed","sessions":\#(sessions)}"#
        case .capture(let file, let bytes, let brightness):
            #"{"event":"capture","file":\#(quoted(file)),"bytes":\#(bytes.count),"brightness":\#((brightness * 100).rounded() / 100)}"#
        case .download(let file, let bytes): #"{"event":"download","file":\#(quoted(file)),"bytes":\#(bytes)}"#
        case .refused(let reason): #"{"event":"refused","reason":\#(quoted(reason))}"#
        case .unplugged: #"{"event":"unplugged"}"#
        case .replugged: #"{"event":"replugged"}"#
        }
    }

    private func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// Counters of what the simulated camera has done since it started.
public struct PTPIPStats: Sendable, Equatable {
    /// Connections accepted, command and event ones alike (refused ones included).
    public var connections = 0
    public var sessionsOpened = 0
    public var sessionsClosed = 0
    /// Pictures written to the card.
    public var captures = 0
    /// Objects handed out in full (GetObject, or GetPartialObject reaching the end).
    public var objectsDownloaded = 0
    /// Bytes sent in data phases.
    public var bytesServed = 0
    public var refusedBusy = 0
    public var refusedFull = 0
    /// Connections closed for malformed or oversized packets.
    public var protocolErrors = 0

    public init() {}
}
