import CameraKit
public import CameraProtocols
import Foundation
import GPhoto2
import UnleashedKit
public import UnleashedSimulator

/// The backends a command can drive a camera with.
public enum BackendChoice: String, CaseIterable, Sendable {
    /// A camera behind an Unleashed module, over Bluetooth (or the --demo simulator).
    case unleashed
    /// A camera tethered by USB (or reached over PTP/IP), through libgphoto2.
    case gphoto2

    /// The backend `given` names, else `$UNLEASHED_BACKEND`'s, else the module: a script can
    /// pick it once for every command it runs.
    public static func chosen(_ given: BackendChoice?, environment: [String: String]) throws(CameraChoiceError) -> BackendChoice {
        if let given { return given }
        guard let named = environment["UNLEASHED_BACKEND"], !named.isEmpty else { return .unleashed }
        guard let choice = BackendChoice(rawValue: named.lowercased()) else {
            throw .usage("UNLEASHED_BACKEND: '\(named)' is not a backend; use unleashed or gphoto2")
        }
        return choice
    }
}

/// Why the camera a command asks for cannot be chosen.
public enum CameraChoiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Options that do not go together, or a value that cannot be read.
    case usage(String)
    /// A module is needed and none was named or remembered.
    case noModule
    /// A name that is not there (a group, a module), with a code scripts can tell apart.
    case invalid(code: String, String)

    public var description: String {
        switch self {
        case .usage(let message), .invalid(_, let message): message
        case .noModule:
            "no module chosen: run `unleashed connect` once (it remembers the module) or pass --module ADDRESS; "
                + "without a module, run with --demo (or UNLEASHED_DEMO=1) to use the built-in simulator"
        }
    }
}

/// What a command run in this process asks for, as plain values: the decision of which camera to
/// open, and the refusals of options that do not fit it, made before anything is opened.
public struct CameraChoice: Sendable {
    public var backend: BackendChoice
    /// The simulator's options in demo mode; nil otherwise.
    public var demo: DemoOptions?
    /// libgphoto2's port (`usb:`, `usb:BUS,DEV`, `ptpip:HOST`).
    public var port: String?
    /// libgphoto2's name for the camera's model, for a camera it does not detect.
    public var cameraModel: String?
    /// The folder pictures are copied to (libgphoto2 only).
    public var download: String?
    /// The template downloaded pictures are named by.
    public var filename: String?
    /// The module named or remembered; nil when there is none.
    public var module: String?
    public var adapter: String?
    public var scanTimeout: Duration
    /// A camera reached through its own Bluetooth remote protocol instead of a module.
    public var direct: DirectCamera?

    /// A camera driven through its own remote protocol.
    public enum DirectCamera: Sendable, Equatable {
        /// A camera over BlueZ, by address or name; its brand as named, else read from its advertisement.
        case bluetooth(String, brand: CameraBrand?)
        /// A simulated camera of the brand, in this process.
        case simulated(CameraBrand)
    }

    public init(backend: BackendChoice, demo: DemoOptions?, port: String? = nil, cameraModel: String? = nil, download: String? = nil,
                filename: String? = nil, module: String? = nil, adapter: String? = nil, scanTimeout: Duration = .seconds(10),
                direct: DirectCamera? = nil) {
        self.direct = direct
        self.backend = backend
        self.demo = demo
        self.port = port
        self.cameraModel = cameraModel
        self.download = download
        self.filename = filename
        self.module = module
        self.adapter = adapter
        self.scanTimeout = scanTimeout
    }

    /// The one camera to open: through libgphoto2 with that backend, else the simulator in
    /// demo mode, else the module over BlueZ.
    public func spec() throws(CameraChoiceError) -> CameraSpec {
        if backend == .gphoto2 {
            if demo != nil {
                throw .usage("--demo simulates an Unleashed module; to try --backend gphoto2 without a camera, start "
                    + "`unleashed-sim ptpip` and add --port ptpip:127.0.0.1 (see docs/usb-cameras.md)")
            }
            return CameraSpec(.tethered(port: port, model: cameraModel, downloads: try downloads()))
        }
        if port != nil { throw .usage("--port names a libgphoto2 port; add --backend gphoto2") }
        if cameraModel != nil { throw .usage("--camera-model names a camera model for libgphoto2; add --backend gphoto2") }
        if let direct {
            if download != nil || filename != nil {
                throw .usage("camera remotes over Bluetooth do not transfer pictures; --download and --filename need --backend gphoto2")
            }
            switch direct {
            case .simulated(let brand): return CameraSpec(.demoCamera(brand))
            case .bluetooth(let camera, let brand):
                return CameraSpec(.bluetoothCamera(BluetoothCameraSpec(camera: camera, brand: brand, adapter: adapter, scanTimeout: scanTimeout)))
            }
        }
        if download != nil || filename != nil {
            throw .usage("the module does not transfer pictures; --download and --filename need --backend gphoto2")
        }
        if let demo { return CameraSpec(.demo(demo, stateFile: Demo.defaultStateFile())) }
        guard let module else { throw .noModule }
        return CameraSpec(.module(ModuleSpec(module: module, adapter: adapter, scanTimeout: scanTimeout)))
    }

    /// A rig's cameras by name: simulators in demo mode, else modules over BlueZ, a configured
    /// module's name standing for its address (`configured` maps names to addresses).
    public func rig(_ names: [String], configured: [String: String] = [:]) throws(CameraChoiceError) -> RigSpec {
        guard backend == .unleashed else {
            throw .usage("a rig is a set of Unleashed modules; --backend gphoto2 drives one camera")
        }
        return names.enumerated().map { index, name in
            if let (brand, camera) = Self.brandedMember(name) {
                if demo != nil { return CameraSpec(name: name, .demoCamera(brand)) }
                return CameraSpec(name: name, .bluetoothCamera(BluetoothCameraSpec(camera: configured[camera] ?? camera, brand: brand,
                                                                                    adapter: adapter, scanTimeout: scanTimeout)))
            }
            if var demo {
                demo.seed = demo.seed &+ UInt64(index)
                return CameraSpec.demo(named: name, options: demo)
            }
            return CameraSpec(name: name, .module(ModuleSpec(module: configured[name] ?? name, adapter: adapter,
                                                             scanTimeout: scanTimeout)))
        }
    }

    /// A rig member written `BRAND:ADDRESS` (`sony:C0:CA:4E:00:00:02`): a camera driven through
    /// its own remote protocol; nil for a module's name or address.
    static func brandedMember(_ name: String) -> (CameraBrand, String)? {
        guard let colon = name.firstIndex(of: ":"), let brand = CameraBrand(rawValue: name[..<colon].lowercased()) else { return nil }
        return (brand, String(name[name.index(after: colon)...]))
    }

    private func downloads() throws(CameraChoiceError) -> DownloadPolicy? {
        guard let download else {
            if filename != nil { throw .usage("--filename names downloaded pictures; add --download FOLDER") }
            return nil
        }
        do throws(FilenameTemplateError) {
            let template = try filename.map { text throws(FilenameTemplateError) in try FilenameTemplate(parsing: text) } ?? .default
            return DownloadPolicy(folder: download, template: template)
        } catch {
            throw .usage("--filename: \(error)")
        }
    }
}
