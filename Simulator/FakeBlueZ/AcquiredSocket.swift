import DBus
import Dispatch
import Glibc
import Synchronization

/// The fake's end of a socket pair that `AcquireWrite` or `AcquireNotify` handed out: a
/// `SOCK_SEQPACKET` socket, one packet per value, as BlueZ's `create_sock` makes.
///
/// `@unchecked Sendable`: the descriptor is only used under `descriptor`'s lock, and the
/// dispatch source is only touched to cancel it.
final class AcquiredSocket: @unchecked Sendable {
    /// The values the client wrote, in order; ends when the client closes its end or the fake
    /// closes this one.
    let packets: AsyncStream<[UInt8]>
    private let descriptor: Descriptor
    private let source: any DispatchSourceRead

    private static let queue = DispatchQueue(label: "fakebluez.acquired-sockets")

    /// A new pair: this end, and the client's end to pass in the reply (which the caller closes
    /// once libdbus has its own copy).
    static func pair() -> (socket: AcquiredSocket, client: Int32)? {
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { return nil }
        return (AcquiredSocket(ends[0]), ends[1])
    }

    private init(_ fd: Int32) {
        let descriptor = Descriptor(fd)
        self.descriptor = descriptor
        let (packets, sink) = AsyncStream.makeStream(of: [UInt8].self)
        self.packets = packets
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: Self.queue)
        self.source = source
        // Dispatch lets go of the handlers, and with them this reference, once the source is cancelled.
        source.setEventHandler {
            // BlueZ's sock_read reads into 512 bytes (an ATT value's most): a longer write is cut.
            var buffer = [UInt8](repeating: 0, count: 512)
            let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received > 0 {
                sink.yield(Array(buffer[..<received]))
            } else if received == 0 || (errno != EAGAIN && errno != EINTR) {
                // BlueZ's sock_read also takes an empty read for the client's close.
                source.cancel()
            }
        }
        source.setCancelHandler {
            descriptor.open.withLock { open in
                if let fd = open { Glibc.close(fd) }
                open = nil
            }
            sink.finish()
        }
        source.resume()
    }

    /// Sends one value as one packet; a value for a closed socket is dropped.
    func send(_ value: [UInt8]) {
        descriptor.open.withLock { open in
            guard let fd = open else { return }
            _ = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Whether the client has closed its end, though the hang-up may not have been handled yet.
    var peerClosed: Bool {
        descriptor.open.withLock { open in
            guard let fd = open else { return true }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLHUP) != 0
        }
    }

    /// Closes this end: the client reads the end of the stream, as when BlueZ drops the link.
    func close() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }

    /// The socket's number; nil once closed, so that a value is never sent to a number the
    /// system gave out again.
    private final class Descriptor: Sendable {
        let open: Mutex<Int32?>

        init(_ fd: Int32) {
            open = Mutex(fd)
        }
    }
}

extension FakeBlueZ {
    /// `AcquireWrite` and `AcquireNotify`, with BlueZ's checks (`gatt-client.c`): the reply is a
    /// socket and the MTU; while the client holds the socket, `WriteValue` or `StartNotify` on the
    /// characteristic is `NotPermitted`.
    func acquire(_ call: DBusIncomingCall, _ devicePath: String, _ path: String, write: Bool) {
        guard let device = devices[devicePath], let characteristic = device.gatt?[path], device.isConnected else {
            return call.fail(BlueZError.notConnectedGATT)
        }
        guard OperationOptions(call.message.body[0]) != nil else { return call.fail(BlueZError.invalidArguments()) }
        if write {
            guard characteristic.writeSocket == nil else { return call.fail(BlueZError.writeAcquired) }
            guard characteristic.flags.contains("write-without-response") else { return call.fail(BlueZError.notSupported) }
        } else {
            guard characteristic.notifySocket == nil else { return call.fail(BlueZError.notifyAcquired) }
            guard characteristic.notifySessions.isEmpty else { return call.fail(BlueZError.inProgress) }
            guard characteristic.canNotify else { return call.fail(BlueZError.notSupported) }
            // Enabling notifications writes the client configuration, which an unbonded link may not.
            guard !characteristic.needsPairing || device.paired else { return call.fail(BlueZError.notPaired) }
        }
        guard let (socket, client) = AcquiredSocket.pair() else { return call.fail(BlueZError.failed("Input/output error")) }
        let property = write ? "WriteAcquired" : "NotifyAcquired"
        if write {
            devices[devicePath]?.gatt?[path]?.writeSocket = socket
        } else {
            devices[devicePath]?.gatt?[path]?.notifySocket = socket
        }
        log("\(call.message.sender ?? "?") acquired \(write ? "writes to" : "notifications of") \(path)")
        // This copy goes as soon as the reply holds its own: a client that closes its end
        // (bleak's MTU read) and writes at once must find the lock gone, as BlueZ's would be.
        call.reply([.unixFD(client), .uint16(UInt16(configuration.mtu))], encoded: { Glibc.close(client) })
        update(path, InterfaceSpec.gattCharacteristic.name, [property: .bool(true)])
        Task { [weak self] in
            for await packet in socket.packets {
                await self?.acquiredWrite(devicePath, path, socket, packet)
            }
            await self?.perform { $0.releaseSocket(devicePath, path, socket) }
        }
    }

    /// A value the client wrote to an `AcquireWrite` socket: a write without response. Like one
    /// over the air, it is dropped when too long, and ignored by a peer that wants a bond it lacks.
    private func acquiredWrite(_ devicePath: String, _ path: String, _ socket: AcquiredSocket, _ packet: [UInt8]) async {
        guard let device = devices[devicePath], let characteristic = device.gatt?[path], characteristic.writeSocket === socket,
              let active = device.activeLink, packet.count <= configuration.mtu - 3 else { return }
        guard !characteristic.needsPairing || device.paired else {
            return log("\(device.name) ignored an unencrypted write to \(path)")
        }
        switch (active, characteristic.role) {
        case (.module(let transport), _):
            guard (try? await transport.send([packet])) != nil else { return }
            logWrite(packet, module: device.address, received: Self.monotonicNanoseconds())
        case (.camera(let body, _), .camera(let id)):
            try? await body.write(packet, to: id)
        case (.camera, _):
            return
        }
        count("writes")
    }

    /// The client closed its end, or `StopNotify`: the lock goes, as BlueZ's `destroy_sock`.
    func releaseSocket(_ devicePath: String, _ path: String, _ socket: AcquiredSocket) {
        socket.close()
        guard let characteristic = devices[devicePath]?.gatt?[path] else { return }
        if characteristic.writeSocket === socket {
            devices[devicePath]?.gatt?[path]?.writeSocket = nil
            update(path, InterfaceSpec.gattCharacteristic.name, ["WriteAcquired": .bool(false)])
        } else if characteristic.notifySocket === socket {
            devices[devicePath]?.gatt?[path]?.notifySocket = nil
            update(path, InterfaceSpec.gattCharacteristic.name, ["NotifyAcquired": .bool(false)])
        }
    }

    /// Lets go of the sockets of a characteristic whose client closed them, before a call that
    /// the lock would refuse: the client closed before calling, so the call must find it free.
    func releaseClosedSockets(_ devicePath: String, _ path: String) {
        guard let characteristic = devices[devicePath]?.gatt?[path] else { return }
        for socket in [characteristic.writeSocket, characteristic.notifySocket].compactMap(\.self) where socket.peerClosed {
            releaseSocket(devicePath, path, socket)
        }
    }

    /// The link went: every acquired socket of the device closes, which the client sees as a hang-up.
    func releaseAcquiredSockets(_ devicePath: String) {
        for characteristic in devices[devicePath]?.gatt?.characteristics ?? [] {
            characteristic.writeSocket?.close()
            characteristic.notifySocket?.close()
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
