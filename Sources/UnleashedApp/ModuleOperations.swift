public import BlueZ
public import CameraKit
public import CommandCore
public import CameraProtocols
import CameraRemote
public import DaemonClient
public import DBus
public import Foundation
public import JSON
import UnleashedKit
import UnleashedProtocol

/// The module commands (`adapters`, `scan`, `pair`, `connect`, `disconnect`, `forget`) on the
/// system bus's BlueZ, or through the daemon while one holds the modules. Each operation opens
/// BlueZ, does its one thing and closes it again; finding, pairing and opening a module go
/// through ``CameraProvider`` so there is one BlueZ open sequence.
public struct ModuleOperations: Sendable {
    /// The adapter (`hci0`); nil is the first.
    public var adapter: String?
    /// The module `--module` names, if any.
    public var module: String?
    /// How long to scan for a module BlueZ does not know yet.
    public var scanTimeout: Duration
    /// The daemon to go through while one runs; nil to go to BlueZ directly.
    public var daemon: DaemonClient?
    /// The backend chosen: only the module's (and not its in-process demo) has Bluetooth to use.
    public var backend: BackendChoice
    public var demo: Bool
    /// The bus BlueZ is on (the system bus, `$DBUS_SYSTEM_BUS_ADDRESS`), for finding and pairing.
    /// Opening a module for `connect` goes through the system bus whatever this says.
    public var bus: DBusConnection.Bus
    /// Where the remembered module is kept.
    public var rememberedFile: URL

    public init(adapter: String?, module: String? = nil, scanTimeout: Duration = .seconds(10), daemon: DaemonClient? = nil,
                backend: BackendChoice = .unleashed, demo: Bool = false, bus: DBusConnection.Bus = .system,
                rememberedFile: URL = RememberedModule.file) {
        self.bus = bus
        self.rememberedFile = rememberedFile
        self.adapter = adapter
        self.module = module
        self.scanTimeout = scanTimeout
        self.daemon = daemon
        self.backend = backend
        self.demo = demo
    }

    /// The adapter a module BlueZ already knows is on: `adapter`, else (without `--module`) the
    /// remembered module's, else the first.
    public var chosenAdapter: String? {
        adapter ?? (module == nil ? RememberedModule.load(from: rememberedFile)?.adapter : nil)
    }

    /// The adapters BlueZ knows.
    public func adapters() async throws(ModuleCommandError) -> AdapterList {
        try requireBluetooth("adapters")
        let client = try await Self.bluez { () async throws(BlueZError) in try await BlueZClient.open(bus: bus) }
        let adapters = await client.tree.adapters
        await client.close()
        return AdapterList(adapters: adapters)
    }

    /// Scans for `duration`, handing each module, and each camera this tool drives through its
    /// own remote protocol, to `found` once, when it is first seen; returns how many were found.
    public func scan(for duration: Duration, found: (BlueZDevice) -> Void) async throws(ModuleCommandError) -> Int {
        try requireBluetooth("scan")
        let service = UnleashedV1.gattLayout.service
        let (client, scanned) = try await Self.bluez { () async throws(BlueZError) in try await openAdapter(adapter) }
        do throws(BlueZError) {
            // No service filter: cameras advertise their brand in manufacturer data.
            try await client.startDiscovery(on: scanned, serviceUUID: nil)
        } catch {
            await client.close()
            throw .bluetooth(error)
        }
        var listed: Set<String> = []
        let deadline = ContinuousClock.now + duration
        // One look after the deadline too: a sleep that overran it (a loaded machine) does not
        // cost the sightings made meanwhile.
        while true {
            for module in await client.sightings(on: scanned, moduleService: service) where listed.insert(module.address).inserted {
                found(module)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            try? await Task.sleep(for: min(left, .milliseconds(100)))
        }
        await client.stopDiscovery(on: scanned)
        await client.close()
        return listed.count
    }

    /// Finds `wanted` and pairs with it unless BlueZ already has a bond, `agent` answering the
    /// module's questions. The link pairing made is taken down again, so that the module is free
    /// for other clients.
    public func pair(_ wanted: String, answers: PairingAnswers) async throws(ModuleCommandError) -> PairedModule {
        let agent = answers.agent
        try requireBluetooth("pair")
        // A camera (recognised from its advertisement) pairs the way its brand needs.
        let camera = BluetoothCameraSpec(camera: wanted, adapter: adapter, scanTimeout: scanTimeout, pairing: .pair(agent))
        do throws(CameraOpenError) {
            if let (device, _) = try await CameraProvider.findCamera(camera, bus: bus) { return PairedModule(device: device) }
        } catch .camera(.device(let failure)) where failure.kind == .disconnected {
            // Nothing answered: look for a module, which says what to check for one.
        } catch .bluetooth(let error) {
            throw .bluetooth(error)
        } catch {
            throw .open(error)
        }
        return PairedModule(device: try await find(wanted, agent: agent, keepLink: false))
    }

    /// Connects `wanted` (else `--module`, the remembered module, or the only module in range),
    /// pairing first if needed, checks it by reading its status, and remembers it as the default
    /// module. While a daemon runs, the daemon is asked to connect it and keep it connected.
    public func connect(_ wanted: String?, answers: PairingAnswers) async throws(ModuleCommandError) -> ConnectedModule {
        let agent = answers.agent
        if let daemon, let held = try await Self.connect(wanted ?? module, through: daemon) { return held }
        try requireBluetooth("connect")
        let address: String
        do throws(ModuleSearchError) {
            if let known = wanted ?? module ?? RememberedModule.load(from: rememberedFile)?.address {
                address = known
            } else {
                address = try await CameraProvider.onlyModuleInRange(adapter: adapter, bus: bus)
            }
        } catch {
            switch error {
            case .bluetooth(let error): throw .bluetooth(error)
            case .several(let modules):
                throw .choice(.invalid(code: "severalModules", "several modules in range: name one (" + modules.joined(separator: ", ") + ")"))
            }
        }
        if let camera = try await connectCamera(address, agent: agent) { return camera }
        let device = try await find(address, agent: agent, keepLink: true)
        let opened: OpenedCamera
        do throws(CameraOpenError) {
            opened = try await CameraProvider().open(CameraSpec(.module(ModuleSpec(module: device.address, adapter: adapter,
                                                                                    scanTimeout: scanTimeout))))
        } catch {
            throw .open(error)
        }
        let status: CameraStatus
        do throws(CameraError) {
            status = try await opened.camera.status()
        } catch {
            try? await opened.close()
            throw .camera(error)
        }
        let identity = opened.camera.identity
        var connected = ConnectedModule(address: device.address, name: identity.name, identity: identity, status: status)
        do {
            try RememberedModule(address: device.address, name: device.name, adapter: adapter).save(to: rememberedFile)
        } catch {
            connected.rememberFailure = "could not remember the module in \(rememberedFile.path): \(error.localizedDescription)"
        }
        do throws(CameraOpenError) {
            try await opened.close()
        } catch {
            throw .open(error)
        }
        return connected
    }

    /// Connects `wanted` when it is a camera this tool drives through its own remote protocol
    /// (pairing it as its brand needs), checks it by reading its status and lets it go; nil when
    /// it is not such a camera. A camera is not remembered as the default module: commands reach
    /// it with `--ble-camera`.
    private func connectCamera(_ wanted: String, agent: PairingAgent) async throws(ModuleCommandError) -> ConnectedModule? {
        let spec = BluetoothCameraSpec(camera: wanted, adapter: adapter, scanTimeout: scanTimeout, pairing: .pair(agent))
        let camera: BLECamera
        do throws(CameraOpenError) {
            guard let (device, brand) = try await CameraProvider.findCamera(spec, bus: bus) else { return nil }
            var known = spec
            (known.camera, known.brand) = (device.address, brand)
            camera = try await CameraProvider.openBluetoothCamera(known, name: device.name, bus: bus)
        } catch .camera(.device(let failure)) where failure.kind == .disconnected {
            // Nothing answered: look for a module, which says what to check for one.
            return nil
        } catch .bluetooth(let error) {
            throw .bluetooth(error)
        } catch {
            throw .open(error)
        }
        let status: CameraStatus
        do throws(CameraError) {
            status = try await camera.status()
        } catch {
            await camera.close()
            throw .camera(error)
        }
        await camera.close()
        return ConnectedModule(address: wanted, name: camera.identity.name, identity: camera.identity, status: status,
                               brand: camera.driver.brand)
    }

    /// Asks the daemon to connect `wanted` and keep it connected; nil when no daemon answers, so
    /// the module is connected directly. The daemon needs the module named.
    static func connect(_ wanted: String?, through daemon: DaemonClient) async throws(ModuleCommandError) -> ConnectedModule? {
        guard let wanted else {
            throw .choice(.usage("name the module: `unleashed connect ADDRESS` (or a name from the daemon's configuration); "
                + "the daemon then keeps it connected"))
        }
        do throws(DaemonClientError) {
            guard let held = try await DaemonModules(client: daemon).connect(wanted) else { return nil }
            return ConnectedModule(address: held.address, name: held.name, identity: held.identity, status: held.status, daemon: true)
        } catch {
            throw .daemon(error)
        }
    }

    /// Has the daemon let go of `wanted` (else `--module`) while one runs and holds it, else
    /// makes BlueZ drop its link to `wanted` (else the remembered module).
    public func disconnect(_ wanted: String?) async throws(ModuleCommandError) -> DisconnectedModule {
        if let daemon, let named = wanted ?? module, let released = try await Self.release(named, through: daemon) {
            return DisconnectedModule(address: released.address, name: released.name, wasConnected: true, daemon: true)
        }
        try requireBluetooth("disconnect")
        let target = try chosen(wanted ?? module)
        return try await withKnownModule(target) { client, _, device throws(BlueZError) in
            guard let device else { throw BlueZError.moduleNotFound(target) }
            guard device.connected else { return DisconnectedModule(address: device.address, name: device.name, wasConnected: false) }
            guard await client.disconnect(device.path) else {
                throw BlueZError.connectionFailed("BlueZ did not take the link to \(device.address) down within 5 s")
            }
            return DisconnectedModule(address: device.address, name: device.name, wasConnected: true)
        }
    }

    /// Unpairs `wanted` (else `--module`, else the remembered module) and removes it from BlueZ
    /// (a daemon holding it lets go of it first; a locked daemon refuses, and so does this); it
    /// stops being the remembered module.
    public func forget(_ named: String?) async throws(ModuleCommandError) -> ForgottenModule {
        try requireBluetooth("forget")
        let wanted = try chosen(named ?? module)
        if let daemon { _ = try await Self.release(wanted, through: daemon) }
        let device = try await withKnownModule(wanted) { client, adapter, device throws(BlueZError) in
            if let device { try await client.remove(device.path, from: adapter) }
            return device
        }
        if let remembered = RememberedModule.load(from: rememberedFile),
           remembered.address.caseInsensitiveCompare(device?.address ?? wanted) == .orderedSame {
            RememberedModule.forget(at: rememberedFile)
        }
        return ForgottenModule(wanted: wanted, device: device)
    }

    /// The module a command acts on: the one named, else the remembered one.
    func chosen(_ named: String?) throws(ModuleCommandError) -> String {
        guard let chosen = named ?? RememberedModule.load(from: rememberedFile)?.address else { throw .choice(.noModule) }
        return chosen
    }

    /// Asks the daemon to let go of `wanted`; nil when no daemon answers or it does not hold it.
    static func release(_ wanted: String, through daemon: DaemonClient) async throws(ModuleCommandError) -> (name: String, address: String)? {
        do throws(DaemonClientError) {
            return try await DaemonModules(client: daemon).release(wanted)
        } catch {
            throw .daemon(error)
        }
    }

    /// Refuses a Bluetooth command with a backend that has no module to reach: libgphoto2, or
    /// the in-process demo module.
    private func requireBluetooth(_ command: String) throws(ModuleCommandError) {
        if backend == .gphoto2 {
            throw .choice(.usage("`unleashed \(command)` is for Unleashed modules; with --backend gphoto2, `unleashed cameras` "
                + "lists the cameras libgphoto2 finds"))
        }
        if demo {
            throw .choice(.usage("`unleashed \(command)` needs BlueZ; the --demo module is in-process and needs no Bluetooth. "
                + "To try it against a simulated bluetoothd, see docs/simulator-bluez.md"))
        }
    }

    /// Finds and pairs through ``CameraProvider/findModule(_:keepLink:)``.
    private func find(_ wanted: String, agent: PairingAgent, keepLink: Bool) async throws(ModuleCommandError) -> BlueZDevice {
        let spec = ModuleSpec(module: wanted, adapter: adapter, scanTimeout: scanTimeout, pairing: .pair(agent))
        return try await Self.bluez { () async throws(BlueZError) in try await CameraProvider.findModule(spec, keepLink: keepLink, bus: bus) }
    }

    private func openAdapter(_ name: String?) async throws(BlueZError) -> (BlueZClient, BlueZAdapter) {
        let client = try await BlueZClient.open(bus: bus)
        do throws(BlueZError) {
            return (client, try await client.adapter(named: name))
        } catch {
            await client.close()
            throw error
        }
    }

    /// Runs `body` with a client, the adapter and the device BlueZ knows as `wanted` (nil when it
    /// knows none), then closes the client.
    private func withKnownModule<Result>(
        _ wanted: String, _ body: (BlueZClient, BlueZAdapter, BlueZDevice?) async throws(BlueZError) -> Result
    ) async throws(ModuleCommandError) -> Result {
        let (client, adapter) = try await Self.bluez { () async throws(BlueZError) in try await openAdapter(chosenAdapter) }
        do throws(BlueZError) {
            let device = await client.tree.devices(on: adapter.path).first { $0.matches(wanted) }
            let result = try await body(client, adapter, device)
            await client.close()
            return result
        } catch {
            await client.close()
            throw .bluetooth(error)
        }
    }

    private static func bluez<Result>(_ body: () async throws(BlueZError) -> Result) async throws(ModuleCommandError) -> Result {
        do throws(BlueZError) {
            return try await body()
        } catch {
            throw .bluetooth(error)
        }
    }
}

/// Why a module command failed, by where it failed.
public enum ModuleCommandError: Error, Sendable {
    case bluetooth(BlueZError)
    case daemon(DaemonClientError)
    case open(CameraOpenError)
    case camera(CameraError)
    /// No module named or remembered, several in range and none named, or a backend without Bluetooth.
    case choice(CameraChoiceError)

    /// What the command reports, and its exit status.
    public var failure: CameraFailure {
        switch self {
        case .bluetooth(let error): CameraFailure(error)
        case .daemon(let error): CameraFailure(error)
        case .open(let error): CameraFailure(error)
        case .camera(let error): CameraFailure(error)
        case .choice(let error): CameraFailure(error)
        }
    }
}

/// A module `connect` reached, directly or through the daemon, as the command reports it.
public struct ConnectedModule: ModuleReport {
    public var address: String
    public var name: String
    public var identity: CameraIdentity?
    public var status: CameraStatus?
    /// The daemon holds it and keeps it connected; otherwise this process checked it and let go.
    public var daemon = false
    /// Why the module could not be remembered as the default, when it could not.
    public var rememberFailure: String?
    /// Set for a camera driven through its own Bluetooth remote protocol, which is checked but
    /// not remembered.
    public var brand: CameraBrand?

    /// The `--json` document `connect` prints.
    public var json: JSONValue {
        if let brand {
            return .object([
                "address": .string(address), "name": .string(name), "brand": .string(brand.rawValue),
                "camera": identity?.cameraModel.map(JSONValue.string) ?? .null,
                "offers": .array(RemoteOffer.names(identity?.capabilities ?? []).map(JSONValue.string)),
                "remembered": false,
            ])
        }
        var members: [String: JSONValue] = [
            "address": .string(address), "name": .string(name),
            "firmware": identity?.firmwareVersion.map(JSONValue.string) ?? .null,
            "protocolVersion": identity?.protocolVersion.map { .integer(Int64($0)) } ?? .null,
            "camera": identity?.cameraModel.map(JSONValue.string) ?? .null,
            "cameraPower": status.map { .string($0.cameraPower.description) } ?? .null,
            "cameraBattery": status?.cameraBattery.map { .integer(Int64($0)) } ?? .null,
            "moduleBattery": status?.moduleBattery.map { .integer(Int64($0)) } ?? .null,
        ]
        members[daemon ? "daemon" : "remembered"] = true
        return .object(members)
    }

    /// The lines `connect` prints.
    public var text: String {
        if let brand {
            return "Connected to \(name) (\(address)), a \(brand.displayName) camera over its own Bluetooth remote; it offers: "
                + RemoteOffer.names(identity?.capabilities ?? []).joined(separator: ", ")
                + ".\nDrive it with: unleashed --ble-camera \(address) COMMAND"
        }
        func percent(_ value: Int?) -> String { value.map { "\($0)%" } ?? "unknown" }
        return """
            Connected to \(name) (\(address)), firmware \(identity?.firmwareVersion ?? "unknown"), \
            protocol \(identity?.protocolVersion.map(String.init) ?? "unknown"), module battery \(percent(status?.moduleBattery)).
            Camera: \(identity?.cameraModel ?? "none attached"), \(status.map { "\($0.cameraPower)" } ?? "unknown"), \
            battery \(percent(status?.cameraBattery)).
            \(daemon ? "The daemon keeps it connected; commands reach it with --module \(name)." : "Remembered as the default module.")
            """
    }
}
