public import CameraKit
public import CameraProtocols
public import CameraRemote
public import BlueZ
public import Foundation
public import GPhoto2
public import UnleashedKit
public import UnleashedSimulator

/// One camera to open, whatever drives it: what the CLI's options and the daemon's
/// configuration both come down to, so that one ``CameraProvider`` opens it for either.
public struct CameraSpec: Sendable {
    /// What drives the camera.
    public enum Backend: Sendable {
        /// A camera behind an Unleashed module, reached over BlueZ.
        case module(ModuleSpec)
        /// The built-in simulated module and camera, keeping its state in `stateFile`.
        case demo(DemoOptions, stateFile: URL)
        /// A camera tethered by USB (or reached over PTP/IP) through libgphoto2; `port` nil is
        /// the first USB camera. `model`, libgphoto2's name for it, opens a camera that
        /// libgphoto2 does not detect as that model; nil detects it.
        case tethered(port: String?, model: String? = nil, downloads: DownloadPolicy?)
        /// A camera driven over Bluetooth through its own remote protocol (GoPro, Sony, Canon,
        /// Fujifilm, Nikon).
        case bluetoothCamera(BluetoothCameraSpec)
        /// A simulated camera of a brand, in this process, spoken to through the brand's
        /// protocol as a real one would be.
        case demoCamera(CameraBrand)
    }

    /// The name the camera goes by (a rig's member, a daemon's camera); nil lets the backend
    /// name it (the module's Bluetooth name, the camera's model).
    public var name: String?
    public var backend: Backend

    public init(name: String? = nil, _ backend: Backend) {
        self.name = name
        self.backend = backend
    }

    /// Where the camera is, for the daemon's `source` and for messages.
    public var source: String {
        switch backend {
        case .module(let module): module.module
        case .demo: "simulated"
        case .tethered(let port, _, _): port ?? "usb:"
        case .bluetoothCamera(let camera): camera.camera
        case .demoCamera(let brand): "simulated \(brand.displayName)"
        }
    }
}

/// A rig: the cameras fired together, in order, each named once.
public typealias RigSpec = [CameraSpec]

/// An Unleashed module to reach over BlueZ.
public struct ModuleSpec: Sendable {
    /// How a module BlueZ has not paired is treated.
    public enum Pairing: Sendable {
        /// It must be paired already (`unleashed pair` asks the person at the terminal), so that
        /// a command is refused at once with what to do instead of waiting on a question.
        case required
        /// It is paired now (unless BlueZ has a bond) with `agent` answering the module's
        /// questions: the person at the terminal, or for the daemon, no one.
        case pair(PairingAgent)
    }

    /// The module's Bluetooth address, or the name BlueZ knows it by.
    public var module: String
    /// The adapter (`hci0`); nil is the first.
    public var adapter: String?
    /// How long to scan for a module BlueZ does not know yet.
    public var scanTimeout: Duration
    public var pairing: Pairing
    /// How the module's connection comes back after a drop, and how the daemon retries a
    /// module it could not reach.
    public var reconnect: ReconnectPolicy
    /// Whether packets travel on the sockets BlueZ hands out for the module's characteristics
    /// (`AcquireWrite`, `AcquireNotify`) where it offers them, or only as D-Bus messages.
    public var bluezSockets: Bool

    /// - Parameter bluezSockets: by default, a command's own link keeps to D-Bus messages (see
    ///   ``bluezSockets(_:daemon:)``).
    public init(module: String, adapter: String? = nil, scanTimeout: Duration = .seconds(10),
                pairing: Pairing = .required, reconnect: ReconnectPolicy = ReconnectPolicy(),
                bluezSockets: Bool = ModuleSpec.bluezSockets(ProcessInfo.processInfo.environment, daemon: false)) {
        self.module = module
        self.adapter = adapter
        self.scanTimeout = scanTimeout
        self.pairing = pairing
        self.reconnect = reconnect
        self.bluezSockets = bluezSockets
    }

    /// Whether a link takes the characteristics' sockets: by default the daemon's do and a
    /// command's own do not, since BlueZ gives a characteristic's sockets to one program at a
    /// time and then refuses every other program the module, messages included. The daemon is
    /// meant to be the one program that holds a module; a command run on its own is often one
    /// of two (a `watch` beside a `shoot`), which share a module over messages.
    /// `UNLEASHED_BLUEZ_SOCKETS` set to `1`, `true`, `yes` or `on` turns them on, to anything
    /// else off (empty is unset): a value it does not know turns them off rather than being
    /// ignored, a way back to messages for a BlueZ or adapter whose sockets misbehave.
    public static func bluezSockets(_ environment: [String: String], daemon: Bool) -> Bool {
        guard let value = environment["UNLEASHED_BLUEZ_SOCKETS"]?.lowercased(), !value.isEmpty else { return daemon }
        return ["1", "true", "yes", "on"].contains(value)
    }

    /// Whether `text` is a Bluetooth address, `AA:BB:CC:DD:EE:FF` in either case, rather than a name.
    public static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

/// A camera to reach over BlueZ through its own remote protocol.
public struct BluetoothCameraSpec: Sendable {
    /// The camera's Bluetooth address, or the name BlueZ knows it by.
    public var camera: String
    /// Its brand; nil reads it from the camera's advertisement.
    public var brand: CameraBrand?
    /// The adapter (`hci0`); nil is the first.
    public var adapter: String?
    /// How long to scan for a camera BlueZ does not know yet.
    public var scanTimeout: Duration
    public var pairing: ModuleSpec.Pairing
    /// How the connection comes back after the camera slept or left range.
    public var reconnect: ReconnectPolicy
    /// How long one step of an operation waits for the camera's answer before it fails as
    /// "may or may not have run".
    public var stepTimeout: Duration

    public init(camera: String, brand: CameraBrand? = nil, adapter: String? = nil, scanTimeout: Duration = .seconds(10),
                pairing: ModuleSpec.Pairing = .required, reconnect: ReconnectPolicy = ReconnectPolicy(),
                stepTimeout: Duration = RemoteTiming().stepTimeout) {
        self.camera = camera
        self.brand = brand
        self.adapter = adapter
        self.scanTimeout = scanTimeout
        self.pairing = pairing
        self.reconnect = reconnect
        self.stepTimeout = stepTimeout
    }
}

/// Why a camera could not be opened.
public enum CameraOpenError: Error, Sendable, CustomStringConvertible {
    /// BlueZ could not find, pair or reach the module.
    case bluetooth(BlueZError)
    /// The camera (or its module) refused or failed.
    case camera(CameraError)
    /// The simulator's state could not be read or saved.
    case demo(DemoError)

    public var description: String {
        switch self {
        case .bluetooth(let error): error.description
        case .camera(let error): error.description
        case .demo(let error): error.description
        }
    }
}

extension CameraSpec {
    /// The simulator for the camera `name` of a rig (or a daemon): each keeps its settings in a
    /// file of its own beside the single demo camera's, so that it outlives a command or a restart.
    public static func demo(named name: String, options: DemoOptions) -> CameraSpec {
        CameraSpec(name: name, .demo(options, stateFile: demoStateFile(for: name)))
    }

    /// The state file of the simulated camera `name`: the demo camera's own file with the
    /// name (made safe for a file name) before its extension.
    public static func demoStateFile(for name: String) -> URL {
        let single = Demo.defaultStateFile()
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return single.deletingPathExtension().appendingPathExtension("\(safe).json")
    }
}
