public import CameraProtocols
public import DBus
import GATT
public import UnleashedKit
public import UnleashedProtocol

/// What a ``BlueZLinkProvider`` links to: an Unleashed module, or a camera over its brand's own
/// remote. The steps are the same for both; the peer says which service proves the device is
/// the one wanted, which characteristics may travel on BlueZ's sockets, and how a refusal is
/// worded.
public struct BlueZPeer: Sendable {
    fileprivate enum Kind: Sendable {
        case module
        case camera(brand: String)
    }

    /// The device's address (or advertised name).
    public var address: String
    fileprivate var kind: Kind
    /// The service a scan looks for; nil to scan for every device (a camera may not advertise
    /// its remote service).
    fileprivate var scanService: String?
    /// The service whose presence after discovery proves the device speaks the protocol.
    fileprivate var service: String
    /// The characteristics whose packets may travel on the sockets BlueZ hands out.
    fileprivate var streamable: Set<GATTCharacteristicID>

    /// An Unleashed module, its protocol where `gatt` says.
    public static func module(_ address: String, gatt: GATTLayout = UnleashedV1.gattLayout) -> BlueZPeer {
        BlueZPeer(address: address, kind: .module, scanService: gatt.service, service: gatt.service,
                  streamable: [gatt.commandCharacteristic, gatt.eventCharacteristic])
    }

    /// A camera over its brand's own remote protocol.
    public static func camera(_ address: String, remote: any CameraRemoteProtocol.Type) -> BlueZPeer {
        BlueZPeer(address: address, kind: .camera(brand: remote.brand.displayName), scanService: nil,
                  service: remote.services.first?.uuid ?? "", streamable: [])
    }

    /// What the device is called in messages.
    var word: String {
        switch kind {
        case .module: "module"
        case .camera: "camera"
        }
    }
}

/// Finds and links to one device through BlueZ, for a ``ConnectionDriver``: a module's
/// protocol and every camera brand's run over the same ``BlueZGATTLink``, reached the same way
/// (the adapter, a scan, connect retries, the service that proves the device).
///
/// Each link gets its own ``BlueZClient`` (its own bus connection), so that notification
/// sessions of a lost link are not carried into the next one.
public struct BlueZLinkProvider: GATTLinkProvider {
    /// The bus BlueZ is on.
    public var bus: DBusConnection.Bus
    /// `hciN`, or nil for the first adapter.
    public var adapterName: String?
    /// The device, and what it speaks.
    public var peer: BlueZPeer
    public var policy: BlueZClient.ConnectPolicy
    /// Whether packets travel on the sockets BlueZ hands out (`AcquireWrite`, `AcquireNotify`)
    /// where it offers them, rather than as D-Bus messages (see ``BlueZGATTLink``).
    public var acquireSockets: Bool
    /// What the links' waits and retries are timed on.
    public var clock: any Clock<Duration>
    /// The thread the connection, its sessions and its camera run on, which reads the device's
    /// notification socket too: a notification and the request it answers are one thread's work,
    /// woken once. Shared by every copy of this provider. Only a provider that takes sockets
    /// has one: over messages a notification arrives on the bus connection's thread whatever
    /// runs the session, and the link keeps Swift's shared pool.
    public let executor: ExecutorThread?
    /// Set once a link's notification socket ended before delivering anything, which some
    /// devices do on a real BlueZ although the link is up: later links take notifications as
    /// messages (`StartNotify`). Shared by every copy of this provider.
    private let notifySocketFailed = SeenFlag()

    public init(bus: DBusConnection.Bus = .system, adapterName: String? = nil, peer: BlueZPeer,
                policy: BlueZClient.ConnectPolicy = BlueZClient.ConnectPolicy(), acquireSockets: Bool = true,
                clock: any Clock<Duration> = ContinuousClock()) {
        self.bus = bus
        self.adapterName = adapterName
        self.peer = peer
        self.policy = policy
        self.acquireSockets = acquireSockets && !peer.streamable.isEmpty
        self.clock = clock
        executor = self.acquireSockets ? ExecutorThread(name: "bluez-link") : nil
    }

    /// A module's provider.
    public init(bus: DBusConnection.Bus = .system, adapterName: String? = nil, module: String,
                gatt: GATTLayout = UnleashedV1.gattLayout, policy: BlueZClient.ConnectPolicy = BlueZClient.ConnectPolicy(),
                acquireSockets: Bool = true, clock: any Clock<Duration> = ContinuousClock()) {
        self.init(bus: bus, adapterName: adapterName, peer: .module(module, gatt: gatt), policy: policy,
                  acquireSockets: acquireSockets, clock: clock)
    }

    /// Returns once BlueZ knows the device (it is paired, or a scan saw it). While bluetoothd is
    /// off the bus (a restart) it waits for it to come back, up to `timeout`.
    public func discover(timeout: Duration) async throws(GATTError) {
        let elapsed = stopwatch(clock)
        while true {
            do {
                let client = try await BlueZClient.open(bus: bus, clock: clock)
                defer { Task { await client.close() } }
                let adapter = try await client.adapter(named: adapterName)
                _ = try await client.findDevice(peer.address, on: adapter, serviceUUID: peer.scanService,
                                                timeout: max(.milliseconds(100), timeout - elapsed()))
                return
            } catch .bluezNotRunning where elapsed() < timeout {
                try? await clock.sleep(for: .milliseconds(250))
            } catch .moduleNotFound {
                switch peer.kind {
                case .module: throw .notConnected("no module found")
                case .camera: throw .notConnected("no camera \(peer.address) in range")
                }
            } catch {
                throw .failed(error.description)
            }
        }
    }

    /// Links to the device; the link streams the peer's streamable characteristics on their
    /// sockets where BlueZ offers them and ``acquireSockets`` allows.
    public func connect() async throws(GATTError) -> any GATTLink {
        do throws(BlueZError) {
            let isModule = if case .module = peer.kind { true } else { false }
            let (client, device) = try await BlueZClient.link(to: peer.address, bus: bus, clock: clock, adapterName: adapterName,
                                                              scanningFor: peer.scanService, serviceUUID: peer.service, policy: policy,
                                                              pairedOnly: isModule)
            let memory = notifySocketFailed
            let options = BlueZGATTLink.Options(
                deviceWord: peer.word, inProgress: policy.inProgress,
                streamed: acquireSockets ? peer.streamable : [],
                readingThread: executor, avoidNotifySockets: notifySocketFailed.isSet,
                notifySocketEndedEarly: { memory.set() })
            return await BlueZGATTLink(client: client, devicePath: device.path, options: options)
        } catch {
            // A module's words are BlueZError's own; a camera's say what to do on the camera.
            switch (peer.kind, error) {
            case (.camera(let brand), .notAModule):
                throw .failed("the device \(peer.address) offers no \(brand) remote service; check that its Bluetooth remote setting is on")
            case (.camera, .notPaired):
                throw .notPaired
            default:
                throw .failed(error.description)
            }
        }
    }
}
