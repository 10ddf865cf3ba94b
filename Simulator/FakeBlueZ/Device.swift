import CameraProtocols
import DBus
import SimulatedCameras
import UnleashedKit
import UnleashedSimulator

/// One peripheral (a module or a camera) as one adapter knows it: what it advertised, pairing,
/// the link, and the GATT objects while it is up.
struct Device {
    let path: String
    let adapter: Int
    let peer: Peer
    /// The advertised name (a camera's can change with its advertisement).
    var name: String
    let address: String
    var alias: String?
    var paired = false
    var trusted = false
    var blocked = false
    var rssi: Int16?
    /// Manufacturer data by company identifier, without the identifier's bytes.
    var manufacturerData: [UInt16: [UInt8]] = [:]
    /// Service data by service UUID.
    var serviceData: [String: [UInt8]] = [:]
    /// The service UUIDs it advertises: `UUIDs` until services resolve.
    var advertisedUUIDs: [String] = []
    var link: Link = .down
    /// Bumped by every connection attempt and every drop: a late callback of an earlier attempt
    /// finds it changed and does nothing.
    var attempt = 0
    /// `Connect()` calls waiting for the link.
    var connectCalls: [DBusIncomingCall] = []
    var pairing: Pairing?
    /// The TemporaryTimeout, while it runs.
    var removal: Task<Void, Never>?
    /// The GATT database, exported while services are resolved.
    var gatt: GATTDatabase?

    /// What is behind the device object, by its index in the fake's list.
    enum Peer: Hashable, Sendable {
        case module(Int)
        case camera(Int)
    }

    enum Link {
        case down
        case connecting(Task<Void, Never>)
        case up(ActiveLink)
    }

    /// A link that is up: to a module's radio, or to a camera's body.
    enum ActiveLink: Sendable {
        case module(ModuleTransport)
        /// `signals` ends when the link does; closing it from this side also tells the body.
        case camera(body: any SimulatedCameraBody, signals: AsyncStream<BodySignal>.Continuation)

        /// Closes the link from this computer's side.
        func close() {
            switch self {
            case .module(let transport): Task { await transport.close() }
            case .camera(let body, let signals):
                signals.finish()
                Task { await body.disconnected() }
            }
        }
    }

    /// A `Pair()` in progress.
    struct Pairing {
        let id: Int
        let call: DBusIncomingCall
        let requester: String
        var agent: Agent?
        var task: Task<Void, Never>?
    }

    var isConnected: Bool {
        if case .up = link { return true }
        return false
    }

    var isConnecting: Bool {
        if case .connecting = link { return true }
        return false
    }

    var activeLink: ActiveLink? {
        if case .up(let active) = link { return active }
        return nil
    }
}

/// A pairing agent a client registered with `AgentManager1`.
struct Agent: Sendable {
    let owner: String
    let path: String
    let capability: String
}

extension FakeBlueZ {
    func deviceProperties(_ device: Device) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            "Address": .string(device.address), "AddressType": .string("random"), "Name": .string(device.name),
            "Alias": .string(device.alias ?? device.name), "Paired": .bool(device.paired), "Bonded": .bool(device.paired),
            "Trusted": .bool(device.trusted), "Blocked": .bool(device.blocked), "LegacyPairing": .bool(false),
            "Connected": .bool(device.isConnected), "ServicesResolved": .bool(device.gatt != nil),
            "UUIDs": .strings(device.gatt?.allServiceUUIDs ?? device.advertisedUUIDs),
            "Adapter": .objectPath("/org/bluez/hci\(device.adapter)"),
            "AdvertisingFlags": .bytes([0x06]),
        ]
        if !device.manufacturerData.isEmpty { properties["ManufacturerData"] = Self.manufacturerData(device.manufacturerData) }
        if !device.serviceData.isEmpty { properties["ServiceData"] = Self.serviceData(device.serviceData) }
        if let rssi = device.rssi { properties["RSSI"] = .int16(rssi) }
        return properties
    }

    func setDeviceProperty(_ path: String, _ name: String, _ value: DBusValue) {
        guard let device = devices[path] else { return }
        switch (name, value) {
        case ("Trusted", .bool(let flag)): devices[path]?.trusted = flag
        case ("Blocked", .bool(let flag)): devices[path]?.blocked = flag
        case ("Alias", .string(let alias)): devices[path]?.alias = alias.isEmpty ? nil : alias
        default: break
        }
        update(path, InterfaceSpec.device.name, [name: name == "Alias" ? .string(devices[path]?.alias ?? device.name) : value])
    }

    func handleDevice(_ call: DBusIncomingCall, _ path: String, _ method: String) {
        guard let device = devices[path] else { return call.fail(BlueZError.unhandled(call.message, objectExists: false)) }
        switch method {
        case "Connect":
            count("connectCalls")
            guard adapters[device.adapter].powered else { return call.fail(BlueZError.notReady) }
            switch device.link {
            case .up: return call.fail(BlueZError.alreadyConnected)
            case .connecting: return call.fail(BlueZError.inProgress)
            case .down:
                guard device.pairing == nil else { return call.fail(BlueZError.inProgress) }
                devices[path]?.connectCalls.append(call)
                beginConnecting(path)
            }
        case "Disconnect":
            count("disconnectCalls")
            guard device.isConnected || device.isConnecting else { return call.fail(BlueZError.notConnected) }
            log("\(call.message.sender ?? "?") disconnects \(device.name)")
            // The reply goes before the signals of the link going down, as from bluetoothd:
            // device_remove_connection (src/device.c) sends it at once, while its property
            // changes wait for the main loop's next idle turn (gdbus/object.c, add_pending).
            // bleak closes its bus on `Connected: false`, so a reply after it is lost (EOFError).
            call.reply()
            dropLink(path, connectError: BlueZError.failed("Cancelled"), pairError: BlueZError.authenticationCanceled)
        case "Pair":
            count("pairCalls")
            guard adapters[device.adapter].powered else { return call.fail(BlueZError.notReady) }
            guard !device.paired else { return call.fail(BlueZError.alreadyExists) }
            guard device.pairing == nil else { return call.fail(BlueZError.inProgress) }
            // A camera whose pairing mode is closed does not answer the pairing request.
            if case .camera = device.peer, CameraAdvertisement.recognize(AdvertisementData(
                name: device.name, serviceUUIDs: device.advertisedUUIDs, manufacturerData: device.manufacturerData,
                serviceData: device.serviceData))?.pairing == .closed {
                log("\(device.name) is not in pairing mode: pairing rejected")
                return call.fail(BlueZError.authenticationRejected)
            }
            nextPairingID += 1
            devices[path]?.pairing = Device.Pairing(id: nextPairingID, call: call, requester: call.message.sender ?? "")
            switch device.link {
            case .up: startPairing(path)
            case .connecting: break
            case .down: beginConnecting(path)
            }
        case "CancelPairing":
            guard let pairing = device.pairing else { return call.fail(BlueZError.doesNotExist) }
            if let agent = pairing.agent, let bluez {
                Task { _ = try? await bluez.call(agent.owner, path: agent.path, interface: "org.bluez.Agent1", member: "Cancel", timeout: .seconds(2)) }
            }
            finishPairing(path, pairing.id, failure: BlueZError.authenticationCanceled)
            call.reply()
        default:
            // ConnectProfile and DisconnectProfile: a module has no BR/EDR profiles.
            call.fail(DBusError(name: "org.bluez.Error.BREDR.ProfileUnavailable", message: "Exhausted the list of BR/EDR profiles to connect to"))
        }
    }

    // MARK: - Connecting

    /// Starts a connection attempt: after the link delay it aborts (fault), fails (out of range,
    /// after the page timeout) or comes up.
    func beginConnecting(_ path: String) {
        guard let device = devices[path] else { return }
        devices[path]?.attempt += 1
        devices[path]?.removal?.cancel()
        devices[path]?.removal = nil
        let attempt = device.attempt + 1
        let aborting = faults.connectAborts > 0
        if aborting { faults.connectAborts -= 1 }
        let delay = configuration.timing.linkDelay
        let task: Task<Void, Never>
        switch device.peer {
        case .module(let index):
            let radio = modules[index].radio
            task = Task { [weak self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled, let self else { return }
                if aborting { return await self.perform { $0.abortConnection(path, attempt) } }
                let unanswered = radio.pageTimeouts
                do {
                    let transport = try await ModuleTransport.open(over: radio.connect())
                    await self.perform { $0.linkUp(path, attempt, .module(transport)) }
                } catch {
                    let timedOut = radio.pageTimeouts > unanswered
                    await self.perform { fake in
                        if timedOut { fake.count("pageTimeouts") }
                        fake.connectionFailed(path, attempt, "\(error)")
                    }
                }
            }
        case .camera(let index):
            let body = cameras[index].body
            let outOfRange = cameraOutOfRange(index)
            task = Task { [weak self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled, let self else { return }
                if aborting { return await self.perform { $0.abortConnection(path, attempt) } }
                guard !outOfRange, await body.isConnectable else {
                    // Nothing answers: the attempt runs to the page timeout, as with a module.
                    try? await Task.sleep(for: SimulatedRadio.pageTimeout)
                    return await self.perform { fake in
                        fake.count("pageTimeouts")
                        fake.connectionFailed(path, attempt, "the camera did not answer (asleep or out of range)")
                    }
                }
                let (signals, sink) = AsyncStream.makeStream(of: BodySignal.self)
                await body.connected { sink.yield($0) }
                await self.perform { $0.linkUp(path, attempt, .camera(body: body, signals: sink), cameraSignals: signals) }
            }
        }
        // The task reports back through the actor, so it cannot act before this is set.
        devices[path]?.link = .connecting(task)
    }

    /// The `connect-abort` fault: the link comes up and drops at once, as BlueZ reports a
    /// connection the controller gave up on.
    private func abortConnection(_ path: String, _ attempt: Int) {
        guard let device = devices[path], device.attempt == attempt, device.isConnecting else { return }
        count("connectAborts")
        log("connection to \(device.name) aborted (fault)")
        update(path, InterfaceSpec.device.name, ["Connected": .bool(true)])
        schedule(after: configuration.timing.abortDelay) { fake in
            guard fake.devices[path]?.attempt == attempt else { return }
            fake.dropLink(path, connectError: BlueZError.connectionAborted, pairError: BlueZError.connectionAborted)
        }
    }

    private func connectionFailed(_ path: String, _ attempt: Int, _ reason: String) {
        guard let device = devices[path], device.attempt == attempt, device.isConnecting else { return }
        log("connection to \(device.name) failed: \(reason)")
        // BlueZ reports a failed LE attempt as a link that came up and dropped (bluetoothctl shows
        // "Connected: yes", the error, "Connected: no"); clients such as bleak wait for that
        // `Connected=false` before they try again.
        update(path, InterfaceSpec.device.name, ["Connected": .bool(true)])
        dropLink(path, connectError: BlueZError.connectionAborted, pairError: BlueZError.connectionAttemptFailed)
    }

    private func linkUp(_ path: String, _ attempt: Int, _ active: Device.ActiveLink,
                        cameraSignals: AsyncStream<BodySignal>? = nil) {
        guard let device = devices[path], device.attempt == attempt, device.isConnecting else {
            active.close()
            return
        }
        devices[path]?.link = .up(active)
        log("\(device.name) connected")
        startLinkLossFaults(address: device.address)
        update(path, InterfaceSpec.device.name, ["Connected": .bool(true)])
        for call in device.connectCalls { call.reply() }
        devices[path]?.connectCalls = []
        switch active {
        case .module(let transport):
            Task { [weak self] in
                for await event in transport.link.events {
                    guard case .packet(let packet)? = transport.event(from: event) else { break }
                    await self?.perform { $0.notified(path, attempt, packet) }
                }
                await self?.perform { $0.linkLost(path, attempt) }
            }
        case .camera:
            guard let cameraSignals else { break }
            Task { [weak self] in
                for await signal in cameraSignals {
                    switch signal {
                    case .value(let characteristic, let value):
                        await self?.perform { $0.cameraNotified(path, attempt, characteristic, value) }
                    case .dropLink(let reason):
                        await self?.perform { $0.cameraDroppedLink(path, attempt, reason) }
                        return
                    }
                }
            }
        }
        let planned = faults.resolveDelay
        schedule(after: planned ?? configuration.timing.resolveDelay) { fake in
            if planned != nil { fake.count("delayedResolves") }
            fake.resolveServices(path, attempt)
        }
        if device.pairing != nil { startPairing(path) }
    }

    /// The radio dropped the link (out of range, the module restarted).
    func linkLost(_ path: String, _ attempt: Int) {
        guard let device = devices[path], device.attempt == attempt, device.isConnected else { return }
        count("linkLosses")
        log("link to \(device.name) lost")
        dropLink(path, connectError: BlueZError.connectionAborted, pairError: BlueZError.authenticationFailed)
    }

    /// Ends a connection or a connection attempt: waiting `Connect()` and `Pair()` calls fail with
    /// these errors, `ServicesResolved` and `Connected` go false, and the GATT objects go away.
    func dropLink(_ path: String, connectError: DBusError, pairError: DBusError) {
        guard let device = devices[path] else { return }
        devices[path]?.attempt += 1
        switch device.link {
        case .connecting(let task): task.cancel()
        case .up(let active): active.close()
        case .down: break
        }
        devices[path]?.link = .down
        releaseAcquiredSockets(path)
        // Two signals, in BlueZ's order: the services go before the link. Callers hear of the
        // failure after both, so a client that retries at once sees a disconnected device.
        update(path, InterfaceSpec.device.name, ["ServicesResolved": .bool(false)])
        update(path, InterfaceSpec.device.name, ["Connected": .bool(false)])
        unexportGATT(path)
        devices[path]?.connectCalls = []
        for call in device.connectCalls { call.fail(connectError) }
        if let pairing = device.pairing { finishPairing(path, pairing.id, failure: pairError) }
        scheduleRemovalIfTemporary(path)
    }

    // MARK: - Pairing

    /// Authenticates once the link is up, as the pairing mode and faults say.
    private func startPairing(_ path: String) {
        guard let device = devices[path], let pairing = device.pairing, pairing.task == nil else { return }
        let id = pairing.id
        if faults.refusePairing { return finishPairing(path, id, failure: BlueZError.authenticationRejected) }
        let mode = configuration.pairing
        if mode == .justWorks {
            devices[path]?.pairing?.task = schedule(after: configuration.timing.pairingDelay) { fake in
                fake.finishPairing(path, id, failure: nil)
            }
            return
        }
        guard let agent = agents[pairing.requester] ?? defaultAgentOwner.flatMap({ agents[$0] }), let bluez else {
            return finishPairing(path, id, failure: BlueZError.authenticationFailed)
        }
        let passkey = passkey(of: device.peer)
        devices[path]?.pairing?.agent = agent
        devices[path]?.pairing?.task = Task { [weak self] in
            let failure: DBusError?
            do throws(DBusError) {
                if mode == .confirm {
                    _ = try await bluez.call(agent.owner, path: agent.path, interface: "org.bluez.Agent1", member: "RequestConfirmation",
                                             [.objectPath(path), .uint32(passkey)], timeout: .seconds(30))
                    failure = nil
                } else {
                    let reply = try await bluez.call(agent.owner, path: agent.path, interface: "org.bluez.Agent1", member: "RequestPasskey",
                                                     [.objectPath(path)], timeout: .seconds(30))
                    failure = reply.first == .uint32(passkey) ? nil : BlueZError.authenticationFailed
                }
            } catch {
                failure = error.name == DBusError.noReplyName ? DBusError(name: "org.bluez.Error.AuthenticationTimeout", message: "Authentication Timeout")
                    : BlueZError.authenticationRejected
            }
            await self?.perform { $0.finishPairing(path, id, failure: failure) }
        }
    }

    /// Answers the `Pair()` call; success bonds the device.
    func finishPairing(_ path: String, _ id: Int, failure: DBusError?) {
        guard let pairing = devices[path]?.pairing, pairing.id == id else { return }
        pairing.task?.cancel()
        devices[path]?.pairing = nil
        if let failure {
            log("pairing with \(devices[path]?.name ?? path) failed: \(failure)")
            return pairing.call.fail(failure)
        }
        devices[path]?.paired = true
        devices[path]?.removal?.cancel()
        devices[path]?.removal = nil
        log("paired with \(devices[path]?.name ?? path)")
        update(path, InterfaceSpec.device.name, ["Paired": .bool(true), "Bonded": .bool(true)])
        pairing.call.reply()
    }

    func handleAgentManager(_ call: DBusIncomingCall, _ method: String) {
        let owner = call.message.sender ?? ""
        let agentPath = call.message.body[0].stringValue ?? ""
        switch method {
        case "RegisterAgent":
            let capability = call.message.body[1].stringValue ?? ""
            let capabilities = ["", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay"]
            guard capabilities.contains(capability) else { return call.fail(BlueZError.invalidArguments()) }
            guard agents[owner] == nil else { return call.fail(BlueZError.alreadyExists) }
            agents[owner] = Agent(owner: owner, path: agentPath, capability: capability.isEmpty ? "KeyboardDisplay" : capability)
            log("agent \(agentPath) of \(owner) registered")
            call.reply()
        case "UnregisterAgent":
            guard agents[owner]?.path == agentPath else { return call.fail(BlueZError.doesNotExist) }
            agents[owner] = nil
            if defaultAgentOwner == owner { defaultAgentOwner = nil }
            call.reply()
        default:
            guard agents[owner]?.path == agentPath else { return call.fail(BlueZError.doesNotExist) }
            defaultAgentOwner = owner
            call.reply()
        }
    }
}
