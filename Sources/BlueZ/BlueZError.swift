public import DBus

/// Why a Bluetooth operation failed, in words that say what to do about it.
public enum BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The system bus itself could not be reached.
    case noSystemBus(String)
    /// Nobody owns `org.bluez`: bluetoothd is not running (or restarting).
    case bluezNotRunning
    /// BlueZ has no adapter at all.
    case noAdapter
    /// The bus's policy does not let this user talk to BlueZ.
    case permissionDenied(String)
    /// No adapter has this name; the others are listed.
    case adapterNotFound(String, available: [String])
    /// The adapter is there but switched off.
    case adapterPoweredOff(String)
    /// No module with this address or name was seen.
    case moduleNotFound(String)
    /// The module refused to pair, or the pairing was rejected here.
    case pairingRefused(String)
    /// The module is not paired, and Command and Event need an encrypted link.
    case notPaired(String)
    /// Connecting failed after the retries this client makes.
    case connectionFailed(String)
    /// The link went down while waiting for it.
    case connectionLost(String)
    /// A step did not finish in time.
    case timedOut(String)
    /// The device has no Unleashed service: not a module, or a module with other firmware.
    case notAModule(String)
    /// Any other error from BlueZ or the bus.
    case dbus(DBusError)

    public var description: String {
        switch self {
        case .noSystemBus(let reason): "cannot reach the D-Bus system bus (\(reason)); is dbus running?"
        case .bluezNotRunning: "org.bluez is not on the system bus: is bluetoothd running? (systemctl status bluetooth)"
        case .permissionDenied(let reason):
            "not allowed to talk to bluetoothd (\(reason)): add your user to the bluetooth group (sudo adduser $USER bluetooth) and log in again"
        case .noAdapter: "no Bluetooth adapter found: plug one in, or check `rfkill list` and `bluetoothctl list`"
        case .adapterNotFound(let name, let available):
            "no Bluetooth adapter named \(name); available: \(available.isEmpty ? "none" : available.joined(separator: ", "))"
        case .adapterPoweredOff(let name): "Bluetooth adapter \(name) is powered off: run `bluetoothctl power on` (and check `rfkill list`)"
        case .moduleNotFound(let module): "module \(module) not found: is it powered and in range? (`unleashed scan` lists the modules in range)"
        case .pairingRefused(let reason): "pairing refused: \(reason); open the module's pairing window and try again"
        case .notPaired(let module): "module \(module) is not paired: run `unleashed pair \(module)` or `unleashed connect \(module)`"
        case .connectionFailed(let reason): "could not connect to the module: \(reason)"
        case .connectionLost(let reason): "connection to the module lost: \(reason)"
        case .timedOut(let what): "\(what) timed out"
        case .notAModule(let reason): "not an Unleashed module: \(reason)"
        case .dbus(let error): "Bluetooth error: \(error)"
        }
    }

    /// Errors that retrying cannot fix: the user has to act first.
    public var needsUserAction: Bool {
        switch self {
        case .noSystemBus, .bluezNotRunning, .permissionDenied, .noAdapter, .adapterNotFound, .adapterPoweredOff, .notPaired, .pairingRefused, .notAModule: true
        default: false
        }
    }
}
