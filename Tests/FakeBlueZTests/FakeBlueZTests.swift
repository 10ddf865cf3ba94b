import DBus
import FakeBlueZ
import Foundation
import Synchronization
import Testing
import UnleashedProtocol
import UnleashedTestSupport

@Suite("The fake org.bluez, seen from a client on the bus", .timeLimit(.minutes(1)))
struct FakeBlueZTests {
    typealias Rig = FakeBlueZRig

    @Test("GetManagedObjects shows the adapter, then the modules once someone discovers, with BlueZ's types")
    func discovery() async throws {
        let rig = try await Rig()
        let before = try await rig.managedObjects()
        #expect(before.keys.sorted() == ["/org/bluez", Rig.adapter])
        let adapter = try #require(before[Rig.adapter]?["org.bluez.Adapter1"]?.dictionaryValue)
        #expect(adapter["Powered"]?.unwrapped == .bool(true))
        #expect(adapter["Discovering"]?.unwrapped == .bool(false))
        #expect(adapter["Class"]?.unwrapped.signature == "u")
        #expect(adapter["Roles"]?.unwrapped.signature == "as")

        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [
            Rig.options(["UUIDs": .strings(["7A4E0001-C3D2-4F1B-8E5A-2B9D6F0C1E37"]), "Transport": .string("le"),
                         "DuplicateData": .bool(false)]),
        ])
        try await rig.discover()
        let second = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery")
        #expect(second == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
        try await rig.signals.wait(for: .changed(Rig.adapter, "Discovering", .bool(true)))

        let objects = try await rig.managedObjects()
        let device = try #require(objects[Rig.firstDevice]?["org.bluez.Device1"]?.dictionaryValue)
        #expect(device["Address"]?.unwrapped == .string(Rig.firstAddress))
        #expect(device["AddressType"]?.unwrapped == .string("random"))
        #expect(device["Name"]?.unwrapped == .string("Unleashed 0001"))
        #expect(device["Alias"]?.unwrapped == .string("Unleashed 0001"))
        #expect(device["RSSI"]?.unwrapped.signature == "n")
        #expect(device["Adapter"]?.unwrapped == .objectPath(Rig.adapter))
        #expect(device["UUIDs"]?.unwrapped == .strings(["7a4e0001-c3d2-4f1b-8e5a-2b9d6f0c1e37"]))
        for flag in ["Connected", "Paired", "ServicesResolved", "Trusted", "Blocked", "Bonded"] {
            #expect(device[flag]?.unwrapped == .bool(false), "\(flag)")
        }
        let manufacturer = try #require(device["ManufacturerData"]?.unwrapped)
        #expect(manufacturer.signature == "a{qv}")
        let advertised = try #require(manufacturer.integerKeyedDictionaryValue?[0x03EF]?.bytesValue)
        let advertisement = try #require(ModuleAdvertisement(manufacturerData: advertised))
        #expect(advertisement.model == .simulated)
        #expect(advertisement.state.contains(.cameraAttached))
        #expect(objects["/org/bluez/hci0/dev_F0_5E_D0_00_00_02"] != nil)

        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StopDiscovery")
        try await rig.signals.wait(for: .changed(Rig.adapter, "Discovering", .bool(false)))
        try await rig.signals.wait(for: .invalidated(Rig.firstDevice, "RSSI"))
        let again = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "StopDiscovery")
        #expect(again?.name == "org.bluez.Error.NotReady")
        await rig.stop()
    }

    @Test("RSSI is reported again while discovering")
    func rssiUpdates() async throws {
        let rig = try await Rig()
        try await rig.discover()
        let first = try await rig.signals.wait(for: .interfacesAdded(Rig.firstDevice))
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "RSSI"), from: first)
        await rig.stop()
    }

    @Test("a discovery filter for another service, or for BR/EDR, finds no module")
    func filterExcludes() async throws {
        let rig = try await Rig()
        let other = try await DBusConnection.open(.address(rig.bus.address))
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                           [Rig.options(["UUIDs": .strings(["180f"])])])
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                           [Rig.options(["Transport": .string("bredr")])], on: other)
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery", on: other)
        // Several rounds of advertisements go by.
        let rounds = await rig.fake.statistics["advertisingRounds"] ?? 0
        try #require(await eventually { (await rig.fake.statistics["advertisingRounds"] ?? 0) >= rounds + 3 })
        #expect(try await rig.managedObjects().keys.sorted() == ["/org/bluez", Rig.adapter])
        other.close()
        await rig.stop()
    }

    @Test("Connect answers with Connected, then the GATT objects appear, then ServicesResolved; Disconnect undoes it in order")
    func connectAndDisconnect() async throws {
        let rig = try await Rig()
        try await rig.connect()
        let connected = try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(true)))
        let characteristic = try await rig.signals.wait(for: .interfacesAdded(Rig.event))
        let resolved = try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(true)))
        #expect(connected < characteristic && characteristic < resolved)

        let objects = try await rig.managedObjects()
        let event = try #require(objects[Rig.event]?["org.bluez.GattCharacteristic1"]?.dictionaryValue)
        #expect(event["UUID"]?.unwrapped == .string("7a4e0003-c3d2-4f1b-8e5a-2b9d6f0c1e37"))
        #expect(event["Service"]?.unwrapped == .objectPath(Rig.service))
        #expect(event["Flags"]?.unwrapped == .strings(["notify"]))
        #expect(event["Notifying"]?.unwrapped == .bool(false))
        #expect(event["Handle"]?.unwrapped == .uint16(0x000D))
        #expect(event["MTU"]?.unwrapped == .uint16(247))
        #expect(event["Value"]?.unwrapped.signature == "ay")
        let command = try #require(objects[Rig.command]?["org.bluez.GattCharacteristic1"]?.dictionaryValue)
        #expect(command["Flags"]?.unwrapped == .strings(["write-without-response", "write"]))
        #expect(command["Notifying"] == nil)
        let service = try #require(objects[Rig.service]?["org.bluez.GattService1"]?.dictionaryValue)
        #expect(service["Primary"]?.unwrapped == .bool(true))
        #expect(service["Device"]?.unwrapped == .objectPath(Rig.firstDevice))
        #expect(objects["/org/bluez/hci0/dev_F0_5E_D0_00_00_01/service0016/char0017"] != nil)

        let again = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Connect")
        #expect(again?.name == "org.bluez.Error.AlreadyConnected")

        let mark = rig.signals.all.count
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Disconnect")
        let unresolved = try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(false)), from: mark)
        let disconnected = try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(false)), from: mark)
        let removed = try await rig.signals.wait(for: .interfacesRemoved(Rig.event), from: mark)
        #expect(unresolved < disconnected && disconnected < removed)
        #expect(try await rig.managedObjects()[Rig.event] == nil)
        let notConnected = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Disconnect")
        #expect(notConnected?.name == "org.bluez.Error.NotConnected")
        let gone = await rig.failure(Rig.event, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(gone?.name == DBusError.unknownObjectName)

        let reply = try await rig.call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        #expect(reply.map(\.signature) == ["a{oa{sa{sv}}}"])
        for signal in rig.signals.all where signal.interface == "org.freedesktop.DBus.ObjectManager" {
            #expect(signal.path == "/")
            #expect(signal.signature == (signal.member == "InterfacesAdded" ? "oa{sa{sv}}" : "oas"))
        }
        for signal in rig.signals.all where signal.interface == "org.freedesktop.DBus.Properties" {
            #expect(signal.member == "PropertiesChanged" && signal.signature == "sa{sv}as")
        }
        await rig.stop()
    }

    @Test("a hello written to Command is answered on Event as Value changes, once paired and subscribed (MTU 23: several packets each way)")
    func roundTrip() async throws {
        let rig = try await Rig { $0.mtu = 23 }
        try await rig.discover()
        try await rig.call(Rig.firstDevice, "org.freedesktop.DBus.Properties", "Set",
                           [.string("org.bluez.Device1"), .string("Trusted"), .variant(.bool(true))])
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "Trusted", .bool(true)))
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Pair")
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(true)))
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Paired") == .bool(true))
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Bonded") == .bool(true))
        try await rig.call(Rig.event, "org.bluez.GattCharacteristic1", "StartNotify")
        try await rig.call(Rig.event, "org.bluez.GattCharacteristic1", "StartNotify")
        try await rig.signals.wait(for: .changed(Rig.event, "Notifying", .bool(true)))

        let mtu = try #require(try await rig.property(Rig.command, "org.bluez.GattCharacteristic1", "MTU")?.intValue)
        #expect(mtu == 23)
        let hello = Message(.request(.hello), id: 1, fields: Fields {
            $0.minProtocolVersion = 1
            $0.maxProtocolVersion = 1
            $0.clientName = "fake-bluez-test"
        })
        let mark = rig.signals.all.count
        for packet in try UnleashedV1().packets(for: hello, mtu: mtu) {
            try await rig.call(Rig.command, "org.bluez.GattCharacteristic1", "WriteValue",
                               [.bytes(packet), Rig.options(["type": .string("command")])])
        }
        var receiver = try UnleashedV1().makeReceiver(mtu: mtu)
        var position = mark
        var response: Message?
        while response == nil {
            position = try await rig.signals.wait(for: .changed(Rig.event, "Value"), from: position) + 1
            let value = rig.signals.all[position - 1].body[1].dictionaryValue?["Value"]?.bytesValue ?? []
            response = receiver.receive(value).message
        }
        #expect(response?.kind == .response(.hello, .ok))
        #expect(response?.id == 1)
        #expect(response?.fields.protocolVersion == 1)

        let stats = try await rig.control("Stats").first?.dictionaryValue ?? [:]
        #expect((stats["writes"]?.intValue ?? 0) >= 2)
        #expect((stats["notifications"]?.intValue ?? 0) >= 2)
        #expect(stats["pairCalls"]?.intValue == 1)
        try await rig.call(Rig.event, "org.bluez.GattCharacteristic1", "StopNotify")
        let stopped = await rig.failure(Rig.event, "org.bluez.GattCharacteristic1", "StopNotify")
        #expect(stopped == DBusError(name: "org.bluez.Error.Failed", message: "No notify session started"))
        await rig.stop()
    }

    @Test("before pairing, Command and Event are refused but Info, Battery and Device Information read")
    func securityBeforePairing() async throws {
        let rig = try await Rig()
        try await rig.connect()
        let write = await rig.failure(Rig.command, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0]), Rig.options([:])])
        #expect(write == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        let notify = await rig.failure(Rig.event, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(notify == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        let info = try await rig.call(Rig.info, "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options([:])])
        let moduleInfo = try ModuleInfo(decoding: try #require(info.first?.bytesValue))
        #expect(moduleInfo.serialNumber == "SIM0001")
        let tail = try await rig.call(Rig.info, "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options(["offset": .uint16(2)])])
        #expect(tail.first?.bytesValue == Array(try moduleInfo.encoded().dropFirst(2)))
        let battery = try await rig.call(Rig.battery, "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options([:])])
        #expect(battery.first?.bytesValue == [100])
        let manufacturer = try await rig.call("/org/bluez/hci0/dev_F0_5E_D0_00_00_01/service0016/char0017",
                                              "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options([:])])
        #expect(manufacturer.first?.bytesValue == Array("Foolography".utf8))
        let readCommand = await rig.failure(Rig.command, "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options([:])])
        #expect(readCommand?.name == "org.bluez.Error.NotPermitted")
        await rig.stop()
    }

    @Test("a second request write while one is in flight gets InProgress; a read does not block a write")
    func inProgress() async throws {
        let rig = try await Rig { $0.timing.operationHold = .milliseconds(800) }
        try await rig.pair()
        async let first: DBusError? = rig.outcome(Rig.command, "WriteValue", [.bytes([0x00, 0x00, 0x01]), Rig.options(["type": .string("request")])])
        async let second: DBusError? = rig.outcome(Rig.command, "WriteValue", [.bytes([0x00, 0x00, 0x01]), Rig.options([:])])
        async let read: DBusError? = rig.outcome(Rig.info, "ReadValue", [Rig.options([:])])
        async let secondRead: DBusError? = rig.outcome(Rig.info, "ReadValue", [Rig.options([:])])
        let outcomes = await [first, second]
        #expect(outcomes.filter { $0 == nil }.count == 1)
        #expect(outcomes.contains(DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")))
        let reads = await [read, secondRead]
        #expect(reads.filter { $0 == nil }.count == 1)
        #expect(reads.contains { $0?.name == "org.bluez.Error.InProgress" })
        await rig.stop()
    }

    @Test("connect-abort: Connected goes true then false and Connect fails as BlueZ's abort-by-local; the next attempt works")
    func connectAbort() async throws {
        let rig = try await Rig { $0.faults.connectAborts = 1 }
        try await rig.discover()
        let aborted = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Connect")
        #expect(aborted == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        let up = try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(true)))
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(false)), from: up)
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Connect")
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(true)))
        #expect(await rig.fake.statistics["connectAborts"] == 1)
        #expect(await rig.fake.statistics["connectCalls"] == 2)
        await rig.stop()
    }

    @Test("a connect already pending is InProgress; Disconnect cancels it")
    func pendingConnect() async throws {
        let rig = try await Rig { $0.timing.linkDelay = .seconds(5) }
        try await rig.discover()
        async let connect: DBusError? = rig.outcome(Rig.firstDevice, "Connect", [], interface: "org.bluez.Device1")
        // The first Connect is pending once the fake has taken it.
        try #require(await eventually { await rig.fake.statistics["connectCalls"] == 1 })
        let second = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Connect")
        #expect(second?.name == "org.bluez.Error.InProgress")
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Disconnect")
        #expect(await connect == DBusError(name: "org.bluez.Error.Failed", message: "Cancelled"))
        await rig.stop()
    }

    @Test("LoseLink drops the link at once; while out of range Connect fails after the page timeout")
    func linkLoss() async throws {
        let rig = try await Rig()
        try await rig.connect()
        let mark = rig.signals.all.count
        try await rig.control("LoseLink", [.string(Rig.firstAddress.lowercased()), .uint32(10_000)])
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(false)), from: mark)
        try await rig.signals.wait(for: .interfacesRemoved(Rig.event), from: mark)
        let failed = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Connect")
        #expect(failed == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(await rig.fake.statistics["pageTimeouts"] == 1, "the attempt ran to the page timeout")
        let unknown = await #expect(throws: DBusError.self) { try await rig.control("LoseLink", [.string("00:00:00:00:00:00"), .uint32(1)]) }
        #expect(unknown?.name == "org.unleashed.Simulator.Error.UnknownModule")
        await rig.stop()
    }

    @Test("the plan's linkloss drops the link after the first connection; resolve-delay holds ServicesResolved back")
    func plannedFaults() async throws {
        let plan = try FakeBlueZ.FaultPlan(parsing: "linkloss=5s@400ms,resolve-delay=250ms")
        let rig = try await Rig { $0.faults = plan }
        try await rig.discover()
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Connect")
        let resolved = try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(true)))
        #expect(await rig.fake.statistics["delayedResolves"] == 1, "resolved after the plan's delay, not the adapter's")
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "Connected", .bool(false)), from: resolved)
        #expect(await rig.fake.statistics["linkLosses"] == 1)
        await rig.stop()
    }

    @Test("after discovery stops, an unpaired device goes after the TemporaryTimeout; a paired one stays")
    func temporaryDevices() async throws {
        let rig = try await Rig { $0.timing.temporaryTimeout = .milliseconds(200) }
        try await rig.pair()
        let second = "/org/bluez/hci0/dev_F0_5E_D0_00_00_02"
        try await rig.signals.wait(for: .interfacesAdded(second))
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Disconnect")
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StopDiscovery")
        try await rig.signals.wait(for: .interfacesRemoved(second))
        #expect(try await rig.managedObjects()[Rig.firstDevice] != nil)
        await rig.stop()
    }

    @Test("a bluetoothd restart drops org.bluez, then brings back the adapter and the paired device, disconnected")
    func restart() async throws {
        let rig = try await Rig()
        try await rig.pair()
        let oldOwner = try await rig.client.nameOwner(FakeBlueZ.busName)
        try await rig.control("RestartBluetoothd", [.uint32(200)])
        let lost = try await rig.signals.wait(for: .ownerChanged(old: true))
        try await rig.signals.wait(for: .ownerChanged(old: false), from: lost)
        let newOwner = try await rig.client.nameOwner(FakeBlueZ.busName)
        #expect(newOwner != nil && newOwner != oldOwner)
        let objects = try await rig.managedObjects()
        let device = try #require(objects[Rig.firstDevice]?["org.bluez.Device1"]?.dictionaryValue)
        #expect(device["Paired"]?.unwrapped == .bool(true))
        #expect(device["Connected"]?.unwrapped == .bool(false))
        #expect(objects[Rig.event] == nil)
        #expect(objects["/org/bluez/hci0/dev_F0_5E_D0_00_00_02"] == nil)
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Connect")
        try await rig.signals.wait(for: .changed(Rig.firstDevice, "ServicesResolved", .bool(true)), from: lost)
        #expect(await rig.fake.statistics["restarts"] == 1)
        await rig.stop()
    }

    @Test("refuse-pairing rejects Pair; the device stays unpaired")
    func pairingRefused() async throws {
        let rig = try await Rig()
        try await rig.control("SetFaults", [.string("refuse-pairing")])
        try await rig.discover()
        let refused = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Pair")
        #expect(refused?.name == "org.bluez.Error.AuthenticationRejected")
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Paired") == .bool(false))
        let badPlan = await #expect(throws: DBusError.self) { try await rig.control("SetFaults", [.string("connect-abort=many")]) }
        #expect(badPlan?.name == "org.unleashed.Simulator.Error.InvalidFaults")
        await rig.stop()
    }

    @Test("confirm pairing asks the client's agent with the module's passkey; a refusal or no agent fails Pair")
    func confirmPairing() async throws {
        let rig = try await Rig { $0.pairing = .confirm }
        try await rig.discover()
        let noAgent = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Pair")
        #expect(noAgent?.name == "org.bluez.Error.AuthenticationFailed")

        let agent = try await DBusConnection.open(.address(rig.bus.address))
        let accept = Atomic<Bool>(false)
        let asked = Atomic<UInt32>(0)
        agent.handleMethodCalls { call in
            guard call.message.interface == "org.bluez.Agent1", call.message.member == "RequestConfirmation" else {
                return call.fail(DBusError.unknownMethodName, "")
            }
            asked.store(UInt32(call.message.body[1].intValue ?? 0), ordering: .relaxed)
            if accept.load(ordering: .relaxed) { call.reply() } else { call.fail("org.bluez.Error.Rejected", "no") }
        }
        try await rig.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                           [.objectPath("/test/agent"), .string("DisplayYesNo")], on: agent)
        try await rig.call("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", [.objectPath("/test/agent")], on: agent)
        let twice = await rig.failure("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                                      [.objectPath("/test/agent"), .string("DisplayYesNo")], on: agent)
        #expect(twice?.name == "org.bluez.Error.AlreadyExists")

        let rejected = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Pair")
        #expect(rejected?.name == "org.bluez.Error.AuthenticationRejected")
        accept.store(true, ordering: .relaxed)
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Pair")
        let passkey = try await rig.control("Passkey", [.string(Rig.firstAddress)]).first
        #expect(passkey == .uint32(asked.load(ordering: .relaxed)))
        #expect(await rig.fake.passkey(address: Rig.firstAddress) == asked.load(ordering: .relaxed))
        let paired = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Pair")
        #expect(paired?.name == "org.bluez.Error.AlreadyExists")
        agent.close()
        await rig.stop()
    }

    @Test("CancelPairing ends a pairing waiting on the agent, and tells the agent")
    func cancelPairing() async throws {
        let rig = try await Rig { $0.pairing = .confirm }
        try await rig.discover()
        let agent = try await DBusConnection.open(.address(rig.bus.address))
        let held = Mutex<[DBusIncomingCall]>([])
        agent.handleMethodCalls { call in
            held.withLock { $0.append(call) }
            if call.message.member == "Cancel" { call.reply() }
        }
        try await rig.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                           [.objectPath("/test/agent"), .string("DisplayYesNo")], on: agent)
        async let pair = rig.outcome(Rig.firstDevice, "Pair", [], interface: "org.bluez.Device1", on: agent)
        try #require(await eventually { held.withLock { $0.contains { $0.message.member == "RequestConfirmation" } } })
        let missing = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath("/org/bluez/hci0/dev_F0_5E_D0_00_00_09")])
        #expect(missing?.name == "org.bluez.Error.DoesNotExist")
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "CancelPairing")
        #expect(await pair?.name == "org.bluez.Error.AuthenticationCanceled")
        let none = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "CancelPairing")
        #expect(none?.name == "org.bluez.Error.DoesNotExist")
        try #require(await eventually { held.withLock { $0.contains { $0.message.member == "Cancel" } } })
        agent.close()
        await rig.stop()
    }

    @Test("passkey pairing compares what the agent enters with the module's passkey")
    func passkeyPairing() async throws {
        let rig = try await Rig { $0.pairing = .passkey }
        try await rig.discover()
        let passkey = try #require(await rig.fake.passkey(address: Rig.firstAddress))
        let agent = try await DBusConnection.open(.address(rig.bus.address))
        let entered = Atomic<UInt32>(passkey &+ 1)
        agent.handleMethodCalls { call in call.reply([.uint32(entered.load(ordering: .relaxed))]) }
        try await rig.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                           [.objectPath("/test/agent"), .string("KeyboardOnly")], on: agent)
        let wrong = await rig.failure(Rig.firstDevice, "org.bluez.Device1", "Pair", on: agent)
        #expect(wrong?.name == "org.bluez.Error.AuthenticationFailed")
        entered.store(passkey, ordering: .relaxed)
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Pair", on: agent)
        agent.close()
        await rig.stop()
    }

    @Test("bad calls get BlueZ's errors, never a crash: signatures, option types, unknown objects, read-only properties, huge values")
    func invalidArguments() async throws {
        let rig = try await Rig()
        try await rig.pair()
        let signature = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery", [.string("now")])
        #expect(signature?.name == DBusError.unknownMethodName)
        let offset = await rig.failure(Rig.info, "org.bluez.GattCharacteristic1", "ReadValue", [Rig.options(["offset": .uint32(0)])])
        #expect(offset == DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call"))
        let type = await rig.failure(Rig.command, "org.bluez.GattCharacteristic1", "WriteValue",
                                     [.bytes([0]), Rig.options(["type": .int32(1)])])
        #expect(type?.name == "org.bluez.Error.InvalidArguments")
        let filter = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [Rig.options(["RSSI": .int32(-60)])])
        #expect(filter?.name == "org.bluez.Error.InvalidArguments")
        let unknownKey = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [Rig.options(["Colour": .string("red")])])
        #expect(unknownKey?.name == "org.bluez.Error.InvalidArguments")
        let unknownObject = await rig.failure("/org/bluez/hci7", "org.bluez.Adapter1", "StartDiscovery")
        #expect(unknownObject?.name == DBusError.unknownObjectName)
        let unknownMethod = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "Explode")
        #expect(unknownMethod?.name == DBusError.unknownMethodName)
        let readOnly = await rig.failure(Rig.adapter, "org.freedesktop.DBus.Properties", "Set",
                                         [.string("org.bluez.Adapter1"), .string("Address"), .variant(.string("x"))])
        #expect(readOnly?.name == "org.freedesktop.DBus.Error.PropertyReadOnly")
        let wrongType = await rig.failure(Rig.adapter, "org.freedesktop.DBus.Properties", "Set",
                                          [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.string("yes"))])
        #expect(wrongType?.name == DBusError.invalidArgsName)
        let noProperty = await rig.failure(Rig.adapter, "org.freedesktop.DBus.Properties", "Get", [.string("org.bluez.Adapter1"), .string("Colour")])
        #expect(noProperty?.name == DBusError.invalidArgsName)
        let huge = await rig.failure(Rig.command, "org.bluez.GattCharacteristic1", "WriteValue",
                                     [.bytes(Array(repeating: 7, count: 100_000)), Rig.options(["type": .string("command")])])
        #expect(huge == DBusError(name: "org.bluez.Error.Failed", message: "Failed to initiate write"))
        let long = await rig.failure(Rig.command, "org.bluez.GattCharacteristic1", "WriteValue",
                                     [.bytes(Array(repeating: 7, count: 300)), Rig.options(["type": .string("request")])])
        #expect(long?.name == "org.bluez.Error.NotSupported")
        let notify = await rig.failure(Rig.info, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(notify?.name == "org.bluez.Error.NotSupported")
        let removeOther = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath("/org/bluez/hci0/dev_00")])
        #expect(removeOther?.name == "org.bluez.Error.DoesNotExist")
        let xml = try await rig.call(Rig.firstDevice, "org.freedesktop.DBus.Introspectable", "Introspect").first?.stringValue ?? ""
        #expect(xml.contains("<interface name=\"org.bluez.Device1\">") && xml.contains("<node name=\"service000a\"/>"))
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Connected") == .bool(true))
        await rig.stop()
    }

    @Test("a client leaving the bus ends its discovery and notify sessions but not the connection")
    func clientLeaves() async throws {
        let rig = try await Rig()
        try await rig.pair()
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StopDiscovery")
        let other = try await DBusConnection.open(.address(rig.bus.address))
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery", on: other)
        try await rig.call(Rig.event, "org.bluez.GattCharacteristic1", "StartNotify", on: other)
        try await rig.signals.wait(for: .changed(Rig.event, "Notifying", .bool(true)))
        let mark = rig.signals.all.count
        other.close()
        try await rig.signals.wait(for: .changed(Rig.event, "Notifying", .bool(false)), from: mark)
        try await rig.signals.wait(for: .changed(Rig.adapter, "Discovering", .bool(false)), from: mark)
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Connected") == .bool(true))
        await rig.stop()
    }

    @Test("a simulated module's pairing window never closes: bit 2 stays set with a client bonded and connected, and it pairs again")
    func pairingWindowStaysOpen() async throws {
        let rig = try await Rig()
        // Marked before pairing: the advertisement may change while the pairing is answered.
        let beforePairing = rig.signals.all.count
        try await rig.pair()
        let bonded = try await rig.signals.wait(for: .changed(Rig.firstDevice, "ManufacturerData"), from: beforePairing)
        let manufacturer = try #require(rig.signals.all[bonded].body[1].dictionaryValue?["ManufacturerData"]?.unwrapped)
        let advertised = try #require(manufacturer.integerKeyedDictionaryValue?[0x03EF]?.bytesValue)
        let state = try #require(ModuleAdvertisement(manufacturerData: advertised)).state
        #expect(state.contains(.clientConnected))
        #expect(state.contains(.pairingOpen))

        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(Rig.firstDevice)])
        let removed = try await rig.signals.wait(for: .interfacesRemoved(Rig.firstDevice))
        try await rig.signals.wait(for: .interfacesAdded(Rig.firstDevice), from: removed)
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Pair")
        #expect(try await rig.property(Rig.firstDevice, "org.bluez.Device1", "Paired") == .bool(true))
        await rig.stop()
    }

    @Test("RemoveDevice forgets a paired device; powered off, discovery is NotReady")
    func removeAndPower() async throws {
        let rig = try await Rig()
        try await rig.pair()
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(Rig.firstDevice)])
        try await rig.signals.wait(for: .interfacesRemoved(Rig.firstDevice))
        try await rig.call(Rig.adapter, "org.bluez.Adapter1", "StopDiscovery")
        try await rig.call(Rig.adapter, "org.freedesktop.DBus.Properties", "Set",
                           [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.bool(false))])
        try await rig.signals.wait(for: .changed(Rig.adapter, "Powered", .bool(false)))
        let notReady = await rig.failure(Rig.adapter, "org.bluez.Adapter1", "StartDiscovery")
        #expect(notReady == DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready"))
        try await rig.control("SetPowered", [.bool(true)])
        try await rig.signals.wait(for: .changed(Rig.adapter, "Powered", .bool(true)))
        await rig.stop()
    }

    @Test("with no adapter there is only /org/bluez; a second fake cannot take org.bluez")
    func noAdapterAndNameTaken() async throws {
        let rig = try await Rig { $0.adapters = 0 }
        #expect(try await rig.managedObjects().keys.sorted() == ["/org/bluez"])
        let second = FakeBlueZ()
        let error = await #expect(throws: FakeBlueZError.self) { try await second.start(bus: .address(rig.bus.address)) }
        #expect(error == .nameTaken(FakeBlueZ.busName, owner: try await rig.client.nameOwner(FakeBlueZ.busName)))
        #expect(try await rig.client.nameOwner(FakeBlueZ.controlName) != nil)
        await rig.stop()
    }

    @Test("fault plans read as documented and refuse what they cannot read")
    func faultPlans() throws {
        let plan = try FakeBlueZ.FaultPlan(parsing: "connect-abort=2,resolve-delay=3s,linkloss=5s@10s,linkloss=1s@1m,restart=250ms@2s,refuse-pairing")
        #expect(plan.connectAborts == 2)
        #expect(plan.resolveDelay == .seconds(3))
        #expect(plan.linkLosses == [.init(length: .seconds(5), after: .seconds(10)), .init(length: .seconds(1), after: .seconds(60))])
        #expect(plan.restarts == [.init(length: .milliseconds(250), after: .seconds(2))])
        #expect(plan.refusePairing)
        #expect(try FakeBlueZ.FaultPlan(parsing: "") == FakeBlueZ.FaultPlan())
        for bad in ["connect-abort", "resolve-delay=soon", "linkloss=5s", "linkloss=0s@1s", "refuse-pairing=yes", "explode", "connect-abort=1,connect-abort=2"] {
            #expect(throws: FakeBlueZ.FaultPlanError.self, "\(bad)") { try FakeBlueZ.FaultPlan(parsing: bad) }
        }
    }
}

extension FakeBlueZRig {
    /// The error a call to a characteristic (or `interface`) ends with, nil on success.
    func outcome(_ path: String, _ member: String, _ body: [DBusValue],
                 interface: String = "org.bluez.GattCharacteristic1", on connection: DBusConnection? = nil) async -> DBusError? {
        do {
            try await call(path, interface, member, body, on: connection)
            return nil
        } catch {
            return error
        }
    }
}
