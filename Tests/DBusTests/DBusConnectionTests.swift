import DBus
import Foundation
import Synchronization
import Testing
import UnleashedTestSupport

/// The D-Bus layer against a real `dbus-daemon` that each test starts for itself.
@Suite("D-Bus connection")
struct DBusConnectionTests {
    let bus: PrivateBus

    init() async throws {
        bus = try await PrivateBus()
    }

    /// A second connection on the same bus that answers every call with `answer`.
    func server(_ answer: @escaping @Sendable (DBusIncomingCall) -> Void) async throws -> DBusConnection {
        let server = try await DBusConnection.open(.address(bus.address))
        server.handleMethodCalls(answer)
        #expect(try await server.requestName("org.unleashed.Test"))
        return server
    }

    @Test("values of every type survive a round trip through the bus")
    func roundTrip() async throws {
        let server = try await server { $0.reply($0.message.body) }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let body: [DBusValue] = [
            .byte(7), .bool(true), .bool(false), .int16(-3), .uint16(65_535), .int32(-70_000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(2.5), .string("héllo"), .objectPath("/org/bluez/hci0"),
            .signature("a{sv}"), .bytes([0, 1, 2, 255]), .bytes([]), .array(element: "s", []),
            .properties(["Connected": .bool(true), "RSSI": .int16(-60), "UUIDs": .strings(["a", "b"]),
                         "ManufacturerData": .array(element: "{qv}", [.dictEntry(.uint16(0x03EF), .variant(.bytes([1, 0xF0, 3])))])]),
            .structure([.string("x"), .uint16(247)]), .variant(.variant(.int32(1))), .objectPaths(["/a", "/b/c"]),
        ]
        let reply = try await client.call("org.unleashed.Test", path: "/echo", interface: "org.unleashed.Echo", member: "Echo", body)
        #expect(reply == body)
        #expect(reply[16].dictionaryValue?["RSSI"]?.intValue == -60)
        #expect(reply[16].dictionaryValue?["ManufacturerData"]?.integerKeyedDictionaryValue?[0x03EF]?.bytesValue == [1, 0xF0, 3])
    }

    @Test("a file descriptor crosses the bus as a working duplicate that the receiver owns")
    func fileDescriptor() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writeEnd = ends[1]
        let server = try await server { call in call.reply([.unixFD(writeEnd)]) }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let reply = try await client.call("org.unleashed.Test", path: "/fd", interface: "a.b", member: "AcquireNotify")
        close(writeEnd)
        guard case .unixFD(let received) = reply.first else {
            Issue.record("no fd in \(reply)")
            return
        }
        #expect(received != writeEnd)
        #expect(write(received, "ping", 4) == 4)
        close(received)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(read(ends[0], &buffer, 8) == 4)
        #expect(Array(buffer.prefix(4)) == Array("ping".utf8))
    }

    @Test("the handler of incoming calls is reached through the same stack depth on the 1st call and the 500th")
    func handlerDepthStaysFlat() async throws {
        // A closure kept in a lock and read back with `withLock { $0 }` once gained a pair of
        // reabstraction thunks per call: each call walked all earlier ones, so a long-running
        // service slowed down call by call until its loop thread's stack ran out.
        let depths = Mutex<[Int]>([])
        let server = try await server { call in
            depths.withLock { $0.append(Thread.callStackReturnAddresses.count) }
            call.reply()
        }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        for _ in 0..<500 { _ = try await client.call("org.unleashed.Test", path: "/x", interface: "a.b", member: "Ping") }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 500)
        #expect(seen.first == seen.last, "the stack at the handler grew from \(seen.first ?? 0) to \(seen.last ?? 0) frames")
    }

    @Test("an error reply keeps its name and message")
    func errorReply() async throws {
        let server = try await server { $0.fail("org.bluez.Error.InProgress", "Operation already in progress") }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let error = await #expect(throws: DBusError.self) {
            try await client.call("org.unleashed.Test", path: "/x", interface: "org.bluez.Device1", member: "Connect")
        }
        #expect(error == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
    }

    @Test("a call nobody answers fails with NoReply when its timeout is up, not later")
    func timeout() async throws {
        let held = Mutex<[DBusIncomingCall]>([])
        let server = try await server { call in held.withLock { $0.append(call) } }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        // A call sent first with a limit of two minutes: had the short call's own limit been
        // ignored for a longer one, the first call would have failed first, or with it.
        let longEnded = Mutex(false)
        Task {
            _ = try? await client.call("org.unleashed.Test", path: "/x", interface: "a.b", member: "Long", timeout: .seconds(120))
            longEnded.withLock { $0 = true }
        }
        try #require(await eventually { held.withLock { $0.count } == 1 }, "the first call never reached the server")
        let error = await #expect(throws: DBusError.self) {
            try await client.call("org.unleashed.Test", path: "/x", interface: "a.b", member: "Hang", timeout: .milliseconds(500))
        }
        #expect(error?.name == DBusError.noReplyName)
        #expect(held.withLock { $0.count } == 2)
        #expect(!longEnded.withLock { $0 }, "the call with the longer limit ended first")
    }

    @Test("a call to a name nobody owns fails with ServiceUnknown")
    func serviceUnknown() async throws {
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let error = await #expect(throws: DBusError.self) {
            try await client.call("org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        }
        #expect(error?.name == DBusError.serviceUnknownName)
        #expect(try await client.nameOwner("org.bluez") == nil)
    }

    @Test("bad input gives an error, not a crash: an invalid object path, a mistyped array")
    func badInput() async throws {
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let path = await #expect(throws: DBusError.self) {
            try await client.call("org.bluez", path: "/org/bluez/hci0/dev_AA:BB", interface: "a.b", member: "C")
        }
        #expect(path?.name == DBusError.invalidArgsName)
        let array = await #expect(throws: DBusError.self) {
            try await client.call("org.bluez", path: "/", interface: "a.b", member: "C", [.array(element: "s", [.int32(1)])])
        }
        #expect(array?.name == DBusError.invalidArgsName)
        for (destination, interface, member) in [("org..bluez", "a.b", "C"), ("org.bluez", "no dots", "C"), ("org.bluez", "a.b", "Bad-Member")] {
            let name = await #expect(throws: DBusError.self) {
                try await client.call(destination, path: "/", interface: interface, member: member)
            }
            #expect(name?.name == DBusError.invalidArgsName, "\(destination) \(interface) \(member)")
        }
    }

    @Test("signals that match a rule arrive in order, with their bodies")
    func signals() async throws {
        let server = try await server { $0.reply() }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        defer { client.close() }
        let stream = client.signals()
        try await client.addMatch("type='signal',interface='org.freedesktop.DBus.Properties',path_namespace='/org/bluez'")
        for value in 1...3 {
            server.emit(path: "/org/bluez/hci0/dev_1", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                        [.string("org.bluez.Device1"), .properties(["RSSI": .int16(Int16(-value))]), .strings([])])
        }
        server.emit(path: "/elsewhere", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    [.string("x"), .properties([:]), .strings([])])
        var seen: [Int] = []
        for await message in stream where message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged") {
            #expect(message.path == "/org/bluez/hci0/dev_1")
            #expect(message.sender == server.uniqueName)
            seen.append(message.body[1].dictionaryValue?["RSSI"]?.intValue ?? 0)
            if seen.count == 3 { break }
        }
        #expect(seen == [-1, -2, -3])
    }

    @Test("when the bus goes away, pending calls fail, the signal stream ends, and nothing hangs")
    func busGone() async throws {
        let held = Mutex<[DBusIncomingCall]>([])
        let server = try await server { call in held.withLock { $0.append(call) } }
        defer { server.close() }
        let client = try await DBusConnection.open(.address(bus.address))
        let stream = client.signals()
        let pending = Task {
            try await client.call("org.unleashed.Test", path: "/x", interface: "a.b", member: "Hang", timeout: .seconds(120))
        }
        try #require(await eventually { !held.withLock { $0.isEmpty } }, "the server never held the call")
        bus.stop()
        let failure = await #expect(throws: DBusError.self) { try await pending.value }
        // Ended by the disconnection, not by its (long) timeout.
        #expect(failure?.name != DBusError.noReplyName, "\(String(describing: failure))")
        var sawDisconnected = false
        for await message in stream where message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
            sawDisconnected = true
        }
        #expect(sawDisconnected)
        #expect(!client.isConnected)
        let after = await #expect(throws: DBusError.self) {
            try await client.call("org.unleashed.Test", path: "/x", interface: "a.b", member: "C")
        }
        #expect(after?.name == DBusError.disconnectedName)
    }

    @Test("a watched descriptor is read on the connection's thread; a cancel closes it, and so does the connection's end")
    func watchedDescriptor() async throws {
        let client = try await DBusConnection.open(.address(bus.address))
        var ends: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #expect(socketpair(AF_UNIX, type, 0, &ends) == 0)
        let (ours, theirs) = (ends[0], ends[1])
        defer { close(theirs) }
        let (packets, sink) = AsyncStream.makeStream(of: [UInt8].self)
        let ended = Mutex(false)
        let watch = client.watchDescriptor(ours, readable: {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(ours, &buffer, buffer.count)
                guard count > 0 else { return count < 0 && errno == EAGAIN }
                sink.yield(Array(buffer.prefix(count)))
            }
        }, ended: { ended.withLock { $0 = true } })
        for packet: [UInt8] in [[1, 2, 3], [4], [5, 6]] {
            #expect(write(theirs, packet, packet.count) == packet.count)
        }
        var received: [[UInt8]] = []
        for await packet in packets {
            received.append(packet)
            if received.count == 3 { break }
        }
        #expect(received == [[1, 2, 3], [4], [5, 6]], "each packet read as it was written")
        watch.cancel()
        // Closed on the loop: the peer's write then finds no reader.
        _ = await eventually { send(theirs, [7], 1, Int32(MSG_NOSIGNAL)) != 1 }
        let (sent, error) = (send(theirs, [7], 1, Int32(MSG_NOSIGNAL)), errno)
        #expect(sent == -1 && error == EPIPE, "the watched end was closed")
        #expect(!ended.withLock { $0 }, "a cancelled watch is not told the connection ended")

        // A watch the connection outlives no more: it is told, and its descriptor closed.
        #expect(socketpair(AF_UNIX, type, 0, &ends) == 0)
        defer { close(ends[1]) }
        let second = ends[1]
        _ = client.watchDescriptor(ends[0], readable: { true }, ended: { ended.withLock { $0 = true } })
        client.close()
        _ = await eventually { ended.withLock { $0 } }
        #expect(ended.withLock { $0 })
        let (sentAfter, errorAfter) = (send(second, [7], 1, Int32(MSG_NOSIGNAL)), errno)
        #expect(sentAfter == -1 && errorAfter == EPIPE, "the connection's end closed the watched end")
    }

    @Test("no bus at the address: the error names the socket")
    func noBus() async throws {
        let error = await #expect(throws: DBusError.self) {
            try await DBusConnection.open(.address("unix:path=/nonexistent/bus.sock"))
        }
        #expect(error?.message.contains("/nonexistent/bus.sock") == true, "\(String(describing: error))")
    }
}
