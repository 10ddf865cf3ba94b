import BlueZ
import DBus
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedTestSupport

/// The scan, pair and connect paths against python-dbusmock's `bluez5` template: BlueZ as others
/// emulate it, so the client is not only tested against this project's own fake.
@Suite("BlueZ client against python-dbusmock")
struct DBusMockTests {
    let service = UnleashedV1.gattLayout.service

    @Test("scan: the adapter is listed and the module is found with its advertisement")
    func scan() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        let adapter = try await client.adapter(named: "hci0")
        #expect(adapter.powered)
        try await client.startDiscovery(on: adapter, serviceUUID: service)
        let modules = await client.modules(on: adapter, serviceUUID: service)
        #expect(modules.map(\.address) == [MockBlueZ.address])
        #expect(modules.first?.name == "Unleashed 0011")
        #expect(modules.first?.rssi == -52)
        #expect(modules.first?.advertisement?.modelName == "simulated")
        #expect(modules.first?.advertisement?.state.contains(.pairingOpen) == true)
        let found = try await client.findModule("unleashed 0011", on: adapter, serviceUUID: service, timeout: .seconds(2))
        #expect(found.path == MockBlueZ.devicePath)
        await client.stopDiscovery(on: adapter)
        let filters = try await mock.calls("/org/bluez/hci0", "SetDiscoveryFilter")
        #expect(filters.first?.first?.dictionaryValue?["Transport"]?.stringValue == "le")
        #expect(filters.first?.first?.dictionaryValue?["UUIDs"]?.stringArrayValue == [service])
    }

    @Test("pair, connect, write a packet and receive a notification through the template")
    func pairConnectAndExchange() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        try await client.pair(MockBlueZ.devicePath, serviceUUID: service, agent: PairingAgent { _ in .accept })
        #expect(await client.tree.device(at: MockBlueZ.devicePath)?.paired == true)
        #expect(try await mock.calls("/org/bluez", "RegisterAgent").first?.first == .objectPath(PairingAgent.path))

        let provider = BlueZLinkProvider(bus: .address(mock.bus.address), adapterName: "hci0", module: MockBlueZ.address)
        try await provider.discover(timeout: .seconds(5))
        let link = try await provider.connect()
        let transport = try await ModuleTransport.open(over: link)
        #expect(transport.mtu == 247)
        try await transport.send([[0xA1, 0x02], [0x03]])
        let writes = try await mock.calls(MockBlueZ.commandPath, "WriteValue")
        #expect(writes.map { $0.first?.bytesValue } == [[0xA1, 0x02], [0x03]])
        #expect(writes.allSatisfy { $0.last?.dictionaryValue?["type"]?.stringValue == "command" })
        await #expect(throws: TransportError.packetTooLarge(size: 245, limit: 244)) {
            try await transport.send([Array(repeating: 0, count: 245)])
        }

        try await mock.updateProperties(MockBlueZ.eventPath, "org.bluez.GattCharacteristic1", ["Value": .bytes([9, 8, 7])])
        var iterator = transport.link.events.makeAsyncIterator()
        #expect(await iterator.next() == .value(transport.event, [9, 8, 7]))

        try await mock.updateProperties(MockBlueZ.devicePath, "org.bluez.Device1", ["Connected": .bool(false)])
        guard case .disconnected = await iterator.next() else {
            Issue.record("the link loss was not reported")
            return
        }
        await transport.close()
    }

    @Test("a write refused with InProgress (another client's write in flight) is sent again")
    func writeInProgress() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        try await mock.addMethod(MockBlueZ.commandPath, "org.bluez.GattCharacteristic1", "WriteValue", in: "aya{sv}", """
            self.writes = getattr(self, 'writes', 0) + 1
            if self.writes <= 2:
                raise dbus.exceptions.DBusException('Operation already in progress', name='org.bluez.Error.InProgress')
            """)
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        try await client.pair(MockBlueZ.devicePath, serviceUUID: service, agent: PairingAgent { _ in .accept })
        let link = try await BlueZLinkProvider(bus: .address(mock.bus.address), module: MockBlueZ.address).connect()
        let transport = try await ModuleTransport.open(over: link)
        // A one-packet write returns once handed on; the refusals come back and it goes again.
        try await transport.send([[0x01, 0x02]])
        var writes = try await mock.calls(MockBlueZ.commandPath, "WriteValue")
        // The calls are python-dbusmock's record, in its own process: polled.
        _ = try await eventually(every: .milliseconds(20)) {
            writes = try await mock.calls(MockBlueZ.commandPath, "WriteValue")
            return writes.count >= 3
        }
        #expect(writes.count == 3)
        #expect(writes.allSatisfy { $0.first?.bytesValue == [0x01, 0x02] })
        // A message of several packets waits for each reply, and goes again from the refused one.
        try await transport.send([[0x00, 0x01], [0x81, 0x02]])
        #expect(try await mock.calls(MockBlueZ.commandPath, "WriteValue").count == 5)
        await transport.close()
    }

    @Test("a write BlueZ refuses after send returned is reported on the link's events, and fails the waiting request")
    func writeRefusedLater() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        try await mock.addMethod(MockBlueZ.commandPath, "org.bluez.GattCharacteristic1", "WriteValue", in: "aya{sv}", """
            raise dbus.exceptions.DBusException('Write not permitted', name='org.bluez.Error.NotPermitted')
            """)
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        try await client.pair(MockBlueZ.devicePath, serviceUUID: service, agent: PairingAgent { _ in .accept })
        let link = try await BlueZLinkProvider(bus: .address(mock.bus.address), module: MockBlueZ.address).connect()
        let transport = try await ModuleTransport.open(over: link)
        let session = try ModuleSession(transport: transport, requestTimeout: .seconds(60))
        // The refusal is the answer, not a wait for the request's time limit: the error is the
        // refused write, where the time limit's would be a timeout.
        do {
            _ = try await session.start()
            Issue.record("a hello whose write was refused succeeded")
        } catch {
            guard case .transport(.failed(let reason)) = error else {
                Issue.record("expected the refused write as the cause, got \(error)")
                return
            }
            #expect(reason.contains("NotPermitted"))
        }
        await session.close()
    }

    @Test("connect retries le-connection-abort-by-local and succeeds on the third attempt")
    func abortedTwice() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        try await mock.connectResolves(failingFirst: 2)
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        var policy = BlueZClient.ConnectPolicy()
        policy.retries.initialDelay = .milliseconds(20)
        try await client.connect(MockBlueZ.devicePath, serviceUUID: service, policy: policy)
        #expect(try await mock.calls(MockBlueZ.devicePath, "Connect").count == 3)
        #expect(await client.tree.device(at: MockBlueZ.devicePath)?.servicesResolved == true)
    }

    @Test("a device whose resolved services lack the Unleashed service is 'not a module', and is disconnected")
    func notAModule() async throws {
        let mock = try await MockBlueZ()
        let path = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
        _ = try await mock.mock("AddDevice", [.string("hci0"), .string("AA:BB:CC:DD:EE:01"), .string("Headphones")])
        try await mock.addMethod(path, "org.bluez.Device1", "Connect",
            "self.UpdateProperties('org.bluez.Device1', {'Connected': dbus.Boolean(True), 'ServicesResolved': dbus.Boolean(True)})")
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        await #expect(throws: BlueZError.notAModule("the device has no Unleashed service (\(service))")) {
            try await client.connect(path, serviceUUID: service)
        }
        #expect(try await mock.calls(path, "Disconnect").count >= 1)
    }

    @Test("a refused pairing is reported as refused, with the agent's reason")
    func pairingRefused() async throws {
        let mock = try await MockBlueZ()
        try await mock.addModule()
        try await mock.addMethod(MockBlueZ.devicePath, "org.bluez.Device1", "Pair",
                                 "raise dbus.exceptions.DBusException('Authentication Rejected', name='org.bluez.Error.AuthenticationRejected')")
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        await #expect(throws: BlueZError.pairingRefused("Authentication Rejected")) {
            try await client.pair(MockBlueZ.devicePath, serviceUUID: service, agent: PairingAgent { _ in .accept })
        }
    }

    @Test("no adapter, and a powered-off adapter, give the errors that say what to do")
    func adapterErrors() async throws {
        let mock = try await MockBlueZ()
        let client = try await BlueZClient.open(bus: .address(mock.bus.address))
        defer { Task { await client.close() } }
        await #expect(throws: BlueZError.adapterNotFound("hci1", available: ["hci0"])) { try await client.adapter(named: "hci1") }
        try await mock.updateProperties("/org/bluez/hci0", "org.bluez.Adapter1", ["Powered": .bool(false)])
        try await client.wait(for: "the adapter to turn off", timeout: .seconds(5)) { snapshot in
            snapshot.tree.adapters.first?.powered == false ? .satisfied : .pending
        }
        await #expect(throws: BlueZError.adapterPoweredOff("hci0")) { try await client.adapter(named: nil) }
        _ = try await mock.mock("RemoveAdapter", [.string("hci0")])
        try await client.wait(for: "the adapter to go", timeout: .seconds(5)) { $0.tree.adapters.isEmpty ? .satisfied : .pending }
        await #expect(throws: BlueZError.noAdapter) { try await client.adapter(named: nil) }
    }
}
