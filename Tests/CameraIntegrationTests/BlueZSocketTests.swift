import BlueZ
import DBus
import FakeBlueZ
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedTestSupport

/// The module's link over the sockets BlueZ hands out (`AcquireWrite`, `AcquireNotify`), against
/// the fake bluetoothd, which makes them as BlueZ's `gatt-client.c` does; and the same link over
/// D-Bus messages when asked to use none. (python-dbusmock's template has no such sockets: the
/// client's fallback to messages is what `DBusMockTests` drives.)
@Suite("BlueZ link over acquired sockets")
struct BlueZSocketTests {
    static let module = "F0:5E:D0:00:00:01"

    /// A private bus with the fake and its one module, paired.
    static func fake(mtu: Int? = nil) async throws -> (PrivateBus, FakeBlueZ) {
        var configuration = FakeBlueZ.Configuration(modules: 1, timing: .quick)
        if let mtu { configuration.mtu = mtu }
        let bluez = try await InProcessBlueZ.start(configuration)
        let (bus, fake) = (bluez.bus, bluez.fake)
        let client = try await BlueZClient.open(bus: .address(bus.address))
        let adapter = try await client.adapter(named: nil)
        let device = try await client.findModule(module, on: adapter, serviceUUID: UnleashedV1.gattLayout.service, timeout: .seconds(30))
        try await client.pair(device.path, serviceUUID: UnleashedV1.gattLayout.service, agent: PairingAgent { _ in .accept })
        await client.close()
        return (bus, fake)
    }

    /// The Command and Event characteristics' lock properties, as another client on the bus sees them.
    static func acquired(_ bus: PrivateBus) async throws -> (write: Bool?, notify: Bool?) {
        let observer = try await BlueZClient.open(bus: .address(bus.address))
        defer { Task { await observer.close() } }
        let tree = await observer.tree
        let device = try #require(tree.devices(on: "/org/bluez/hci0").first { $0.address == module })
        let layout = UnleashedV1.gattLayout
        let command = try #require(tree.characteristic(layout.command, service: layout.service, device: device.path))
        let event = try #require(tree.characteristic(layout.event, service: layout.service, device: device.path))
        return (tree.properties(command, "org.bluez.GattCharacteristic1")?["WriteAcquired"]?.boolValue,
                tree.properties(event, "org.bluez.GattCharacteristic1")?["NotifyAcquired"]?.boolValue)
    }

    /// A link from `provider` with the module's characteristics subscribed to, and its transport.
    static func opened(_ provider: BlueZLinkProvider) async throws -> (BlueZGATTLink, ModuleTransport) {
        let link = try #require(try await provider.connect() as? BlueZGATTLink)
        return (link, try await ModuleTransport.open(over: link))
    }

    /// A link from `provider`, and a session over it that has said hello.
    static func linked(_ provider: BlueZLinkProvider, requestTimeout: Duration = .seconds(10)) async throws
        -> (BlueZGATTLink, ModuleSession)
    {
        let (link, transport) = try await opened(provider)
        let session = try ModuleSession(transport: transport, requestTimeout: requestTimeout)
        _ = try await session.start()
        return (link, session)
    }

    @Test("requests go out on AcquireWrite's socket and answers come on AcquireNotify's; the next link takes them again")
    func sockets() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let provider = BlueZLinkProvider(bus: .address(bus.address), module: Self.module)
        let (link, session) = try await Self.linked(provider)
        #expect(link.path == .sockets)
        for _ in 0..<50 { _ = try await session.request(.getStatus) }
        let held = try await Self.acquired(bus)
        #expect(held.write == true && held.notify == true, "while the link is open BlueZ shows both sockets held: \(held)")
        await session.close()
        // Closed, the link let both go: the next one takes them again rather than falling back.
        let (again, nextSession) = try await Self.linked(provider)
        #expect(again.path == .sockets)
        await nextSession.close()
    }

    @Test("a camera over BlueZ runs on its link's thread, which reads the notifications: a caller preferring it has every answer there")
    func linkThread() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let provider = BlueZLinkProvider(bus: .address(bus.address), module: Self.module)
        let camera = try await ModuleCamera(connection: ModuleConnection(provider: provider), name: Self.module)
        let thread = try #require(camera.executor)
        #expect(thread === provider.executor)
        /// Where code isolated to the camera runs.
        func onCameraThread(_ camera: isolated ModuleCamera) -> Bool { thread.isCurrent }
        #expect(await onCameraThread(camera))
        let answeredOnThread = try await withTaskExecutorPreference(thread) {
            var all = true
            for _ in 0..<50 {
                _ = try await camera.value(of: .iso)
                all = all && thread.isCurrent
            }
            return all
        }
        #expect(answeredOnThread)
        // A caller on the shared pool is answered too, with a hand-over each way.
        #expect(try await camera.value(of: .iso) == camera.value(of: .iso))
        await camera.close()
    }

    @Test("a link lost while on sockets ends the session's requests at once, as the notification socket hangs up")
    func lostLink() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let (link, session) = try await Self.linked(BlueZLinkProvider(bus: .address(bus.address), module: Self.module),
                                                         requestTimeout: .seconds(30))
        #expect(link.path == .sockets)
        #expect(await fake.loseLink(address: Self.module, for: .seconds(60)))
        var failure: SessionError?
        // The loss may reach the session just after a request is sent: ask until one fails.
        _ = await eventually(every: .milliseconds(10)) {
            do throws(SessionError) {
                _ = try await session.request(.getStatus)
            } catch {
                failure = error
            }
            return failure != nil
        }
        // The hang-up ended the request, not its 30 s limit: a timeout would fail otherwise.
        switch failure {
        case .disconnected?, .transport(.notConnected)?: break
        default: Issue.record("expected the link's loss, got \(String(describing: failure))")
        }
        await session.close()
    }

    @Test("a notification socket that ends with the link still up fails the session at once; the next link takes notifications as messages")
    func notifySocketEndsEarly() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let provider = BlueZLinkProvider(bus: .address(bus.address), module: Self.module)
        let (link, transport) = try await Self.opened(provider)
        #expect(link.path == .sockets)
        // Closed before it delivered anything, as some devices' sockets are on a real BlueZ.
        #expect(await fake.dropNotifySockets(address: Self.module))
        let session = try ModuleSession(transport: transport, requestTimeout: .seconds(30))
        // The socket's end, not the 30 s limit, ends the hello: the error says which.
        do throws(SessionError) {
            _ = try await session.start()
            Issue.record("a hello answered with no notification socket")
        } catch {
            if case .disconnected(let reason) = error {
                #expect(reason.contains("notification socket"), "\(reason)")
            } else {
                Issue.record("expected the link's end, got \(error)")
            }
        }
        await session.close()

        let (next, nextSession) = try await Self.linked(provider)
        #expect(next.path == .mixed, "writes on the socket, notifications as messages")
        for _ in 0..<10 { _ = try await nextSession.request(.getStatus) }
        await nextSession.close()
    }

    @Test("an empty notification on the socket is a packet the session reports and gets past, not the link's end")
    func emptyNotification() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let (link, session) = try await Self.linked(BlueZLinkProvider(bus: .address(bus.address), module: Self.module))
        #expect(link.path == .sockets)
        #expect(await fake.notifyEvent(address: Self.module, value: []))
        var reported: SessionEvent?
        for await event in session.events {
            reported = event
            break
        }
        guard case .protocolError(let error)? = reported else {
            Issue.record("expected the empty packet reported, got \(String(describing: reported))")
            return
        }
        #expect("\(error)".contains("empty"), "\(error)")
        for _ in 0..<5 { _ = try await session.request(.getStatus) }
        await session.close()
    }

    @Test("at an MTU of 517 a packet on the write socket is held to 512 bytes, the most BlueZ reads from it")
    func largeMTU() async throws {
        let (bus, fake) = try await Self.fake(mtu: 517)
        defer { Task { await fake.stop() } }
        let (link, transport) = try await Self.opened(BlueZLinkProvider(bus: .address(bus.address), module: Self.module))
        #expect(link.path == .sockets)
        #expect(transport.mtu == 515)
        await #expect(throws: TransportError.packetTooLarge(size: 513, limit: 512)) {
            try await transport.send([Array(repeating: 0, count: 513)])
        }
        let session = try ModuleSession(transport: transport, requestTimeout: .seconds(10))
        _ = try await session.start()
        await session.close()
    }

    @Test("asked to use no sockets, the link writes with WriteValue and reads Value signals, and holds no lock")
    func messages() async throws {
        let (bus, fake) = try await Self.fake()
        defer { Task { await fake.stop() } }
        let (link, session) = try await Self.linked(BlueZLinkProvider(bus: .address(bus.address), module: Self.module,
                                                                           acquireSockets: false))
        #expect(link.path == .messages)
        for _ in 0..<20 { _ = try await session.request(.getStatus) }
        let held = try await Self.acquired(bus)
        #expect(held.write == false && held.notify == false, "no socket was taken: \(held)")
        await session.close()
    }
}
