import ArgumentParser
import BlueZ
import CameraKit
import Foundation
import DaemonClient
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

struct AdaptersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the Bluetooth adapters BlueZ knows, and whether they are powered."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        try options.requireBluetooth("adapters")
        let client = try await options.openBlueZ()
        let adapters = await client.tree.adapters
        await client.close()
        options.emit(.array(adapters.map { adapter in
            ["name": .string(adapter.name), "address": .string(adapter.address), "alias": .string(adapter.alias),
             "powered": .bool(adapter.powered), "discovering": .bool(adapter.discovering)]
        })) {
            guard !adapters.isEmpty else { return "No Bluetooth adapter found." }
            return adapters.map { "\($0.name)  \($0.address)  \($0.powered ? "on " : "off")  \($0.alias)" }.joined(separator: "\n")
        }
    }
}

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Look for Unleashed modules in range and list them as they are found.",
        discussion: """
            Scans for Bluetooth LE devices that advertise the Unleashed service. Each module is \
            listed once, with its address, name, signal strength, camera connector and state. \
            With --json, one JSON object per line as each module is found.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Option(help: ArgumentHelp("How long to scan.", valueName: "duration"))
    var timeout = "10s"

    func run() async throws {
        try options.requireBluetooth("scan")
        let duration = try options.duration(timeout, for: "--timeout")
        let client = try await options.openBlueZ()
        let adapter: BlueZAdapter
        do throws(BlueZError) {
            adapter = try await client.adapter(named: options.adapter)
            try await client.startDiscovery(on: adapter, serviceUUID: UnleashedV1.gattLayout.service)
        } catch {
            await client.close()
            throw options.fail(error)
        }
        var listed: Set<String> = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            for module in await client.modules(on: adapter, serviceUUID: UnleashedV1.gattLayout.service)
            where !listed.contains(module.address) {
                listed.insert(module.address)
                options.emit(Self.json(module)) { Self.line(module) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        await client.stopDiscovery(on: adapter)
        await client.close()
        if listed.isEmpty && !options.json {
            Output.line("No modules found in \(duration.shortDescription).")
        }
    }

    static func json(_ device: BlueZDevice) -> JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(device.address), "name": device.name.map(JSONValue.string) ?? .null,
            "rssi": device.rssi.map { .integer(Int64($0)) } ?? .null, "paired": .bool(device.paired),
        ]
        if let advertisement = device.advertisement {
            members["model"] = .string(advertisement.modelName)
            members["cameraAttached"] = .bool(advertisement.cameraAttached)
            members["cameraOn"] = .bool(advertisement.cameraOn)
            members["pairingWindowOpen"] = .bool(advertisement.pairingWindowOpen)
            members["inUse"] = .bool(advertisement.clientConnected)
            members["batteryLow"] = .bool(advertisement.batteryLow)
        }
        return .object(members)
    }

    static func line(_ device: BlueZDevice) -> String {
        var parts = [device.address, device.name ?? "(no name)", device.rssi.map { "\($0) dBm" } ?? "RSSI unknown"]
        if let advertisement = device.advertisement {
            parts.append(advertisement.modelName)
            parts.append(advertisement.cameraAttached ? (advertisement.cameraOn ? "camera on" : "camera off") : "no camera")
            if advertisement.pairingWindowOpen { parts.append("pairing open") }
            if advertisement.clientConnected { parts.append("in use") }
            if advertisement.batteryLow { parts.append("battery low") }
        }
        if device.paired { parts.append("paired") }
        return parts.joined(separator: "  ")
    }
}

/// Options for answering the module's pairing questions.
struct PairingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The passkey the module shows, if it asks for one.", valueName: "nnnnnn"))
    var passkey: UInt32?

    @Flag(help: "Confirm the passkey without asking (for scripts; check it first).")
    var yes = false
}

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a module (once; BlueZ keeps the bond).",
        discussion: """
            The module must have its pairing window open. If it asks to confirm or enter a \
            passkey, the question is asked on the terminal, or answered by --yes or --passkey.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var pairing: PairingOptions

    @Argument(help: ArgumentHelp("The module's address or name, as `unleashed scan` lists it.", valueName: "address"))
    var address: String

    func run() async throws {
        try options.requireBluetooth("pair")
        let device = try await pairDevice(address, options: options, pairing: pairing)
        options.emit(["address": .string(device.address), "name": device.name.map(JSONValue.string) ?? .null, "paired": true]) {
            "Paired with \(device.name ?? device.address) (\(device.address))."
        }
    }
}

/// Finds a module and pairs with it unless BlueZ already has a bond; returns the device. Unless
/// `keepLink` (a connection follows at once), the link pairing made is taken down again, so the
/// module is free for other clients.
private func pairDevice(_ wanted: String, options: GlobalOptions, pairing: PairingOptions,
                        keepLink: Bool = false) async throws(ExitCode) -> BlueZDevice {
    let spec = ModuleSpec(module: wanted, adapter: options.adapter, scanTimeout: try options.moduleScanTimeout(),
                          pairing: .pair(options.pairingAgent(passkey: pairing.passkey, confirm: pairing.yes)))
    do throws(BlueZError) {
        return try await CameraProvider.findModule(spec, keepLink: keepLink)
    } catch {
        throw options.fail(error)
    }
}

struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Connect to a module, check it, show it and its camera, and remember it as the default.",
        discussion: """
            Without an address: the remembered module, else the only module in range. Pairs \
            first if needed. Later commands use the remembered module unless --module names \
            another; each connects, acts and disconnects. While a daemon runs, `connect ADDRESS` \
            (or a name from its configuration) asks the daemon to connect the module and keep it \
            connected, and `disconnect` asks it to let go.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var pairing: PairingOptions

    @Argument(help: ArgumentHelp("The module's address or name.", valueName: "address"))
    var address: String?

    func run() async throws {
        if let daemon = options.daemonClient(), try await connectThrough(daemon) { return }
        try options.requireBluetooth("connect")
        let known = address ?? options.module ?? RememberedModule.load()?.address
        let wanted: String
        if let known { wanted = known } else { wanted = try await onlyModuleInRange() }
        let device = try await pairDevice(wanted, options: options, pairing: pairing, keepLink: true)
        var connected = options
        connected.module = device.address
        connected.adapter = options.adapter
        try await connected.withCamera { camera throws(CameraError) in
            let status = try await camera.status()
            let identity = camera.identity
            do {
                try RememberedModule(address: device.address, name: device.name, adapter: options.adapter).save()
            } catch {
                Output.noteRaw("warning: could not remember the module in \(RememberedModule.file.path): \(error.localizedDescription)\n")
            }
            options.emit([
                "address": .string(device.address), "name": .string(identity.name),
                "firmware": identity.firmwareVersion.map(JSONValue.string) ?? .null,
                "protocolVersion": identity.protocolVersion.map { .integer(Int64($0)) } ?? .null,
                "camera": identity.cameraModel.map(JSONValue.string) ?? .null,
                "cameraPower": .string(status.cameraPower.description),
                "cameraBattery": status.cameraBattery.map { .integer(Int64($0)) } ?? .null,
                "moduleBattery": status.moduleBattery.map { .integer(Int64($0)) } ?? .null,
                "remembered": true,
            ]) {
                """
                Connected to \(identity.name) (\(device.address)), firmware \(identity.firmwareVersion ?? "unknown"), \
                protocol \(identity.protocolVersion.map(String.init) ?? "unknown"), module battery \(Output.percent(status.moduleBattery)).
                Camera: \(identity.cameraModel ?? "none attached"), \(status.cameraPower), battery \(Output.percent(status.cameraBattery)).
                Remembered as the default module.
                """
            }
        }
    }

    /// The one module a scan finds; several or none is an error that lists what was seen.
    private func onlyModuleInRange() async throws(ExitCode) -> String {
        do throws(ModuleSearchError) {
            return try await CameraProvider.onlyModuleInRange(adapter: options.adapter)
        } catch {
            switch error {
            case .bluetooth(let error): throw options.fail(error)
            case .several(let modules):
                throw options.fail(code: "severalModules", "several modules in range: name one (" + modules.joined(separator: ", ") + ")",
                                   status: .usage)
            }
        }
    }
}

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Make BlueZ drop the link to the module (for example one left by a crashed program)."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("The module's address (default: the remembered one).", valueName: "address"))
    var address: String?

    func run() async throws {
        if let daemon = options.daemonClient(), let wanted = address ?? options.module,
           let released = try await options.release(wanted, through: daemon) {
            options.emit(["address": .string(released.address), "name": .string(released.name), "wasConnected": true, "daemon": true]) {
                "The daemon let go of \(released.name); it is disconnected."
            }
            return
        }
        try options.requireBluetooth("disconnect")
        let wanted = try address ?? options.chosenModule()
        let (device, wasConnected) = try await options.withKnownModule(wanted) { client, _, device throws(BlueZError) in
            guard let device else { throw BlueZError.moduleNotFound(wanted) }
            guard device.connected else { return (device, false) }
            guard await client.disconnect(device.path) else {
                throw BlueZError.connectionFailed("BlueZ did not take the link to \(device.address) down within 5 s")
            }
            return (device, true)
        }
        options.emit(["address": .string(device.address), "wasConnected": .bool(wasConnected)]) {
            wasConnected ? "Disconnected from \(device.name ?? device.address)." : "\(device.name ?? device.address) was not connected."
        }
    }
}

struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Unpair a module and remove it from BlueZ; it is no longer the default."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("The module's address (default: the remembered one).", valueName: "address"))
    var address: String?

    func run() async throws {
        try options.requireBluetooth("forget")
        let wanted = try address ?? options.chosenModule()
        // A daemon holding the module lets go of it first (a locked daemon refuses, and so does this).
        if let daemon = options.daemonClient() {
            _ = try await options.release(wanted, through: daemon)
        }
        let device = try await options.withKnownModule(wanted) { client, adapter, device throws(BlueZError) in
            if let device { try await client.remove(device.path, from: adapter) }
            return device
        }
        if let remembered = RememberedModule.load(), remembered.address.caseInsensitiveCompare(device?.address ?? wanted) == .orderedSame {
            RememberedModule.forget()
        }
        options.emit(["address": .string(device?.address ?? wanted), "removed": .bool(device != nil)]) {
            guard let device else { return "BlueZ did not know \(wanted); nothing to forget." }
            return "Forgot \(device.name ?? wanted) (\(device.address))."
        }
    }
}

extension ConnectCommand {
    /// Asks the daemon to connect the module and prints what it holds; false when no daemon
    /// answers, so the module is connected directly.
    private func connectThrough(_ daemon: DaemonClient) async throws -> Bool {
        guard let wanted = address ?? options.module else {
            throw options.usage("name the module: `unleashed connect ADDRESS` (or a name from the daemon's configuration); "
                + "the daemon then keeps it connected")
        }
        let held: DaemonModules.Held
        do throws(DaemonClientError) {
            guard let answered = try await DaemonModules(client: daemon).connect(wanted) else { return false }
            held = answered
        } catch {
            throw options.fail(error)
        }
        let (identity, status) = (held.identity, held.status)
        options.emit([
            "address": .string(held.address), "name": .string(held.name),
            "firmware": identity?.firmwareVersion.map(JSONValue.string) ?? .null,
            "protocolVersion": identity?.protocolVersion.map { .integer(Int64($0)) } ?? .null,
            "camera": identity?.cameraModel.map(JSONValue.string) ?? .null,
            "cameraPower": status.map { .string($0.cameraPower.description) } ?? .null,
            "cameraBattery": status?.cameraBattery.map { .integer(Int64($0)) } ?? .null,
            "moduleBattery": status?.moduleBattery.map { .integer(Int64($0)) } ?? .null,
            "daemon": true,
        ]) {
            """
            Connected to \(held.name) (\(held.address)), firmware \(identity?.firmwareVersion ?? "unknown"), \
            protocol \(identity?.protocolVersion.map(String.init) ?? "unknown"), module battery \(Output.percent(status?.moduleBattery)).
            Camera: \(identity?.cameraModel ?? "none attached"), \(status.map { "\($0.cameraPower)" } ?? "unknown"), \
            battery \(Output.percent(status?.cameraBattery)).
            The daemon keeps it connected; commands reach it with --module \(held.name).
            """
        }
        return true
    }
}

extension GlobalOptions {
    /// Asks the daemon to let go of `wanted`; nil when no daemon answers or it does not hold it.
    func release(_ wanted: String, through daemon: DaemonClient) async throws(ExitCode) -> (name: String, address: String)? {
        do throws(DaemonClientError) {
            return try await DaemonModules(client: daemon).release(wanted)
        } catch {
            throw fail(error)
        }
    }
}
