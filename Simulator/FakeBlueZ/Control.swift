import DBus
import UnleashedKit
public import UnleashedSimulator

/// The control interface, `org.unleashed.Simulator1` at `/org/unleashed/Simulator` on the bus
/// name `org.unleashed.Simulator`: what a test does to the radio and to bluetoothd. Each method
/// is also callable in-process.
extension FakeBlueZ {
    func handleControl(_ call: DBusIncomingCall) async {
        let message = call.message
        if message.path == Self.controlPath, message.interface == InterfaceSpec.introspectable.name, message.member == "Introspect" {
            return call.reply([.string(controlIntrospection)])
        }
        guard message.path == Self.controlPath else { return call.fail(BlueZError.unhandled(message, objectExists: false)) }
        guard message.interface == Self.controlInterface, let method = InterfaceSpec.control.method(message.member ?? ""),
              method.arguments == message.signature else {
            return call.fail(BlueZError.unhandled(message, objectExists: true))
        }
        let body = message.body
        switch method.name {
        case "LoseLink":
            guard loseLink(address: body[0].stringValue ?? "", for: .milliseconds(body[1].intValue ?? 0)) else {
                return call.fail(Self.unknownModule(body[0].stringValue ?? ""))
            }
            call.reply()
        case "Cameras":
            call.reply([.strings(cameraAddresses)])
        case "SetCameraAsleep", "SetCameraPairing", "SetCameraRemote":
            let address = body[0].stringValue ?? ""
            let on = body[1].boolValue ?? false
            let known = switch method.name {
            case "SetCameraAsleep": await setCamera(address: address, asleep: on)
            case "SetCameraPairing": await setCamera(address: address, pairingOpen: on)
            default: await setCamera(address: address, remoteEnabled: on)
            }
            guard known else { return call.fail(Self.unknownCamera(address)) }
            call.reply()
        case "CameraPictures":
            guard let pictures = await picturesTaken(address: body[0].stringValue ?? "") else {
                return call.fail(Self.unknownCamera(body[0].stringValue ?? ""))
            }
            call.reply([.uint32(UInt32(clamping: pictures))])
        case "RestartBluetoothd":
            await restartBluetoothd(down: .milliseconds(body[0].intValue ?? 0))
            call.reply()
        case "SetFaults":
            do throws(FaultPlanError) {
                setFaults(try FaultPlan(parsing: body[0].stringValue ?? ""))
                call.reply()
            } catch {
                call.fail("org.unleashed.Simulator.Error.InvalidFaults", error.description)
            }
        case "SetPowered":
            setPowered(body[0].boolValue ?? true)
            call.reply()
        case "Passkey":
            guard let passkey = passkey(address: body[0].stringValue ?? "") else { return call.fail(Self.unknownModule(body[0].stringValue ?? "")) }
            call.reply([.uint32(passkey)])
        case "Stats":
            call.reply([.properties(statistics.mapValues { .uint32(UInt32(clamping: $0)) })])
        default:
            call.reply([.strings(moduleAddresses)])
        }
    }

    private static func unknownModule(_ address: String) -> DBusError {
        DBusError(name: "org.unleashed.Simulator.Error.UnknownModule", message: "no simulated module or camera has the address '\(address)'")
    }

    private static func unknownCamera(_ address: String) -> DBusError {
        DBusError(name: "org.unleashed.Simulator.Error.UnknownCamera", message: "no simulated camera has the address '\(address)'")
    }

    private var controlIntrospection: String {
        "<node>\n  <interface name=\"\(Self.controlInterface)\">\n" + Self.methodsXML(InterfaceSpec.control) + "  </interface>\n</node>\n"
    }

    // MARK: - In-process controls

    /// The addresses of the simulated modules, in order.
    public var moduleAddresses: [String] { modules.map(\.address) }

    /// The simulated module with this address (any case), to steer its camera directly.
    public func module(address: String) -> VirtualModule? {
        simulatedModule(address)?.module
    }

    /// The passkey the module with this address shows or expects when pairing.
    public func passkey(address: String) -> UInt32? {
        simulatedModule(address)?.passkey
    }

    /// Counters of what clients did and what happened: `connectCalls`, `connectAborts`,
    /// `disconnectCalls`, `pairCalls`, `readCalls`, `writeCalls`, `writes` (values that reached
    /// a module or a camera), `notifications`, `startDiscoveryCalls`, `linkLosses`, `restarts`,
    /// `advertisingRounds` (each round of advertisements an adapter reports while discovering),
    /// `pageTimeouts` (attempts that nothing answered, failed after the page timeout),
    /// `delayedResolves` (services resolved after the plan's `resolve-delay`); and the D-Bus messages at `org.bluez`'s end: `bluezCalls` (every method call it took)
    /// and `signals` (every signal it sent).
    public var statistics: [String: Int] {
        let names = ["connectCalls", "connectAborts", "disconnectCalls", "pairCalls", "readCalls", "writeCalls", "writes",
                     "notifications", "startDiscoveryCalls", "linkLosses", "restarts", "advertisingRounds",
                     "pageTimeouts", "delayedResolves", "bluezCalls", "signals"]
        return Dictionary(uniqueKeysWithValues: names.map { ($0, counters[$0] ?? 0) })
    }

    /// Drops the link of the module or camera with this address now and keeps it out of range
    /// for `duration`; false when nothing has this address.
    @discardableResult
    public func loseLink(address: String, for duration: Duration) -> Bool {
        if let camera = simulatedCamera(address) {
            log("camera \(camera.address) goes out of range for \(duration.compactText)")
            camerasAway[camera.index] = .now + duration
            for (path, device) in devices where device.peer == .camera(camera.index) && (device.isConnected || device.isConnecting) {
                count("linkLosses")
                dropLink(path, connectError: BlueZError.connectionAborted, pairError: BlueZError.authenticationFailed)
            }
            return true
        }
        guard let module = simulatedModule(address) else { return false }
        log("\(module.name) goes out of range for \(duration.compactText)")
        module.radio.loseLink(for: duration)
        return true
    }

    /// Closes the `AcquireNotify` sockets of the device with this address and leaves its link
    /// up: what a client of a real BlueZ meets with some devices (bleak #1951), whose notify
    /// socket ends at once. False when no connected device has this address.
    @discardableResult
    public func dropNotifySockets(address: String) -> Bool {
        guard let (path, device) = connectedDevice(address) else { return false }
        log("the notify sockets of \(device.name) close; the link stays up")
        for characteristic in device.gatt?.characteristics ?? [] {
            if let socket = characteristic.notifySocket { releaseSocket(path, characteristic.path, socket) }
        }
        return true
    }

    /// Sends `value` as a notification of the Event characteristic of the connected module with
    /// this address, as if the module had sent it (an empty one, say, which BlueZ passes on);
    /// false when no connected module has this address.
    @discardableResult
    public func notifyEvent(address: String, value: [UInt8]) -> Bool {
        guard let (path, device) = connectedDevice(address), let event = device.gatt?.eventPath else { return false }
        deliverNotification(path, event, value)
        return true
    }

    /// The connected device with this address, in any case, and its object path.
    private func connectedDevice(_ address: String) -> (path: String, device: Device)? {
        devices.first { $0.value.address == address.uppercased() && $0.value.isConnected }.map { ($0.key, $0.value) }
    }

    /// Restarts bluetoothd; see the control interface's `RestartBluetoothd`.
    public func restart(down: Duration) async {
        await restartBluetoothd(down: down)
    }

    /// Replaces the fault plan: counts start afresh, `linkloss` runs from each module's next
    /// connection and `restart` from now.
    public func setFaults(_ plan: FaultPlan) {
        for task in faultTasks { task.cancel() }
        faultTasks = []
        linkLossArmed = []
        faults = plan
        log("faults: connect-abort=\(plan.connectAborts), refuse-pairing=\(plan.refusePairing), "
            + "linkloss×\(plan.linkLosses.count), restart×\(plan.restarts.count)")
        scheduleRestarts(plan.restarts)
    }

    /// Powers every adapter on or off, as `rfkill` would.
    public func setPowered(_ on: Bool) {
        for index in adapters.indices { setPowered(on, adapter: index) }
    }

    private func simulatedModule(_ address: String) -> SimulatedModule? {
        modules.first { $0.address.caseInsensitiveCompare(address) == .orderedSame }
    }

    /// Starts the `linkloss` faults of a module or camera at its first connection under the current plan.
    func startLinkLossFaults(address: String) {
        guard linkLossArmed.insert(address).inserted else { return }
        for outage in faults.linkLosses {
            faultTasks.append(schedule(after: outage.after) { fake in
                fake.loseLink(address: address, for: outage.length)
            })
        }
    }
}
