/// What the system bus and BlueZ answered to one look at BlueZ's objects.
public enum BlueZObservation: Sendable, Equatable {
    /// The system bus could not be reached at all.
    case noSystemBus(String)
    /// Nobody owns `org.bluez` on the bus: bluetoothd is not running.
    case notRunning
    /// The bus's policy refused this user's call to BlueZ.
    case denied(String)
    /// Any other failure of the call.
    case failed(String)
    /// The bus or bluetoothd did not answer in time (a hung bluetoothd, a bus that never speaks).
    case noAnswer(String)
    /// BlueZ answered with these adapters.
    case answered([AdapterObservation])
}

/// One adapter as BlueZ describes it.
public struct AdapterObservation: Sendable, Equatable {
    /// `hci0`.
    public var name: String
    public var address: String
    public var powered: Bool
    /// BlueZ's `PowerState` (5.66 and later): `on`, `off`, `off-blocked` (rfkill), `on-disabling`,
    /// `off-enabling`; nil from an older BlueZ.
    public var powerState: String?

    public init(name: String, address: String, powered: Bool, powerState: String? = nil) {
        self.name = name
        self.address = address
        self.powered = powered
        self.powerState = powerState
    }
}

/// One Bluetooth switch of the kernel's rfkill (`/sys/class/rfkill/rfkillN` of type
/// `bluetooth`): a soft block is software's (`rfkill block`, a desktop's airplane mode), a hard
/// block a physical switch or the firmware's.
public struct RfkillSwitch: Sendable, Equatable {
    /// The switch's name, usually the adapter's (`hci0`).
    public var name: String
    public var soft: Bool
    public var hard: Bool

    public init(name: String, soft: Bool, hard: Bool) {
        self.name = name
        self.soft = soft
        self.hard = hard
    }

    public var blocked: Bool { soft || hard }
}

/// A module that the configuration names or `unleashed connect` remembered, as BlueZ knows it.
public struct ModuleObservation: Sendable, Equatable {
    /// The name it goes by here (the configuration's, or the address).
    public var name: String
    public var address: String
    /// Whether BlueZ has an object for it at all.
    public var known: Bool
    /// Whether BlueZ holds a bond with it (`Paired`).
    public var paired: Bool

    public init(name: String, address: String, known: Bool, paired: Bool) {
        self.name = name
        self.address = address
        self.known = known
        self.paired = paired
    }
}

/// The rules of the Bluetooth checks: BlueZ itself, this user's access to it, the adapter and
/// the modules.
public enum BluetoothRules {
    /// What to say when the cameras are on USB: Bluetooth is then only worth a look.
    static func weight(_ status: Finding.Status, needed: Bool) -> Finding.Status {
        needed || status != .problem ? status : .warning
    }

    /// Whether bluetoothd answers on the system bus, and which BlueZ it is (`version`, from
    /// `bluetoothctl --version`; nil when that is not installed). `needed` is false when the
    /// configured backend drives a USB camera, which needs no Bluetooth.
    public static func bluez(_ observation: BlueZObservation, version: String?, needed: Bool) -> Finding {
        let named = version.map { "BlueZ \($0)" } ?? "BlueZ"
        switch observation {
        case .noSystemBus(let reason):
            return Finding(.bluez, weight(.problem, needed: needed), "the D-Bus system bus cannot be reached (\(reason))",
                           remedy: "start D-Bus (`sudo systemctl start dbus`), or check $DBUS_SYSTEM_BUS_ADDRESS")
        case .notRunning:
            let installed = version == nil ? "BlueZ is not installed" : "\(named) is installed but bluetoothd is not running"
            return Finding(.bluez, weight(.problem, needed: needed), "\(installed): org.bluez is not on the system bus",
                           remedy: version == nil ? "sudo apt-get install bluez" : "sudo systemctl enable --now bluetooth")
        case .noAnswer(let limit):
            return Finding(.bluez, weight(.problem, needed: needed), "the system bus or bluetoothd did not answer in \(limit)",
                           remedy: "sudo systemctl restart bluetooth; `journalctl -u bluetooth -e` says what it was doing")
        case .denied, .failed, .answered:
            return Finding(.bluez, .ok, "\(named) is running (org.bluez on the system bus)")
        }
    }

    /// Whether this user may call BlueZ: Debian's D-Bus policy for BlueZ lets root and the
    /// `bluetooth` group in.
    public static func access(_ observation: BlueZObservation, user: String, needed: Bool) -> Finding {
        switch observation {
        case .noSystemBus, .notRunning, .noAnswer:
            return Finding(.bluetoothAccess, .skipped, "not checked: BlueZ cannot be reached")
        case .denied(let reason):
            return Finding(.bluetoothAccess, weight(.problem, needed: needed),
                           "user \(user) is not allowed to use BlueZ over D-Bus (\(reason))",
                           remedy: "sudo adduser \(user) bluetooth, then log out and in again")
        case .failed(let reason):
            return Finding(.bluetoothAccess, weight(.problem, needed: needed), "BlueZ refused to list its objects: \(reason)",
                           remedy: "see `journalctl -u bluetooth`")
        case .answered:
            return Finding(.bluetoothAccess, .ok, "user \(user) may use BlueZ")
        }
    }

    /// Whether an adapter is there, powered and not blocked. `wanted` is the configured adapter
    /// (nil: any). rfkill is read from the kernel, so it is told even when BlueZ is down.
    public static func adapter(_ observation: BlueZObservation, rfkill: [RfkillSwitch], wanted: String?, needed: Bool) -> Finding {
        let blocked = rfkill.filter(\.blocked)
        let block: (RfkillSwitch) -> String = { $0.hard ? "\($0.name) (a hard block: a switch or the firmware)" : "\($0.name)" }
        let unblock = "sudo rfkill unblock bluetooth" + (blocked.contains(where: \.hard) ? "; a hard block needs the switch or the firmware's setting" : "")
        guard case .answered(let adapters) = observation else {
            if !blocked.isEmpty {
                return Finding(.adapter, weight(.problem, needed: needed),
                               "rfkill blocks Bluetooth: \(blocked.map(block).joined(separator: ", "))", remedy: unblock)
            }
            return Finding(.adapter, .skipped, "not checked: BlueZ cannot be reached"
                           + (rfkill.isEmpty ? "" : "; rfkill blocks no Bluetooth switch"))
        }
        // The daemon's rule (BlueZClient.adapter(named:)): the adapter named by its name or its
        // address, else the first; never another one that happens to be on.
        let named = wanted.map { name in adapters.first { $0.name == name || $0.address.caseInsensitiveCompare(name) == .orderedSame } }
        guard let adapter = named ?? adapters.first else {
            if let wanted, !adapters.isEmpty {
                return Finding(.adapter, weight(.problem, needed: needed),
                               "no adapter named \(wanted); BlueZ has \(adapters.map(\.name).joined(separator: ", "))",
                               remedy: "set `adapter` in the configuration to one of them, or remove it to use the first")
            }
            if !blocked.isEmpty {
                return Finding(.adapter, weight(.problem, needed: needed),
                               "no Bluetooth adapter: rfkill blocks \(blocked.map(block).joined(separator: ", "))", remedy: unblock)
            }
            return Finding(.adapter, weight(.problem, needed: needed), "BlueZ has no Bluetooth adapter",
                           remedy: "plug in a Bluetooth LE adapter (4.0 or later); `dmesg | grep -i bluetooth` says whether the kernel found one")
        }
        let switchOf = rfkill.first { $0.name == adapter.name && $0.blocked }
        if adapter.powerState == "off-blocked" || (!adapter.powered && switchOf != nil) {
            return Finding(.adapter, weight(.problem, needed: needed),
                           "adapter \(adapter.name) (\(adapter.address)) is blocked by rfkill" + (switchOf?.hard == true ? " (a hard block)" : ""),
                           remedy: unblock)
        }
        guard adapter.powered else {
            return Finding(.adapter, weight(.problem, needed: needed), "adapter \(adapter.name) (\(adapter.address)) is powered off",
                           remedy: "bluetoothctl power on (and AutoEnable=true in /etc/bluetooth/main.conf keeps it on after a restart)")
        }
        return Finding(.adapter, .ok, "adapter \(adapter.name) (\(adapter.address)) is powered"
                       + (adapters.count > 1 ? "; \(adapters.count) adapters in all" : ""))
    }

    /// Whether BlueZ holds a bond with every module the configuration names or `connect` remembered.
    public static func modules(_ observation: BlueZObservation, modules: [ModuleObservation], needed: Bool) -> Finding {
        guard !modules.isEmpty else {
            return Finding(.modules, .skipped, "no module is configured or remembered (`unleashed connect` remembers one)")
        }
        guard case .answered = observation else { return Finding(.modules, .skipped, "not checked: BlueZ cannot be reached") }
        let unpaired = modules.filter { !$0.paired }
        guard unpaired.isEmpty else {
            let names = unpaired.map { "\($0.name) (\($0.address))" + ($0.known ? "" : ", unknown to BlueZ") }
            return Finding(.modules, weight(.warning, needed: needed),
                           "not paired: \(names.joined(separator: ", ")); commands pair first, and fail if the module refuses",
                           remedy: "with the module on and in range: unleashed pair \(unpaired[0].address) (a refusal means the module holds another bond: reset it)")
        }
        return Finding(.modules, .ok, "paired: " + modules.map(\.name).joined(separator: ", "))
    }
}
