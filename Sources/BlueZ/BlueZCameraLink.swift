public import CameraProtocols
public import CameraRemote
public import DBus
import Foundation

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
            return await BlueZGATTLink(client: client, devicePath: device.path, inProgress: policy.inProgress)
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

/// A camera's GATT client over BlueZ: `WriteValue`, `ReadValue` and `StartNotify` on the
/// characteristics found by service and UUID, values and the link's end read from this client's
/// own signals.
public final class BlueZGATTLink: GATTLink {
    public let events: AsyncStream<GATTLinkEvent>
    public let mtu: Int
    private let client: BlueZClient
    private let devicePath: String
    private let paths: [GATTCharacteristicID: String]
    private let pump: Task<Void, Never>
    private let inProgress: InProgressRetry

    init(client: BlueZClient, devicePath: String, inProgress: InProgressRetry) async {
        self.client = client
        self.inProgress = inProgress
        self.devicePath = devicePath
        let tree = await client.tree
        paths = tree.characteristics(of: devicePath)
        mtu = max(23, paths.values.compactMap { tree.properties($0, BlueZName.characteristic)?["MTU"]?.intValue }.max() ?? 23)
        let (events, sink) = AsyncStream.makeStream(of: GATTLinkEvent.self, bufferingPolicy: .bufferingNewest(4096))
        self.events = events
        let identifiers = Dictionary(paths.map { ($0.value, $0.key) }) { first, _ in first }
        let watched = Set(paths.values)
        // Read on the connection's thread: signals about other objects wake nobody.
        let signals = client.connection.signals {
            BlueZLinkSignal.read($0, devicePath: devicePath, characteristicPaths: watched, deviceWord: "camera")
        }
        pump = Task {
            var lost = "the link to bluetoothd closed"
            for await signal in signals {
                switch signal {
                case .value(let path, let value):
                    if let id = identifiers[path] { sink.yield(.value(id, value)) }
                case .lost(let reason):
                    lost = reason
                    sink.yield(.disconnected(reason: lost))
                    sink.finish()
                    return
                }
            }
            sink.yield(.disconnected(reason: lost))
            sink.finish()
        }
    }

    public func offers(_ characteristic: GATTCharacteristicID) async -> Bool {
        paths[characteristic] != nil
    }

    private func path(_ characteristic: GATTCharacteristicID) throws(GATTError) -> String {
        guard let path = paths[characteristic] else { throw .missing(characteristic) }
        return path
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError) {
        let path = try path(characteristic)
        let options = DBusValue.properties(["type": .string(withResponse ? "request" : "command")])
        try await retryingInProgress { () async throws(BlueZError) in
            try await client.call(path, BlueZName.characteristic, "WriteValue", [.bytes(value), options], timeout: .seconds(5))
        }
    }

    public func read(_ characteristic: GATTCharacteristicID) async throws(GATTError) -> [UInt8] {
        let path = try path(characteristic)
        var reply: [DBusValue] = []
        try await retryingInProgress { () async throws(BlueZError) in
            reply = try await client.call(path, BlueZName.characteristic, "ReadValue", [.properties([:])], timeout: .seconds(5))
        }
        guard let bytes = reply.first?.bytesValue else { throw .failed("BlueZ answered ReadValue without a value") }
        return bytes
    }

    public func subscribe(_ characteristic: GATTCharacteristicID) async throws(GATTError) {
        let path = try path(characteristic)
        try await retryingInProgress { () async throws(BlueZError) in
            try await client.call(path, BlueZName.characteristic, "StartNotify", timeout: .seconds(10))
        }
    }

    public func close() async {
        pump.cancel()
        await client.disconnect(devicePath)
        await client.close()
    }

    /// Runs `operation`, tried again while BlueZ answers `InProgress` (one read and one write
    /// in flight per characteristic), as the provider's policy says, on the client's clock.
    private func retryingInProgress(_ operation: () async throws(BlueZError) -> Void) async throws(GATTError) {
        do throws(BlueZError) {
            try await inProgress.run(on: client.clock, isInProgress: InProgressRetry.isInProgress) { _ async throws(BlueZError) in
                try await operation()
            }
        } catch {
            throw GATTError(error)
        }
    }
}

extension GATTError {
    /// BlueZ's answer to a GATT call as the camera's refusal or the link's state. BlueZ reports
    /// an ATT error it has no D-Bus name for as `Failed` "Operation failed with ATT error: 0xNN",
    /// and the authentication errors as `NotPermitted` "Not paired" (src/gatt-client.c).
    init(_ error: BlueZError) {
        guard case .dbus(let failure) = error else {
            self = .failed(error.description)
            return
        }
        let message = failure.message
        switch failure.name {
        case BlueZName.Error.failed:
            if let range = message.range(of: "ATT error: 0x"),
               let code = UInt8(message[range.upperBound...].prefix(2), radix: 16) {
                self = .refused(ATTError(code))
            } else if message == "Not connected" {
                self = .notConnected(message)
            } else {
                self = .failed(message)
            }
        case BlueZName.Error.notPermitted:
            self = message.contains("Not paired") ? .notPaired : .refused(.writeNotPermitted)
        case BlueZName.Error.notSupported:
            self = .refused(.requestNotSupported)
        case BlueZName.Error.notConnected, DBusError.unknownObjectName, DBusError.serviceUnknownName, DBusError.disconnectedName:
            self = .notConnected(message.isEmpty ? failure.name : message)
        case DBusError.noReplyName:
            self = .timedOut("the camera")
        default:
            self = .failed(message.isEmpty ? failure.name : message)
        }
    }
}
