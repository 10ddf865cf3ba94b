public import CameraKit
import BlueZ
import GPhoto2
public import Daemon
public import Foundation
public import Logging
import Synchronization
import UnleashedKit
public import UnleashedSimulator

/// The cameras a daemon holds: the configured modules over BlueZ, a camera through libgphoto2,
/// or (with --demo) the built-in simulator in their place, all opened by one ``CameraProvider``.
public struct DaemonCameras<C: Clock<Duration>>: CameraOpening, CameraConnecting {
    /// Set for `unleashed daemon --demo`: simulated cameras stand in for the modules.
    public let demo: DemoOptions?
    /// The simulated cameras started, saved when the daemon stops.
    public let simulated = DaemonDemoCameras()
    private let provider = CameraProvider()
    /// The clock a module that could not be reached waits on before its next attempt.
    private let clock: C

    public init(demo: DemoOptions?, clock: C) {
        self.demo = demo
        self.clock = clock
    }

    public var simulatesCameras: Bool { demo != nil }

    public func openConfigured(into registry: CameraRegistry, configuration: DaemonConfiguration, logger: Logger) async {
        if let demo {
            await openSimulated(into: registry, configuration: configuration, options: demo, logger: logger)
            return
        }
        switch configuration.backend {
        case .gphoto2:
            await openTethered(into: registry, configuration: configuration, logger: logger)
        case .unleashed:
            if configuration.modules.isEmpty {
                logger.notice("no [[modules]] configured; `unleashed connect` adds one while the daemon runs")
            }
            await withDiscardingTaskGroup { group in
                for module in configuration.modules {
                    group.addTask { await keepTrying(module, into: registry, configuration: configuration, logger: logger) }
                }
            }
        }
    }

    /// A configured module by its name, or any module by its address (then also its name).
    public func connect(_ wanted: String, configuration: DaemonConfiguration) async throws(CameraConnectError)
        -> (name: String, camera: any Camera, source: String)
    {
        let configured = configuration.modules.first { $0.name.lowercased() == wanted.lowercased() || $0.address == wanted.uppercased() }
        if let demo {
            var options = demo
            options.seed &+= 1000
            let name = configured?.name ?? wanted
            do throws(CameraOpenError) {
                let opened = try await provider.open(CameraSpec(name: name, .demo(options, stateFile: DaemonDemoCameras.stateFile(for: name))))
                if case .demo(let started) = opened { simulated.add(started) }
                return (name, opened.camera, "simulated")
            } catch {
                throw CameraConnectError("the simulator did not start: \(error)")
            }
        }
        guard configuration.backend == .unleashed else {
            throw CameraConnectError("this daemon drives a camera through libgphoto2, not modules", isClientError: true)
        }
        let module = configured ?? DaemonConfiguration.Module(name: wanted.uppercased(), address: wanted.uppercased(), adapter: nil)
        guard configured != nil || ModuleSpec.isAddress(wanted) else {
            throw CameraConnectError("'\(wanted)' is neither a configured module's name nor a Bluetooth address", isClientError: true)
        }
        do throws(CameraOpenError) {
            return (module.name, try await provider.open(Self.spec(module, configuration: configuration)).camera, module.address)
        } catch {
            throw CameraConnectError(error.description)
        }
    }

    /// One simulated camera per configured module, named as the module, or one named `demo`.
    private func openSimulated(into registry: CameraRegistry, configuration: DaemonConfiguration,
                               options: DemoOptions, logger: Logger) async {
        let names = configuration.modules.isEmpty
            ? [("demo", "simulated")] : configuration.modules.map { ($0.name, "simulated " + $0.address) }
        for (index, (name, source)) in names.enumerated() {
            var seeded = options
            seeded.seed = options.seed &+ UInt64(index)
            do throws(CameraOpenError) {
                let opened = try await provider.open(CameraSpec(name: name, .demo(seeded, stateFile: DaemonDemoCameras.stateFile(for: name))))
                if case .demo(let started) = opened { simulated.add(started) }
                await registry.add(opened.camera, name: name, source: source)
                logger.info("camera \(name): the built-in simulator")
            } catch {
                logger.error("camera \(name): the simulator did not start: \(error)")
            }
        }
    }

    private func openTethered(into registry: CameraRegistry, configuration: DaemonConfiguration, logger: Logger) async {
        let (port, model) = (configuration.port, configuration.cameraModel)
        let named = model.map { " as the model '\($0)'" } ?? ""
        do throws(CameraOpenError) {
            let downloads = configuration.downloads.folder.map {
                DownloadPolicy(folder: $0, template: configuration.downloads.template, deleteFromCamera: configuration.downloads.deleteFromCamera)
            }
            let camera = try await provider.open(CameraSpec(.tethered(port: port, model: model, downloads: downloads))).camera
            await registry.add(camera, name: camera.identity.name, source: port ?? "usb:")
            logger.info("camera \(camera.identity.name): libgphoto2 on \(port ?? (model == nil ? "the first USB camera" : "usb:"))\(named)")
        } catch {
            logger.error("no camera through libgphoto2 on \(port ?? "USB")\(named): \(error)")
        }
    }

    /// Opens `module`, waiting between attempts as its reconnect policy says, until it is held
    /// or the configuration's `give_up_after` passes. Once held, its own connection reconnects it.
    private func keepTrying(_ module: DaemonConfiguration.Module, into registry: CameraRegistry,
                            configuration: DaemonConfiguration, logger: Logger) async {
        let spec = Self.spec(module, configuration: configuration)
        let policy: ReconnectPolicy
        switch spec.backend {
        case .module(let moduleSpec): policy = moduleSpec.reconnect
        case .bluetoothCamera(let cameraSpec): policy = cameraSpec.reconnect
        default: return
        }
        let limit = configuration.reconnect.giveUpAfter
        let held = await keepOpening(policy: policy, giveUpAfter: limit, clock: clock) { () async throws(CameraOpenError) in
            try await provider.open(spec)
        } failed: { error, wait in
            if let wait {
                logger.warning("module \(module.name) (\(module.address)): \(error); trying again in \(wait.compactText)")
            } else {
                logger.warning("module \(module.name) (\(module.address)): \(error)")
                if let limit { logger.error("module \(module.name): giving up after \(limit.compactText), as the configuration says") }
            }
        }
        guard let held else { return }
        await registry.add(held.camera, name: module.name, source: module.address)
        logger.info("module \(module.name) (\(module.address)) connected")
    }

    /// The configured module as a camera to open: found on its adapter (or the configuration's),
    /// paired if BlueZ has not (only pairings that need no answer: a passkey needs
    /// `unleashed pair` once), reconnected as the configuration says.
    public static func spec(_ module: DaemonConfiguration.Module, configuration: DaemonConfiguration) -> CameraSpec {
        let reconnect = configuration.reconnect
        if let brand = module.brand {
            return CameraSpec(name: module.name, .bluetoothCamera(BluetoothCameraSpec(
                camera: module.address, brand: brand, adapter: module.adapter ?? configuration.adapter, scanTimeout: .seconds(10),
                pairing: .pair(unattendedAgent), reconnect: reconnect)))
        }
        return CameraSpec(name: module.name, .module(ModuleSpec(
            module: module.address, adapter: module.adapter ?? configuration.adapter, scanTimeout: .seconds(10),
            pairing: .pair(unattendedAgent), reconnect: reconnect,
            bluezSockets: ModuleSpec.bluezSockets(ProcessInfo.processInfo.environment, daemon: true))))
    }

    /// A daemon has no one to ask: it accepts what needs no answer and says how to pair otherwise.
    private static var unattendedAgent: PairingAgent {
        PairingAgent { request in
            switch request {
            case .authorize, .display: .accept
            default: .reject("the module asks a question the daemon cannot answer; pair it once with `unleashed pair --direct`")
            }
        }
    }
}

/// The simulated cameras of a daemon started with --demo. Each keeps its state in the file the
/// CLI's demo mode uses for a camera of that name, restored when the daemon starts and saved when
/// it stops, so that the camera outlives a restart as it outlives a command.
public final class DaemonDemoCameras: Sendable {
    private let started = Mutex<[Demo]>([])

    public init() {}

    /// The one camera of a daemon without modules, `demo`, is the CLI's demo camera; a camera
    /// named after a module is the one `--demo --camera NAME` drives.
    public static func stateFile(for name: String) -> URL {
        name == "demo" ? Demo.defaultStateFile() : CameraSpec.demoStateFile(for: name)
    }

    func add(_ demo: Demo) {
        started.withLock { $0.append(demo) }
    }

    /// Saves every simulated camera to its state file.
    public func save(logger: Logger) async {
        for demo in started.withLock({ $0 }) {
            do {
                try await demo.finish()
            } catch {
                logger.error("the simulated camera was not saved: \(error)")
            }
        }
    }
}
