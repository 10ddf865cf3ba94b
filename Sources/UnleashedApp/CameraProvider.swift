public import CameraKit
public import CameraProtocols
public import CameraRemote
public import BlueZ
public import DaemonClient
public import DBus
import Foundation
public import GPhoto2
public import UnleashedKit
import SimulatedCameras
import UnleashedProtocol
public import UnleashedSimulator

/// Opens a camera from its ``CameraSpec``, or the cameras of a rig, whatever drives them: the CLI
/// in direct mode and the daemon's cameras both open through it, so that a module is reached over
/// BlueZ one way only.
public struct CameraProvider: Sendable {
    public init() {}

    /// Opens `spec` and returns the camera once it answers.
    public func open(_ spec: CameraSpec) async throws(CameraOpenError) -> OpenedCamera {
        switch spec.backend {
        case .module(let module):
            return .module(try await Self.openModule(module, name: spec.name))
        case .demo(let options, let stateFile):
            do {
                return .demo(try await Demo.start(stateFile: stateFile, options: options))
            } catch {
                throw .demo(error)
            }
        case .tethered(let port, let model, let downloads):
            do {
                return .tethered(try await GPhoto2Camera.open(port: port, model: model, downloads: downloads))
            } catch {
                throw .camera(error)
            }
        case .bluetoothCamera(let camera):
            return .bluetoothCamera(try await Self.openBluetoothCamera(camera, name: spec.name))
        case .demoCamera(let brand):
            return .bluetoothCamera(try await Self.openDemoCamera(brand, name: spec.name))
        }
    }

    /// Opens a camera over BlueZ through its brand's remote protocol: found (by scanning when
    /// BlueZ does not know it), its brand read from its advertisement unless named, paired if
    /// the brand needs a bond and `spec.pairing` allows, then connected with its reconnect policy.
    public static func openBluetoothCamera(_ spec: BluetoothCameraSpec, name: String? = nil,
                                           bus: DBusConnection.Bus = .system) async throws(CameraOpenError) -> BLECamera {
        guard let (device, brand) = try await findCamera(spec, bus: bus) else {
            throw .camera(.invalidArgument("\(spec.camera) does not advertise as a camera this tool drives; name its brand with "
                + "--brand (\(CameraBrand.allCases.map(\.rawValue).joined(separator: ", "))), or use --module for an Unleashed module"))
        }
        guard let driver = RemoteDrivers.driver(for: brand, recognized: device.camera) else {
            throw .camera(.invalidArgument(RemoteDrivers.missingDriver(for: brand)))
        }
        let provider = BlueZLinkProvider(bus: bus, adapterName: spec.adapter, peer: .camera(device.address, remote: driver.remoteProtocol))
        do throws(CameraError) {
            return try await BLECamera.open(name: name ?? device.name ?? device.address, provider: provider, driver: driver,
                                            policy: spec.reconnect, timing: RemoteTiming(scanTimeout: spec.scanTimeout, stepTimeout: spec.stepTimeout),
                                            readyTimeout: .seconds(45))
        } catch {
            throw .camera(error)
        }
    }

    /// Finds the camera and its brand, and pairs it when its brand needs a bond; nil when the
    /// device is there but is not a camera this tool drives (and no brand was named). Problems
    /// with the camera are worded for a camera; those of BlueZ itself (no adapter) are BlueZ's.
    static func findCamera(_ spec: BluetoothCameraSpec, bus: DBusConnection.Bus) async throws(CameraOpenError) -> (BlueZDevice, CameraBrand)? {
        let client: BlueZClient
        do throws(BlueZError) {
            client = try await BlueZClient.open(bus: bus)
        } catch {
            throw .bluetooth(error)
        }
        defer { Task { await client.close() } }
        let found: BlueZDevice
        let adapter: BlueZAdapter
        do throws(BlueZError) {
            adapter = try await client.adapter(named: spec.adapter)
            found = try await client.findDevice(spec.camera, on: adapter, serviceUUID: nil, timeout: spec.scanTimeout)
        } catch .moduleNotFound {
            throw .camera(.device(DeviceFailure(.disconnected, "camera \(spec.camera) not found: is it on, awake and in range? "
                + "(`unleashed scan` lists the cameras in range)")))
        } catch {
            throw .bluetooth(error)
        }
        // A brand named against the camera's own advertisement would drive it through another
        // brand's protocol: it never pairs nor answers as that brand would, and the words that
        // follow ("not paired") would send the person in circles.
        if let named = spec.brand, let advertised = found.camera?.brand, named != advertised {
            throw .camera(.invalidArgument("camera \(spec.camera) advertises itself as a \(advertised.displayName), not a \(named.displayName): "
                + "leave out --brand (the advertisement names the brand) or name the right one"))
        }
        guard let brand = spec.brand ?? found.camera?.brand, let known = CameraAdvertisement.remoteProtocol(of: brand) else { return nil }
        guard known.requiresBond && !found.paired else { return (found, brand) }
        guard case .pair(let agent) = spec.pairing else {
            throw .camera(.device(DeviceFailure(.permissionDenied, "the \(brand.displayName) camera \(spec.camera) is not paired: "
                + "run `unleashed pair \(spec.camera)` with the camera in pairing mode")))
        }
        do throws(BlueZError) {
            try await client.pair(found.path, serviceUUID: known.services.first?.uuid ?? "", agent: agent)
        } catch .pairingRefused(let reason) {
            let howTo = found.camera?.howToPair ?? "put the camera in pairing mode"
            throw .camera(.device(DeviceFailure(.pairingRefused, "the camera refused pairing (\(reason)); \(howTo), then try again")))
        } catch {
            throw .bluetooth(error)
        }
        let device = await client.tree.device(at: found.path) ?? found
        await client.disconnect(found.path)
        return (device, brand)
    }

    /// A simulated camera of `brand` in this process, driven through the brand's protocol.
    public static func openDemoCamera(_ brand: CameraBrand, name: String? = nil) async throws(CameraOpenError) -> BLECamera {
        let address = SimulatedCameraCatalog.address(index: 0)
        let body = SimulatedCameraCatalog.body(of: brand, address: address)
        guard let driver = RemoteDrivers.driver(for: brand, recognized: CameraAdvertisement.recognize(await body.advertisement())) else {
            throw .camera(.invalidArgument(RemoteDrivers.missingDriver(for: brand)))
        }
        do throws(CameraError) {
            return try await BLECamera.open(name: name ?? "\(brand.displayName) \(body.model)", provider: InMemoryCameraProvider(body: body),
                                            driver: driver, policy: ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2)))
        } catch {
            throw .camera(error)
        }
    }

    /// Opens every camera of `rig` at once, in its order. All or none: when one fails, those
    /// opened are closed again and the first failure (in the rig's order) is thrown with the
    /// camera's position.
    public func open(rig: RigSpec) async throws(RigOpenError) -> [OpenedCamera] {
        let opened = await withTaskGroup(of: (Int, Result<OpenedCamera, CameraOpenError>).self) { group in
            for (index, spec) in rig.enumerated() {
                group.addTask {
                    do throws(CameraOpenError) {
                        return (index, .success(try await open(spec)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<OpenedCamera, CameraOpenError>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }
        }
        var cameras: [OpenedCamera] = []
        var failure: RigOpenError?
        for (index, result) in opened {
            switch result {
            case .success(let camera): cameras.append(camera)
            case .failure(let error): failure = failure ?? RigOpenError(index: index, error: error)
            }
        }
        if let failure {
            for camera in cameras { try? await camera.close() }
            throw failure
        }
        return cameras
    }

    /// The one way a module is opened over BlueZ: found and paired (``findModule(_:keepLink:)``),
    /// then connected with its reconnect policy; the camera is returned once the handshake is
    /// done. Problems the user must fix (no bluetoothd, no adapter, not paired) come out first,
    /// as ``CameraOpenError/bluetooth(_:)``.
    public static func openModule(_ spec: ModuleSpec, name: String? = nil) async throws(CameraOpenError) -> ModuleCamera {
        let device: BlueZDevice
        do throws(BlueZError) {
            device = try await findModule(spec)
        } catch {
            throw .bluetooth(error)
        }
        let connection = ModuleConnection(provider: BlueZLinkProvider(adapterName: spec.adapter, module: device.address,
                                                                      acquireSockets: spec.bluezSockets),
                                          policy: spec.reconnect)
        do {
            return try await ModuleCamera(connection: connection, connectTimeout: .seconds(45),
                                          name: name ?? device.name ?? device.address)
        } catch {
            throw .camera(error)
        }
    }
}

extension CameraProvider {
    /// Finds the module on its adapter (scanning for it when BlueZ does not know it) and pairs
    /// with it as `spec.pairing` says; returns the device as BlueZ knows it then. Unless
    /// `keepLink` (a connection follows at once), a link that pairing made is taken down again,
    /// so that the module is free for other clients.
    public static func findModule(_ spec: ModuleSpec, keepLink: Bool = true, bus: DBusConnection.Bus = .system) async throws(BlueZError) -> BlueZDevice {
        let service = UnleashedV1.gattLayout.service
        let client = try await BlueZClient.open(bus: bus)
        do throws(BlueZError) {
            let adapter = try await client.adapter(named: spec.adapter)
            let found = try await client.findModule(spec.module, on: adapter, serviceUUID: service, timeout: spec.scanTimeout)
            let device: BlueZDevice
            switch spec.pairing {
            case .required:
                guard found.paired else { throw BlueZError.notPaired(spec.module) }
                device = found
            case .pair(let agent):
                try await client.pair(found.path, serviceUUID: service, agent: agent)
                device = await client.tree.device(at: found.path) ?? found
                if !keepLink { await client.disconnect(found.path) }
            }
            await client.close()
            return device
        } catch {
            await client.close()
            throw error
        }
    }
}

extension CameraProvider {
    /// The one module a short scan finds on `adapter`, for `connect` without an address.
    public static func onlyModuleInRange(adapter name: String?, bus: DBusConnection.Bus = .system) async throws(ModuleSearchError) -> String {
        let service = UnleashedV1.gattLayout.service
        let modules: [BlueZDevice]
        do throws(BlueZError) {
            let client = try await BlueZClient.open(bus: bus)
            defer { Task { await client.close() } }
            let adapter = try await client.adapter(named: name)
            try await client.startDiscovery(on: adapter, serviceUUID: service)
            try? await client.wait(for: "scanning", timeout: .seconds(3)) { _ in .pending }
            modules = await client.modules(on: adapter, serviceUUID: service)
            await client.stopDiscovery(on: adapter)
        } catch {
            throw .bluetooth(error)
        }
        switch modules.count {
        case 1: return modules[0].address
        case 0: throw .bluetooth(.moduleNotFound("in range"))
        default: throw .several(modules.map { "\($0.address) \($0.name ?? "")" })
        }
    }
}

/// Why no one module could be picked from those in range.
public enum ModuleSearchError: Error, Sendable {
    case bluetooth(BlueZError)
    /// Several modules answered: each as `ADDRESS NAME`.
    case several([String])
}

/// A rig's camera that could not be opened: which one, and why.
public struct RigOpenError: Error, Sendable, CustomStringConvertible {
    /// The camera's position in the rig.
    public var index: Int
    public var error: CameraOpenError

    public var description: String { error.description }
}

/// A camera opened by ``CameraProvider`` (or reached through a daemon), kept with what closing it means.
public enum OpenedCamera: Sendable {
    case demo(Demo)
    case module(ModuleCamera)
    case tethered(GPhoto2Camera)
    /// A camera the daemon holds; closing it leaves it connected there.
    case remote(RemoteCamera)
    /// A camera driven through its own Bluetooth remote protocol (or a simulated one).
    case bluetoothCamera(BLECamera)

    public var camera: any Camera {
        switch self {
        case .remote(let camera): camera
        case .demo(let demo): demo.camera
        case .module(let camera): camera
        case .tethered(let camera): camera
        case .bluetoothCamera(let camera): camera
        }
    }

    /// Ends the session: the simulator saves its camera's state; a module is disconnected.
    public func close() async throws(CameraOpenError) {
        switch self {
        case .demo(let demo):
            do {
                try await demo.finish()
            } catch {
                throw .demo(error)
            }
        case .module(let camera):
            await camera.close()
        case .tethered(let camera):
            await camera.close()
        case .remote(let camera):
            await camera.close()
        case .bluetoothCamera(let camera):
            await camera.close()
        }
    }
}
