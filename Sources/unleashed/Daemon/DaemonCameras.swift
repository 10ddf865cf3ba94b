import BlueZ
import CameraKit
import Daemon
import Foundation
import GPhoto2
import Logging
import Synchronization
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The cameras a daemon started by this executable holds: the configured modules over BlueZ,
/// a camera through libgphoto2, or (with --demo) the built-in simulator in their place.
struct DaemonCameras: CameraOpening, CameraConnecting {
    /// Set for `unleashed daemon --demo`: simulated cameras stand in for the modules.
    let demo: DemoOptions?
    /// The simulated cameras started, saved when the daemon stops.
    let simulated = SimulatedCameras()

    func openConfigured(into registry: CameraRegistry, configuration: DaemonConfiguration, logger: Logger) async {
        if let demo {
            await openSimulated(into: registry, configuration: configuration, options: demo, logger: logger)
            return
        }
        switch configuration.backend {
        case .gphoto2:
            await openTethered(into: registry, port: configuration.port, logger: logger)
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
    func connect(_ wanted: String, configuration: DaemonConfiguration) async throws(CameraConnectError)
        -> (name: String, camera: any Camera, source: String)
    {
        let configured = configuration.modules.first { $0.name.lowercased() == wanted.lowercased() || $0.address == wanted.uppercased() }
        if let demo {
            var options = demo
            options.seed &+= 1000
            let name = configured?.name ?? wanted
            do {
                let started = try await Demo.start(stateFile: SimulatedCameras.stateFile(for: name), options: options)
                simulated.add(started)
                return (name, started.camera, "simulated")
            } catch {
                throw CameraConnectError("the simulator did not start: \(error)")
            }
        }
        guard configuration.backend == .unleashed else {
            throw CameraConnectError("this daemon drives a camera through libgphoto2, not modules", isClientError: true)
        }
        let module = configured ?? DaemonConfiguration.Module(name: wanted.uppercased(), address: wanted.uppercased(), adapter: nil)
        guard configured != nil || Self.isAddress(wanted) else {
            throw CameraConnectError("'\(wanted)' is neither a configured module's name nor a Bluetooth address", isClientError: true)
        }
        do throws(ModuleOpenError) {
            return (module.name, try await Self.connect(module, configuration: configuration), module.address)
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
            do {
                let demo = try await Demo.start(stateFile: SimulatedCameras.stateFile(for: name), options: seeded)
                simulated.add(demo)
                await registry.add(demo.camera, name: name, source: source)
                logger.info("camera \(name): the built-in simulator")
            } catch {
                logger.error("camera \(name): the simulator did not start: \(error)")
            }
        }
    }

    private func openTethered(into registry: CameraRegistry, port: String?, logger: Logger) async {
        do {
            let camera = try await GPhoto2Camera.open(port: port)
            await registry.add(camera, name: camera.identity.name, source: port ?? "usb:")
            logger.info("camera \(camera.identity.name): libgphoto2 on \(port ?? "the first USB camera")")
        } catch {
            logger.error("no camera through libgphoto2 on \(port ?? "USB"): \(error)")
        }
    }

    /// Connects `module`, waiting between attempts as the reconnect policy says, until it is
    /// held or the policy gives up. Once held, its own connection reconnects it.
    private func keepTrying(_ module: DaemonConfiguration.Module, into registry: CameraRegistry,
                            configuration: DaemonConfiguration, logger: Logger) async {
        let policy = configuration.reconnect
        let started = ContinuousClock.now
        var delay = policy.initialDelay
        while !Task.isCancelled {
            do throws(ModuleOpenError) {
                let camera = try await Self.connect(module, configuration: configuration)
                await registry.add(camera, name: module.name, source: module.address)
                logger.info("module \(module.name) (\(module.address)) connected")
                return
            } catch {
                logger.warning("module \(module.name) (\(module.address)): \(error); trying again in \(delay.compactText)")
            }
            if let limit = policy.giveUpAfter, ContinuousClock.now - started + delay > limit {
                logger.error("module \(module.name): giving up after \(limit.compactText), as the configuration says")
                return
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, policy.maxDelay)
        }
    }

    /// Finds the module on its adapter, pairs with it if BlueZ has not (only pairings that need
    /// no answer: a passkey needs `unleashed pair` once), and connects its camera.
    static func connect(_ module: DaemonConfiguration.Module, configuration: DaemonConfiguration) async throws(ModuleOpenError) -> ModuleCamera {
        let adapterName = module.adapter ?? configuration.adapter
        let service = UnleashedV1.gattLayout.service
        let device: BlueZDevice
        do throws(BlueZError) {
            let client = try await BlueZClient.open(bus: .system)
            do throws(BlueZError) {
                let adapter = try await client.adapter(named: adapterName)
                let found = try await client.findModule(module.address, on: adapter, serviceUUID: service, timeout: .seconds(10))
                try await client.pair(found.path, serviceUUID: service, agent: unattendedAgent)
                device = await client.tree.device(at: found.path) ?? found
                await client.close()
            } catch {
                await client.close()
                throw error
            }
        } catch {
            throw .bluetooth(error)
        }
        let reconnect = ReconnectPolicy(initialDelay: configuration.reconnect.initialDelay,
                                        maximumDelay: configuration.reconnect.maxDelay)
        let connection = ModuleConnection(provider: BlueZLinkProvider(adapterName: adapterName, module: device.address),
                                          policy: reconnect)
        do {
            return try await ModuleCamera(connection: connection, connectTimeout: .seconds(45), name: module.name)
        } catch {
            throw .camera(error)
        }
    }

    /// `AA:BB:CC:DD:EE:FF`, in either case.
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// A daemon has no one to ask: it accepts what needs no answer and says how to pair otherwise.
    private static let unattendedAgent = PairingAgent { request in
        switch request {
        case .authorize, .display: .accept
        default: .reject("the module asks a question the daemon cannot answer; pair it once with `unleashed pair --direct`")
        }
    }
}

/// The simulated cameras of a daemon started with --demo. Each keeps its state in the file the
/// CLI's demo mode uses for a camera of that name, restored when the daemon starts and saved when
/// it stops, so that the camera outlives a restart as it outlives a command.
final class SimulatedCameras: Sendable {
    private let started = Mutex<[Demo]>([])

    /// The one camera of a daemon without modules, `demo`, is the CLI's demo camera; a camera
    /// named after a module is the one `--demo --camera NAME` drives.
    static func stateFile(for name: String) -> URL {
        name == "demo" ? Demo.defaultStateFile() : GlobalOptions.demoStateFile(for: name)
    }

    func add(_ demo: Demo) {
        started.withLock { $0.append(demo) }
    }

    /// Saves every simulated camera to its state file.
    func save(logger: Logger) async {
        for demo in started.withLock({ $0 }) {
            do {
                try await demo.finish()
            } catch {
                logger.error("the simulated camera was not saved: \(error)")
            }
        }
    }
}

/// Why a configured module could not be held.
enum ModuleOpenError: Error, CustomStringConvertible {
    case bluetooth(BlueZError)
    case camera(CameraError)

    var description: String {
        switch self {
        case .bluetooth(let error): error.description
        case .camera(let error): error.description
        }
    }
}
