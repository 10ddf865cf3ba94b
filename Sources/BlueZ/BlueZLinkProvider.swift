public import DBus
public import UnleashedKit
public import UnleashedProtocol

/// Finds and links to one module through BlueZ, for a ``ModuleConnection``: the same state
/// machine, session and camera run over BlueZ as over the simulated radio, and the link is the
/// one a camera's is (``BlueZGATTLink``).
///
/// Each link gets its own ``BlueZClient`` (its own bus connection), so that notification
/// sessions of a lost link are not carried into the next one.
public struct BlueZLinkProvider: GATTLinkProvider {
    /// The bus BlueZ is on.
    public var bus: DBusConnection.Bus
    /// `hciN`, or nil for the first adapter.
    public var adapterName: String?
    /// The module's address (or advertised name).
    public var module: String
    /// Where the protocol lives in GATT; from the dialect.
    public var gatt: GATTLayout
    public var policy: BlueZClient.ConnectPolicy
    /// Whether packets travel on the sockets BlueZ hands out (`AcquireWrite`, `AcquireNotify`)
    /// where it offers them, rather than as D-Bus messages (see ``BlueZGATTLink``).
    public var acquireSockets: Bool
    /// What the links' waits and retries are timed on.
    public var clock: any Clock<Duration>
    /// The thread the connection, its sessions and its camera run on, which reads the module's
    /// notification socket too: a notification and the request it answers are one thread's work,
    /// woken once. Shared by every copy of this provider. Only a provider that takes the sockets
    /// has one: over messages a notification arrives on the bus connection's thread whatever
    /// runs the session, and the link keeps Swift's shared pool, as it always had.
    public let executor: ExecutorThread?
    /// Set once a link's notification socket ended before delivering anything, which some
    /// devices do on a real BlueZ although the link is up: later links take notifications as
    /// messages (`StartNotify`). Shared by every copy of this provider.
    private let notifySocketFailed = SeenFlag()

    public init(bus: DBusConnection.Bus = .system, adapterName: String? = nil, module: String,
                gatt: GATTLayout = UnleashedV1.gattLayout, policy: BlueZClient.ConnectPolicy = BlueZClient.ConnectPolicy(),
                acquireSockets: Bool = true, clock: any Clock<Duration> = ContinuousClock()) {
        self.bus = bus
        self.adapterName = adapterName
        self.module = module
        self.gatt = gatt
        self.policy = policy
        self.acquireSockets = acquireSockets
        self.clock = clock
        executor = acquireSockets ? ExecutorThread(name: "bluez-link") : nil
    }

    /// Returns once BlueZ knows the module (it is paired, or a scan saw it). While bluetoothd is
    /// off the bus (a restart) it waits for it to come back, up to `timeout`.
    public func discover(timeout: Duration) async throws(GATTError) {
        let elapsed = stopwatch(clock)
        while true {
            do {
                let client = try await BlueZClient.open(bus: bus, clock: clock)
                defer { Task { await client.close() } }
                let adapter = try await client.adapter(named: adapterName)
                _ = try await client.findModule(module, on: adapter, serviceUUID: gatt.service,
                                                timeout: max(.milliseconds(100), timeout - elapsed()))
                return
            } catch .bluezNotRunning where elapsed() < timeout {
                try? await clock.sleep(for: .milliseconds(250))
            } catch .moduleNotFound {
                throw .notConnected("no module found")
            } catch {
                throw .failed(error.description)
            }
        }
    }

    /// Links to the module; the link streams the Command and Event characteristics on their
    /// sockets where BlueZ offers them and ``acquireSockets`` allows.
    public func connect() async throws(GATTError) -> any GATTLink {
        do throws(BlueZError) {
            let (client, device) = try await BlueZClient.link(to: module, bus: bus, clock: clock, adapterName: adapterName,
                                                              scanningFor: gatt.service, serviceUUID: gatt.service, policy: policy,
                                                              pairedOnly: true)
            let memory = notifySocketFailed
            let options = BlueZGATTLink.Options(
                deviceWord: "module", inProgress: policy.inProgress,
                streamed: acquireSockets ? [gatt.commandCharacteristic, gatt.eventCharacteristic] : [],
                readingThread: executor, avoidNotifySockets: notifySocketFailed.isSet,
                notifySocketEndedEarly: { memory.set() })
            return await BlueZGATTLink(client: client, devicePath: device.path, options: options)
        } catch {
            throw .failed(error.description)
        }
    }
}
