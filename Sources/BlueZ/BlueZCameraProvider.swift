public import CameraProtocols
public import DBus
public import UnleashedKit

/// Finds and links to one camera through BlueZ for a ``RemoteConnection``: the same client,
/// connect retries and pairing as a module's, with the camera's GATT characteristics reached by
/// service and UUID.
///
/// Each link has its own ``BlueZClient`` (its own bus connection), so that the notification
/// sessions of a lost link are not carried into the next.
public struct BlueZCameraProvider: GATTLinkProvider {
    /// The bus BlueZ is on.
    public var bus: DBusConnection.Bus
    /// `hciN`, or nil for the first adapter.
    public var adapterName: String?
    /// The camera's address (or advertised name).
    public var camera: String
    /// The brand's protocol: the service that proves the device is the camera wanted.
    public var remoteProtocol: any CameraRemoteProtocol.Type
    public var policy: BlueZClient.ConnectPolicy
    /// What the links' waits and retries are timed on.
    public var clock: any Clock<Duration>

    public init(bus: DBusConnection.Bus = .system, adapterName: String? = nil, camera: String,
                remoteProtocol: any CameraRemoteProtocol.Type, policy: BlueZClient.ConnectPolicy = BlueZClient.ConnectPolicy(),
                clock: any Clock<Duration> = ContinuousClock()) {
        self.bus = bus
        self.adapterName = adapterName
        self.camera = camera
        self.remoteProtocol = remoteProtocol
        self.policy = policy
        self.clock = clock
    }

    /// The service whose presence after discovery proves the device speaks the brand's remote.
    var primaryService: String { remoteProtocol.services.first?.uuid ?? "" }

    public func discover(timeout: Duration) async throws(GATTError) {
        do throws(BlueZError) {
            let client = try await BlueZClient.open(bus: bus, clock: clock)
            defer { Task { await client.close() } }
            let adapter = try await client.adapter(named: adapterName)
            _ = try await client.findDevice(camera, on: adapter, serviceUUID: nil, timeout: timeout)
        } catch .moduleNotFound {
            throw .notConnected("no camera \(camera) in range")
        } catch {
            throw .notConnected(error.description)
        }
    }

    public func connect() async throws(GATTError) -> any GATTLink {
        do throws(BlueZError) {
            let (client, device) = try await BlueZClient.link(to: camera, bus: bus, clock: clock, adapterName: adapterName,
                                                              scanningFor: nil, serviceUUID: primaryService, policy: policy)
            return await BlueZGATTLink(client: client, devicePath: device.path,
                                       options: BlueZGATTLink.Options(deviceWord: "camera", inProgress: policy.inProgress))
        } catch .notAModule {
            throw .failed("the device \(camera) offers no \(remoteProtocol.brand.displayName) remote service; "
                + "check that its Bluetooth remote setting is on")
        } catch .notPaired {
            throw .notPaired
        } catch {
            throw .failed(error.description)
        }
    }
}
