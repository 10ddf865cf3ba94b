/// BlueZ's D-Bus names, in one place.
enum BlueZName {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let agentManager = "org.bluez.AgentManager1"
    static let agent = "org.bluez.Agent1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    /// Error names this client acts on.
    enum Error {
        static let inProgress = "org.bluez.Error.InProgress"
        static let failed = "org.bluez.Error.Failed"
        static let alreadyConnected = "org.bluez.Error.AlreadyConnected"
        static let alreadyExists = "org.bluez.Error.AlreadyExists"
        static let notReady = "org.bluez.Error.NotReady"
        static let notConnected = "org.bluez.Error.NotConnected"
        static let notPermitted = "org.bluez.Error.NotPermitted"
        static let notSupported = "org.bluez.Error.NotSupported"
        static let doesNotExist = "org.bluez.Error.DoesNotExist"
        static let rejected = "org.bluez.Error.Rejected"
        static let canceled = "org.bluez.Error.Canceled"
        static let authentication = [
            "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationRejected",
            "org.bluez.Error.AuthenticationCanceled", "org.bluez.Error.AuthenticationTimeout",
            "org.bluez.Error.ConnectionAttemptFailed",
        ]
    }

    /// The match rules a client adds before reading the object tree, so no change is missed.
    static let matchRules = objectMatchRules + [ownerMatchRule]

    /// Every object's arrival, removal and property changes.
    static let objectMatchRules = [
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'",
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesRemoved'",
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez'",
    ]

    /// bluetoothd joining or leaving the bus.
    static let ownerMatchRule =
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'"

    /// The rules that route one device's changes and nothing else: its properties and those of
    /// its GATT objects, and its own or its objects' arrival and removal. (`arg0path` matches a
    /// path equal to the rule's, or below it when the rule ends in `/`.)
    static func deviceMatchRules(_ devicePath: String) -> [String] {
        let signal = "type='signal',sender='org.bluez'"
        let manager = signal + ",interface='org.freedesktop.DBus.ObjectManager'"
        return [
            manager + ",member='InterfacesAdded',arg0path='\(devicePath)/'",
            manager + ",member='InterfacesRemoved',arg0path='\(devicePath)'",
            manager + ",member='InterfacesRemoved',arg0path='\(devicePath)/'",
            signal + ",interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='\(devicePath)'",
        ]
    }

    /// BlueZ's object path for a device: `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    static func devicePath(adapter: String, address: String) -> String {
        "\(adapter)/dev_" + address.uppercased().replacingOccurrences(of: ":", with: "_")
    }
}
