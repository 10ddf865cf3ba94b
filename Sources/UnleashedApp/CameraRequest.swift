import CameraKit
public import CameraProtocols
public import CommandCore
public import DaemonClient
import Foundation
public import Intervalometer
import UnleashedKit
public import UnleashedSimulator

/// The global options of a command as plain values, and the decisions they make: demo mode or
/// not, which backend, which camera or rig to open and where (the daemon's when one answers,
/// else in this process). Every refusal comes out as a ``CameraFailure``.
public struct CameraRequest: Sendable {
    public var demo: Bool
    public var demoProfile: String?
    public var demoSeed: UInt64
    public var demoFaults: String?
    public var demoSky: String?
    public var backend: BackendChoice?
    public var port: String?
    /// libgphoto2's name for the camera's model (`--camera-model`), for a camera it does not detect.
    public var cameraModel: String?
    public var download: String?
    public var filename: String?
    public var module: String?
    public var adapter: String?
    /// A camera driven through its own Bluetooth remote protocol (`--ble-camera`).
    public var camera: String?
    /// Its brand as written (`--brand`).
    public var brand: String?
    /// A simulated camera of this brand (`--demo-camera`), as written.
    public var demoCamera: String?
    /// How long to scan for a module BlueZ does not know yet, as written (`10s`).
    public var scanTimeout: String
    /// The process environment (`UNLEASHED_DEMO`, `UNLEASHED_BACKEND`, the configuration's places).
    public var environment: [String: String]

    public init(demo: Bool = false, demoProfile: String? = nil, demoSeed: UInt64 = 1, demoFaults: String? = nil,
                demoSky: String? = nil, backend: BackendChoice? = nil, port: String? = nil, cameraModel: String? = nil, download: String? = nil,
                filename: String? = nil, module: String? = nil, adapter: String? = nil, camera: String? = nil,
                brand: String? = nil, demoCamera: String? = nil, scanTimeout: String = "10s",
                environment: [String: String]) {
        (self.camera, self.brand, self.demoCamera) = (camera, brand, demoCamera)
        (self.demo, self.demoProfile, self.demoSeed, self.demoFaults, self.demoSky) = (demo, demoProfile, demoSeed, demoFaults, demoSky)
        (self.backend, self.port, self.cameraModel, self.download, self.filename) = (backend, port, cameraModel, download, filename)
        (self.module, self.adapter, self.scanTimeout, self.environment) = (module, adapter, scanTimeout, environment)
    }

    /// --demo, or `UNLEASHED_DEMO` set to 1, true or yes.
    public var demoMode: Bool {
        demo || DemoMode.requested(by: environment)
    }

    /// The backend chosen by --backend, else by `$UNLEASHED_BACKEND`, else the module.
    public func chosenBackend() throws(CameraFailure) -> BackendChoice {
        do throws(CameraChoiceError) {
            return try BackendChoice.chosen(backend, environment: environment)
        } catch {
            throw CameraFailure(error)
        }
    }

    /// The simulator's options: --demo-profile, --demo-faults and --demo-sky read.
    public func demoOptions() throws(CameraFailure) -> DemoOptions {
        var options = DemoOptions(seed: demoSeed)
        if let demoProfile {
            guard let profile = CameraProfile.named(demoProfile) else { throw .usage(DemoError.unknownProfile(demoProfile).description) }
            options.profile = profile
        }
        do {
            options.faults = try demoFaults.map { text throws(DemoFaultsError) in try DemoFaults(parsing: text) } ?? options.faults
        } catch {
            throw .usage("--demo-faults: \(error)")
        }
        do {
            options.scene = try demoSky.map { text throws(DaylightParseError) in try Daylight(parsing: text).sceneLight } ?? options.scene
        } catch {
            throw .usage("--demo-sky: \(error)")
        }
        return options
    }

    /// Reads a duration argument (`250ms`, `30s`, `1m30s`, `2h`) given to `option`
    /// (``PlanText/duration(_:for:)``, as a command's failure).
    public static func duration(_ text: String, for option: String) throws(CameraFailure) -> Duration {
        do throws(PlanRefusal) {
            return try PlanText.duration(text, for: option)
        } catch {
            throw CameraFailure(code: error.code, error.message, status: .usage)
        }
    }

    /// The brands `--brand` and `--demo-camera` take, for help texts.
    public static let brandNames = CameraBrand.allCases.map(\.rawValue).joined(separator: ", ")

    /// Reads a brand given to `option`.
    public static func brand(_ text: String, for option: String) throws(CameraFailure) -> CameraBrand {
        guard let brand = CameraBrand(rawValue: text.lowercased()) else {
            throw .usage("\(option): '\(text)' is not a brand this tool drives; use one of \(brandNames)")
        }
        return brand
    }

    /// Refuses an option that names a module, camera or adapter with nothing (`--module ""`, an
    /// unset variable in a script): it would otherwise ask the daemon for a camera with no name,
    /// or scan for a device called nothing.
    private func requireNamesGiven() throws(CameraFailure) {
        for (value, option) in [(module, "--module"), (camera, "--ble-camera"), (adapter, "--adapter")] {
            if let value, value.allSatisfy(\.isWhitespace) {
                throw .usage("\(option) was given an empty value; name the \(option == "--adapter" ? "adapter (hci0)" : "device by its address or name")")
            }
        }
        if let cameraModel, cameraModel.allSatisfy(\.isWhitespace) {
            throw .usage("--camera-model was given an empty value; name the model as `gphoto2 --list-cameras` lists it")
        }
        // A device's name has no colon: a value with one is an address, and one mistyped would
        // otherwise be scanned for until the scan gave up, and then "not found".
        for (value, option) in [(module, "--module"), (camera, "--ble-camera")] {
            if let value, value.contains(":"), !ModuleSpec.isAddress(value) {
                throw .usage("\(option) '\(value)' is not a Bluetooth address: six pairs of hex digits, like AA:BB:CC:DD:EE:FF")
            }
        }
    }

    /// The camera to open in this process: a camera over its own remote protocol when one is
    /// named, else the module named, else the one remembered (on the adapter named, else on the
    /// remembered module's).
    public func choice() throws(CameraFailure) -> CameraChoice {
        try requireNamesGiven()
        if module != nil, camera != nil || demoCamera != nil {
            throw .usage("--module names an Unleashed module and --ble-camera or --demo-camera a camera reached directly; use one")
        }
        if camera != nil, demoCamera != nil { throw .usage("--ble-camera and --demo-camera each name the camera; use one") }
        if brand != nil, camera == nil { throw .usage("--brand says which brand --ble-camera is; add --ble-camera ADDRESS") }
        let direct: CameraChoice.DirectCamera? = switch (camera, demoCamera) {
        case (let camera?, _): .bluetooth(camera, brand: try brand.map { text throws(CameraFailure) in try Self.brand(text, for: "--brand") })
        case (nil, let brand?): .simulated(try Self.brand(brand, for: "--demo-camera"))
        case (nil, nil): nil
        }
        let remembered = direct == nil && (module == nil || adapter == nil) ? RememberedModule.load() : nil
        return CameraChoice(backend: try chosenBackend(), demo: demoMode ? try demoOptions() : nil, port: port,
                            cameraModel: cameraModel, download: download,
                            filename: filename, module: module ?? remembered?.address,
                            adapter: adapter ?? (module == nil ? remembered?.adapter : nil),
                            scanTimeout: try Self.duration(scanTimeout, for: "--scan-timeout"), direct: direct)
    }

    /// The camera to drive: the daemon's named by --module (or its only one) when `daemon`
    /// answers, else the one the options choose, opened here. `events` says whether the caller
    /// follows the camera's events, so the daemon's camera subscribes to them before returning.
    public func open(daemon: DaemonClient?, events: Bool = true) async throws(CameraFailure) -> OpenedCamera {
        try requireNamesGiven()
        // A camera named with --ble-camera or --demo-camera is reached from here, not the daemon's.
        if let daemon, camera == nil, demoCamera == nil {
            do {
                return .remote(try await RemoteCamera.open(client: daemon, camera: module, events: events))
            } catch {
                // A socket left by a daemon that did not stop cleanly: drive the camera directly.
                guard case .notReachable = error else { throw CameraFailure(error) }
            }
        }
        let choice = try choice()
        let spec = try CameraFailure.choosing(choice.spec)
        do throws(CameraOpenError) {
            return try await CameraProvider().open(spec)
        } catch {
            throw CameraFailure(error)
        }
    }
}

extension CameraRequest {
    /// The names of the rig's cameras, in order, each once. With a daemon answering, groups and
    /// `--all` are the daemon's: its `[[groups]]` and every camera it holds. Without one they
    /// come from the configuration files the daemon would read (`unleashed daemon --check`).
    public func rigNames(_ selection: RigSelection, daemon: DaemonClient?) async throws(CameraFailure) -> [String] {
        let backend = try chosenBackend()
        if let named = try CameraFailure.choosing({ () throws(CameraChoiceError) in try selection.named(module: module, backend: backend) }) {
            return named
        }
        if let daemon, let answered = try await daemonRigs(selection, daemon) {
            return try CameraFailure.choosing { () throws(CameraChoiceError) in try selection.pick(from: answered, in: .daemon) }
        }
        let configured = try configuredRigs()
        return try CameraFailure.choosing { () throws(CameraChoiceError) in try selection.pick(from: configured, in: .configuration) }
    }

    /// The rig to resume `record` with: the cameras it was started with, which the journal
    /// keeps (``RigSelection/resuming(runID:recorded:given:)``); nil for a run of one camera.
    public func resuming(_ record: RunRecord, _ selection: RigSelection, daemon: DaemonClient?) async throws(CameraFailure) -> RigSelection? {
        let given = selection.isRig ? try await rigNames(selection, daemon: daemon) : nil
        return try CameraFailure.choosing { () throws(CameraChoiceError) in
            try RigSelection.resuming(runID: record.id, recorded: record.cameras, given: given).map { RigSelection(cameras: $0) }
        }
    }

    /// One camera per name, opened at once: the daemon's cameras when it answers, simulated
    /// ones in demo mode, else modules over BlueZ. All or none: what was opened is closed again
    /// when one fails.
    public func openRig(_ names: [String], daemon: DaemonClient?) async throws(CameraFailure) -> [OpenedCamera] {
        guard let daemon else {
            let configured = demoMode ? [:] : try configuredRigs().addresses
            let choice = try choice()
            let rig = try CameraFailure.choosing { () throws(CameraChoiceError) in try choice.rig(names, configured: configured) }
            do throws(RigOpenError) {
                return try await CameraProvider().open(rig: rig)
            } catch {
                throw CameraFailure(error.error)
            }
        }
        var opened: [OpenedCamera] = []
        for name in names {
            do {
                opened.append(.remote(try await RemoteCamera.open(client: daemon, camera: name)))
            } catch {
                for camera in opened { try? await camera.close() }
                throw CameraFailure(error)
            }
        }
        return opened
    }

    /// The rigs of the configuration files of a user's daemon (the system file, then the user's own).
    public func configuredRigs() throws(CameraFailure) -> KnownRigs {
        do throws(DaemonLaunchError) {
            return try KnownRigs.configured(environment: environment)
        } catch {
            throw CameraFailure(code: "configuration", error.description, status: .usage)
        }
    }

    /// The daemon's groups (`GET /v1/groups`) for `--group`, or its cameras (`GET /v1/status`)
    /// for `--all`; nil when it does not answer after all.
    private func daemonRigs(_ selection: RigSelection, _ daemon: DaemonClient) async throws(CameraFailure) -> KnownRigs? {
        do {
            guard selection.group != nil else { return KnownRigs(groups: [], all: try await daemon.status().cameras.map(\.name)) }
            return KnownRigs(groups: try await daemon.groups().map { KnownRigs.Group(name: $0.name, cameras: $0.cameras) }, all: [])
        } catch {
            if case .notReachable = error { return nil }
            throw CameraFailure(error)
        }
    }
}
