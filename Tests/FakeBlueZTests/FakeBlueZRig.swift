import DBus
import FakeBlueZ
import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// A fake bluetoothd on a private bus, and a client connection that records every BlueZ signal.
/// Timings are shortened so that tests run fast; waits are generous so that they hold on a
/// loaded machine.
struct FakeBlueZRig {
    let bus: PrivateBus
    let fake: FakeBlueZ
    let client: DBusConnection
    let signals: SignalLog

    static let adapter = "/org/bluez/hci0"
    static let firstAddress = "F0:5E:D0:00:00:01"
    static let firstDevice = "/org/bluez/hci0/dev_F0_5E_D0_00_00_01"
    static let service = firstDevice + "/service000a"
    static let command = service + "/char000b"
    static let event = service + "/char000d"
    static let info = service + "/char0010"
    static let battery = firstDevice + "/service0012/char0013"

    static var fastTiming: FakeBlueZ.Timing { .quick }

    init(_ configure: (inout FakeBlueZ.Configuration) -> Void = { _ in }) async throws {
        var configuration = FakeBlueZ.Configuration(timing: Self.fastTiming)
        configure(&configuration)
        let bluez = try await InProcessBlueZ.start(configuration)
        (bus, fake) = (bluez.bus, bluez.fake)
        client = try await DBusConnection.open(.address(bus.address))
        signals = try await SignalLog(client)
    }

    func stop() async {
        client.close()
        await fake.stop()
    }

    /// Calls `org.bluez`.
    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [],
              on connection: DBusConnection? = nil) async throws(DBusError) -> [DBusValue] {
        try await (connection ?? client).call(FakeBlueZ.busName, path: path, interface: interface, member: member, body, timeout: .seconds(60))
    }

    /// Calls the control interface.
    @discardableResult
    func control(_ member: String, _ body: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await client.call(FakeBlueZ.controlName, path: FakeBlueZ.controlPath, interface: FakeBlueZ.controlInterface,
                              member: member, body, timeout: .seconds(60))
    }

    /// The error a call fails with (a test fails if it succeeds).
    func failure(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [],
                 on connection: DBusConnection? = nil) async -> DBusError? {
        do {
            try await call(path, interface, member, body, on: connection)
            Issue.record("\(member) on \(path) succeeded")
            return nil
        } catch {
            return error
        }
    }

    func property(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue? {
        try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]).first?.unwrapped
    }

    func managedObjects() async throws -> [String: [String: DBusValue]] {
        let reply = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        return (reply.first?.dictionaryValue ?? [:]).mapValues { $0.dictionaryValue ?? [:] }
    }

    /// Discovers until the first module's device object is there.
    func discover() async throws {
        try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await signals.wait(for: .interfacesAdded(Self.firstDevice))
    }

    /// Discovers, connects and waits for the services to resolve.
    func connect() async throws {
        try await discover()
        try await call(Self.firstDevice, "org.bluez.Device1", "Connect")
        try await signals.wait(for: .changed(Self.firstDevice, "ServicesResolved", .bool(true)))
    }

    /// Discovers, pairs (which connects) and waits for the services to resolve.
    func pair() async throws {
        try await discover()
        try await call(Self.firstDevice, "org.bluez.Device1", "Pair")
        try await signals.wait(for: .changed(Self.firstDevice, "ServicesResolved", .bool(true)))
    }

    static func options(_ entries: [String: DBusValue]) -> DBusValue { .properties(entries) }
}

/// Every signal a connection receives, in order, with waits for the one a test expects.
final class SignalLog: Sendable {
    private let messages = Mutex<[DBusMessage]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ connection: DBusConnection) async throws {
        let stream = connection.signals()
        let reader = Task { [weak self] in
            for await message in stream { self?.append(message) }
        }
        task.withLock { $0 = reader }
        try await connection.addMatch("type='signal',sender='org.bluez'")
        try await connection.addMatch("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    var all: [DBusMessage] { messages.withLock { $0 } }

    private func append(_ message: DBusMessage) {
        messages.withLock { $0.append(message) }
    }

    /// A kind of signal a test waits for.
    struct Match: Sendable {
        let describe: String
        let test: @Sendable (DBusMessage) -> Bool

        static func interfacesAdded(_ path: String) -> Match {
            Match(describe: "InterfacesAdded \(path)") {
                $0.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded") && $0.body.first?.stringValue == path
            }
        }

        static func interfacesRemoved(_ path: String) -> Match {
            Match(describe: "InterfacesRemoved \(path)") {
                $0.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved") && $0.body.first?.stringValue == path
            }
        }

        static func changed(_ path: String, _ name: String, _ value: DBusValue? = nil) -> Match {
            Match(describe: "PropertiesChanged \(path) \(name)=\(value.map { "\($0)" } ?? "any")") { message in
                guard message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged"), message.path == path,
                      let changed = message.body.dropFirst().first?.dictionaryValue?[name] else { return false }
                return value == nil || changed.unwrapped == value
            }
        }

        static func invalidated(_ path: String, _ name: String) -> Match {
            Match(describe: "PropertiesChanged \(path) invalidating \(name)") { message in
                message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged") && message.path == path
                    && (message.body.dropFirst(2).first?.stringArrayValue ?? []).contains(name)
            }
        }

        static func ownerChanged(old: Bool) -> Match {
            Match(describe: "org.bluez \(old ? "lost" : "gained") its owner") { message in
                message.isSignal("org.freedesktop.DBus", "NameOwnerChanged") && message.body.count == 3
                    && (old ? message.body[2].stringValue == "" : message.body[1].stringValue == "")
            }
        }
    }

    /// Waits for the first signal at or after `start` that matches; returns its position. The
    /// timeout is generous: on a loaded 2-core machine the suite's synchronous process waits can
    /// starve the fake (which runs in this process) for many seconds; a real hang still fails.
    @discardableResult
    func wait(for match: Match, from start: Int = 0, timeout: Duration = .seconds(60)) async throws -> Int {
        var found: Int?
        _ = await eventually(every: .milliseconds(5), giveUpAfter: timeout) {
            found = messages.withLock { messages in messages.indices.dropFirst(start).first { match.test(messages[$0]) } }
            return found != nil
        }
        guard let found else { throw FixtureError("no \(match.describe) within \(timeout)") }
        return found
    }

    /// The position of the first matching signal so far.
    func position(of match: Match) -> Int? {
        messages.withLock { messages in messages.indices.first { match.test(messages[$0]) } }
    }
}
