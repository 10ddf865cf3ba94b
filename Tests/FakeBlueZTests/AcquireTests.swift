import CameraProtocols
import DBus
import FakeBlueZ
import Foundation
import Testing
import UnleashedProtocol
import UnleashedTestSupport

@Suite("AcquireWrite and AcquireNotify on the fake org.bluez", .timeLimit(.minutes(1)))
struct AcquireTests {
    typealias Rig = FakeBlueZRig
    typealias Body = TestCameraBody
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// The socket and MTU an acquire answered with.
    static func acquire(_ rig: Rig, _ path: String, _ method: String) async throws -> (fd: Int32, mtu: Int) {
        let reply = try await rig.call(path, characteristic, method, [Rig.options([:])])
        guard reply.count == 2, case .unixFD(let fd) = reply[0], let mtu = reply[1].intValue, reply[1].signature == "q" else {
            throw FixtureError("\(method) answered \(reply)")
        }
        return (fd, mtu)
    }

    @Test("a camera's sockets: a packet written is a write to the body, a notification arrives as a packet, closing releases the lock")
    func cameraRoundTrip() async throws {
        let rig = try await CameraDeviceTests.rig()
        try await CameraDeviceTests.connect(rig)
        let notify = try await Self.acquire(rig, Body.statusPath(), "AcquireNotify")
        defer { close(notify.fd) }
        #expect(notify.mtu == 247)
        try await rig.signals.wait(for: .changed(Body.statusPath(), "NotifyAcquired", .bool(true)))
        let again = await rig.failure(Body.statusPath(), Self.characteristic, "AcquireNotify", [Rig.options([:])])
        #expect(again == DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired"))
        let start = await rig.failure(Body.statusPath(), Self.characteristic, "StartNotify")
        #expect(start == DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired"))
        let unsupported = await rig.failure(Body.infoPath(), Self.characteristic, "AcquireWrite", [Rig.options([:])])
        #expect(unsupported?.name == "org.bluez.Error.NotSupported")

        let write = try await Self.acquire(rig, Body.commandPath(), "AcquireWrite")
        try await rig.signals.wait(for: .changed(Body.commandPath(), "WriteAcquired", .bool(true)))
        #expect(await CameraDeviceTests.write(rig, [0x01]) == DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired"))
        #expect(SocketIO.send(write.fd, [0x01, 0x09]))
        #expect(try await SocketIO.receive(notify.fd) == [0xAC, 0x01, 0x09])
        #expect(try await CameraDeviceTests.body(rig).written == [[0x01, 0x09]])
        // The Value property is left alone while notifications go to the socket.
        #expect(try await rig.property(Body.statusPath(), Self.characteristic, "Value") == .bytes([]))

        close(write.fd)
        try await rig.signals.wait(for: .changed(Body.commandPath(), "WriteAcquired", .bool(false)))
        #expect(await CameraDeviceTests.write(rig, [0x02]) == nil)
        #expect(try await SocketIO.receive(notify.fd) == [0xAC, 0x02])

        // The link going hangs the socket up.
        try await rig.call(Body.path(), "org.bluez.Device1", "Disconnect")
        #expect(try await SocketIO.receive(notify.fd) == nil)
        await rig.stop()
    }

    @Test("a module's sockets carry a hello request and its response; StopNotify ends an acquired notify")
    func moduleRoundTrip() async throws {
        let rig = try await Rig()
        try await rig.pair()
        let notify = try await Self.acquire(rig, Rig.event, "AcquireNotify")
        defer { close(notify.fd) }
        let write = try await Self.acquire(rig, Rig.command, "AcquireWrite")
        defer { close(write.fd) }
        #expect(write.mtu == 247)
        let hello = Message(.request(.hello), id: 7, fields: Fields {
            $0.minProtocolVersion = 1
            $0.maxProtocolVersion = 1
            $0.clientName = "acquire-test"
        })
        for packet in try UnleashedV1().packets(for: hello, mtu: write.mtu) {
            #expect(SocketIO.send(write.fd, packet))
        }
        var receiver = try UnleashedV1().makeReceiver(mtu: notify.mtu)
        var response: Message?
        while response == nil {
            guard let packet = try await SocketIO.receive(notify.fd) else { throw FixtureError("the notify socket closed") }
            response = receiver.receive(packet).message
        }
        #expect(response?.kind == .response(.hello, .ok))
        #expect(response?.id == 7)
        #expect(!(await rig.fake.writes(since: 0)).isEmpty)

        try await rig.call(Rig.event, Self.characteristic, "StopNotify")
        try await rig.signals.wait(for: .changed(Rig.event, "NotifyAcquired", .bool(false)))
        #expect(try await SocketIO.receive(notify.fd) == nil)
        try await rig.call(Rig.event, Self.characteristic, "StartNotify")
        await rig.stop()
    }

    @Test("AcquireNotify is InProgress while a StartNotify session runs, and Not paired before a bond")
    func acquireRefusals() async throws {
        let rig = try await Rig()
        try await rig.connect()
        let unpaired = await rig.failure(Rig.event, Self.characteristic, "AcquireNotify", [Rig.options([:])])
        #expect(unpaired == DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        try await rig.call(Rig.firstDevice, "org.bluez.Device1", "Pair")
        try await rig.call(Rig.event, Self.characteristic, "StartNotify")
        let busy = await rig.failure(Rig.event, Self.characteristic, "AcquireNotify", [Rig.options([:])])
        #expect(busy?.name == "org.bluez.Error.InProgress")
        await rig.stop()
    }
}

/// Non-blocking reads and writes on an acquired socket, polled so that no thread of the shared
/// pool waits in the kernel while the fake (in this process) needs it.
enum SocketIO {
    static func send(_ fd: Int32, _ value: [UInt8]) -> Bool {
        value.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == value.count
    }

    /// The next packet, or nil when the other end closed.
    static func receive(_ fd: Int32, timeout: Duration = .seconds(30)) async throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        var received: [UInt8]??
        // The socket is read without blocking a thread of the pool, which the fake in this process needs.
        _ = try await eventually(every: .milliseconds(5), giveUpAfter: timeout) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { received = .some(Array(buffer[..<count])) }
            if count == 0 { received = .some(nil) }
            guard count >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw FixtureError("recv: errno \(errno)") }
            return received != nil
        }
        guard let received else { throw FixtureError("nothing on the socket within \(timeout)") }
        return received
    }
}
