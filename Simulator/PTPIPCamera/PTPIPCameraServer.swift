import Foundation
import NIOCore
import NIOPosix
import UnleashedKit
import UnleashedSimulator

/// A simulated camera on a TCP port that speaks PTP/IP (CIPA DC-005) the way libgphoto2's
/// `ptpip:` port driver expects: a command connection and an event connection per client, the
/// generic PTP operations, device properties from a ``CameraProfile``'s ladders, and captures
/// that store small real JPEGs on a card that fills.
///
/// It is a simulation for tests and trying things out, not a model of any real body's firmware.
public actor PTPIPCameraServer {
    typealias Connection = NIOAsyncChannel<PTPIPPacket, PTPIPPacket>
    typealias Listener = NIOAsyncChannel<Connection, Never>

    /// The port the server listens on (the one the system chose when asked for port 0).
    public nonisolated let port: Int

    private let options: PTPIPCameraOptions
    private let listener: any Channel
    private let guid: [UInt8]
    private var camera: TetheredCamera
    private var random: SplitMix64
    private var counters = PTPIPStats()
    /// Every connection open now, so that an unplug or a stop can drop them.
    private var channels: [ObjectIdentifier: any Channel] = [:]
    /// Command connections by the connection number their handshake handed out.
    private var sessions: [UInt32: CommandSession] = [:]
    private var nextConnectionNumber: UInt32 = 1
    private var isUnplugged = false
    /// A capture is between the trigger and the shutter closing; another has to wait.
    private var isExposing = false
    /// Pictures taken but not written yet; the buffer holds `bufferDepth` of them.
    private var writesPending = 0
    /// The clip being recorded (InitiateOpenCapture): its transaction, its client, its start.
    private var recording: (transactionID: UInt32, connection: UInt32, started: ContinuousClock.Instant)?
    /// Work running on its own (accepting, fault timers, captures, late events), so that stop
    /// can end it; each entry removes itself when done.
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextTaskNumber = 0
    /// When the server started: the scene's light counts from here.
    private let started: ContinuousClock.Instant

    /// What the server knows about one client's command connection.
    private struct CommandSession {
        var sessionOpen = false
        var events: NIOAsyncChannelOutboundWriter<PTPIPPacket>?
        /// Closed with the command connection: the pair belongs together.
        var eventChannel: (any Channel)?
    }

    /// Starts listening; returns once connections are accepted.
    public static func start(host: String = "127.0.0.1", port: Int = 15740, options: PTPIPCameraOptions) async throws -> PTPIPCameraServer {
        let maximumPacketSize = options.maximumPacketSize
        let listener: Listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PTPIPPacketDecoder(maximumPacketSize: maximumPacketSize)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(PTPIPPacketEncoder()))
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        let server = PTPIPCameraServer(listener: listener.channel, options: options)
        await server.begin(listener)
        return server
    }

    private init(listener: any Channel, options: PTPIPCameraOptions) {
        self.listener = listener
        self.options = options
        started = .now
        port = listener.localAddress?.port ?? 0
        camera = TetheredCamera(profile: options.profile, cardCapacity: options.cardCapacity ?? Int(options.profile.cardCapacity))
        random = SplitMix64(seed: options.seed)
        var guidSource = SplitMix64(seed: options.seed ^ 0x5054_5049_5043_414D)
        guid = (0..<2).flatMap { _ in withUnsafeBytes(of: guidSource.next().littleEndian, Array.init) }
    }

    private func begin(_ listener: Listener) {
        spawn { await $0.accept(listener) }
        if !options.faults.unplugs.isEmpty {
            spawn { await $0.runUnplugFaults() }
        }
        options.log("PTP/IP camera '\(options.profile.model)' listening on port \(port)")
    }

    private func spawn(_ work: @escaping @Sendable (PTPIPCameraServer) async -> Void) {
        let number = nextTaskNumber
        nextTaskNumber += 1
        // The task cannot reach `finished` before this actor method has stored it.
        tasks[number] = Task {
            await work(self)
            self.finished(number)
        }
    }

    private func finished(_ number: Int) { tasks[number] = nil }

    /// Counters of what happened so far.
    public func stats() -> PTPIPStats { counters }

    /// What the card holds now, oldest first.
    public func files() -> [(name: String, bytes: [UInt8])] { camera.objects.map { ($0.name, $0.bytes) } }

    /// The camera disappears: every connection drops and new ones are closed at once until ``replug()``.
    public func unplug() {
        guard !isUnplugged else { return }
        isUnplugged = true
        options.log("unplugged: dropping \(channels.count) connection(s)")
        options.onEvent(.unplugged)
        for channel in channels.values { channel.close(promise: nil) }
    }

    /// The camera is back and accepts connections again.
    public func replug() {
        guard isUnplugged else { return }
        isUnplugged = false
        options.log("replugged")
        options.onEvent(.replugged)
    }

    /// Stops listening and drops every connection.
    public func stop() async {
        for task in tasks.values { task.cancel() }
        for channel in channels.values { channel.close(promise: nil) }
        try? await listener.close()
        while let (number, task) = tasks.first {
            await task.value
            tasks[number] = nil
        }
    }

    // MARK: Connections

    private nonisolated func accept(_ listener: Listener) async {
        await withDiscardingTaskGroup { group in
            do {
                try await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
            } catch is CancellationError {
                // stop() ended it.
            } catch {
                options.log("stopped accepting connections: \(error)")
            }
        }
    }

    private nonisolated func serve(_ connection: Connection) async {
        let channel = connection.channel
        let remote = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
        guard await admit(channel, remote: remote) else {
            try? await channel.close()
            return
        }
        do {
            try await connection.executeThenClose { inbound, outbound in
                var packets = inbound.makeAsyncIterator()
                guard let first = try await packets.next() else { return }
                switch first.type {
                case .initCommandRequest: try await serveCommands(first, packets: &packets, outbound: outbound)
                case .initEventRequest: try await serveEvents(first, packets: &packets, outbound: outbound, channel: channel)
                default:
                    try await outbound.write(Self.initFail)
                    throw PTPIPProtocolError("expected an init request, got packet type \(first.type.rawValue)")
                }
            }
        } catch {
            options.log("closing the connection from \(remote): \(error)")
            if error is PTPIPProtocolError { await countProtocolError() }
        }
        await forget(channel)
    }

    private func admit(_ channel: any Channel, remote: String) -> Bool {
        counters.connections += 1
        guard !isUnplugged else {
            options.log("refusing a connection from \(remote): unplugged")
            options.onEvent(.connection(remote: remote, kind: "refused"))
            return false
        }
        channels[ObjectIdentifier(channel)] = channel
        options.onEvent(.connection(remote: remote, kind: "accepted"))
        return true
    }

    private func forget(_ channel: any Channel) {
        channels[ObjectIdentifier(channel)] = nil
    }

    private func countProtocolError() { counters.protocolErrors += 1 }

    /// InitFail with reason 1: the initiator was rejected.
    private static let initFail = PTPIPPacket.make(.initFail) { $0.writeLE(UInt32(1)) }

    private nonisolated func serveCommands(_ request: PTPIPPacket, packets: inout NIOAsyncChannelInboundStream<PTPIPPacket>.AsyncIterator,
                                           outbound: NIOAsyncChannelOutboundWriter<PTPIPPacket>) async throws {
        var payload = request.payload
        guard payload.readSlice(length: 16) != nil, let clientName = payload.readUTF16Terminated(), let _: UInt32 = payload.readLE() else {
            try await outbound.write(Self.initFail)
            throw PTPIPProtocolError("malformed Init Command Request")
        }
        let number = await openCommandConnection(clientName: clientName)
        do {
            try await exchangeOperations(connection: number, packets: &packets, outbound: outbound)
        } catch {
            await closeCommandConnection(number)
            throw error
        }
        await closeCommandConnection(number)
    }

    private nonisolated func exchangeOperations(connection number: UInt32, packets: inout NIOAsyncChannelInboundStream<PTPIPPacket>.AsyncIterator,
                                                outbound: NIOAsyncChannelOutboundWriter<PTPIPPacket>) async throws {
        try await outbound.write(.make(.initCommandAck) { buffer in
            buffer.writeLE(number)
            buffer.writeBytes(guid)
            buffer.writeUTF16Terminated(options.friendlyName)
            buffer.writeLE(UInt32(0x0001_0000))
        })
        while let packet = try await packets.next() {
            switch packet.type {
            case .operationRequest:
                let request = try await readOperation(packet, packets: &packets)
                let reply = await perform(request, connection: number)
                try await outbound.write(contentsOf: Self.packets(for: reply, transactionID: request.transactionID))
            case .probeRequest:
                try await outbound.write(.make(.probeResponse))
            default:
                throw PTPIPProtocolError("unexpected packet type \(packet.type.rawValue) on a command connection")
            }
        }
    }

    /// Reads an Operation Request and, when it announces data from the client, the Start Data,
    /// Data and End Data packets that carry it.
    private nonisolated func readOperation(_ packet: PTPIPPacket,
                                           packets: inout NIOAsyncChannelInboundStream<PTPIPPacket>.AsyncIterator) async throws -> OperationRequest {
        var payload = packet.payload
        guard let dataPhase: UInt32 = payload.readLE(), let code: UInt16 = payload.readLE(), let transactionID: UInt32 = payload.readLE(),
              payload.readableBytes % 4 == 0, payload.readableBytes <= 20
        else { throw PTPIPProtocolError("malformed Operation Request") }
        var request = OperationRequest(code: code, transactionID: transactionID, parameters: [])
        while let parameter: UInt32 = payload.readLE() { request.parameters.append(parameter) }
        guard dataPhase == 2 else { return request }

        guard let start = try await packets.next(), start.type == .startData else {
            throw PTPIPProtocolError("expected Start Data after an Operation Request with a data phase")
        }
        var startPayload = start.payload
        guard let _: UInt32 = startPayload.readLE(), let total: UInt64 = startPayload.readLE(), total <= options.maximumPacketSize else {
            throw PTPIPProtocolError("malformed or oversized Start Data")
        }
        var data = ByteBuffer()
        while true {
            guard let chunk = try await packets.next(), chunk.type == .data || chunk.type == .endData else {
                throw PTPIPProtocolError("expected Data or End Data")
            }
            var chunkPayload = chunk.payload
            guard let _: UInt32 = chunkPayload.readLE(), UInt64(data.readableBytes + chunkPayload.readableBytes) <= total else {
                throw PTPIPProtocolError("data phase longer than its Start Data announced")
            }
            data.writeBuffer(&chunkPayload)
            if chunk.type == .endData { break }
        }
        request.data = data
        return request
    }

    /// Start Data, Data and End Data (chunks of 64 KiB) when the reply carries data, then the
    /// Operation Response.
    private static func packets(for reply: OperationReply, transactionID: UInt32) -> [PTPIPPacket] {
        var packets: [PTPIPPacket] = []
        if var data = reply.data {
            packets.append(.make(.startData) { buffer in
                buffer.writeLE(transactionID)
                buffer.writeLE(UInt64(data.readableBytes))
            })
            let chunkSize = 65_536
            repeat {
                let isLast = data.readableBytes <= chunkSize
                let chunk = data.readSlice(length: min(chunkSize, data.readableBytes)) ?? ByteBuffer()
                packets.append(.make(isLast ? .endData : .data) { buffer in
                    buffer.writeLE(transactionID)
                    buffer.writeImmutableBuffer(chunk)
                })
            } while data.readableBytes > 0
        }
        packets.append(.make(.operationResponse) { buffer in
            buffer.writeLE(reply.code)
            buffer.writeLE(transactionID)
            for parameter in reply.parameters { buffer.writeLE(parameter) }
        })
        return packets
    }

    private nonisolated func serveEvents(_ request: PTPIPPacket, packets: inout NIOAsyncChannelInboundStream<PTPIPPacket>.AsyncIterator,
                                         outbound: NIOAsyncChannelOutboundWriter<PTPIPPacket>, channel: any Channel) async throws {
        var payload = request.payload
        guard let number: UInt32 = payload.readLE(), await canAttachEvents(to: number) else {
            try await outbound.write(Self.initFail)
            options.log("refusing an event connection for an unknown or taken connection number")
            return
        }
        try await outbound.write(.make(.initEventAck))
        await attachEvents(outbound, channel: channel, to: number)
        do {
            while let packet = try await packets.next() {
                guard packet.type == .probeRequest else {
                    throw PTPIPProtocolError("unexpected packet type \(packet.type.rawValue) on an event connection")
                }
                try await outbound.write(.make(.probeResponse))
            }
        } catch {
            await detachEvents(from: number)
            throw error
        }
        await detachEvents(from: number)
    }

    private func openCommandConnection(clientName: String) -> UInt32 {
        let number = nextConnectionNumber
        nextConnectionNumber += 1
        sessions[number] = CommandSession()
        options.log("command connection \(number) from '\(clientName)'")
        return number
    }

    private func closeCommandConnection(_ number: UInt32) {
        guard let session = sessions.removeValue(forKey: number) else { return }
        session.eventChannel?.close(promise: nil)
        if session.sessionOpen { options.log("connection \(number) dropped with its session open") }
    }

    private func canAttachEvents(to number: UInt32) -> Bool {
        sessions[number].map { $0.events == nil } ?? false
    }

    private func attachEvents(_ writer: NIOAsyncChannelOutboundWriter<PTPIPPacket>, channel: any Channel, to number: UInt32) {
        sessions[number]?.events = writer
        sessions[number]?.eventChannel = channel
    }

    private func detachEvents(from number: UInt32) {
        sessions[number]?.events = nil
        sessions[number]?.eventChannel = nil
    }

    private var openSessionCount: Int { sessions.values.filter(\.sessionOpen).count }

    // MARK: Operations

    private func perform(_ request: OperationRequest, connection number: UInt32) -> OperationReply {
        let reply = answer(request, connection: number)
        if let data = reply.data { counters.bytesServed += data.readableBytes }
        if let object = reply.downloaded {
            counters.objectsDownloaded += 1
            options.onEvent(.download(file: object.name, bytes: object.bytes.count))
        }
        return reply
    }

    private func answer(_ request: OperationRequest, connection number: UInt32) -> OperationReply {
        guard let session = sessions[number] else { return .code(PTPResponse.generalError) }
        switch request.code {
        case PTPOperation.getDeviceInfo:
            return camera.deviceInfo()
        case PTPOperation.openSession:
            guard !session.sessionOpen else { return .code(PTPResponse.sessionAlreadyOpen) }
            guard request.parameter(0) != 0 else { return .code(PTPResponse.invalidParameter) }
            sessions[number]?.sessionOpen = true
            counters.sessionsOpened += 1
            options.onEvent(.sessionOpened(sessions: openSessionCount))
            return .ok
        case _ where !session.sessionOpen:
            return .code(PTPResponse.sessionNotOpen)
        case PTPOperation.closeSession:
            sessions[number]?.sessionOpen = false
            counters.sessionsClosed += 1
            options.onEvent(.sessionClosed(sessions: openSessionCount))
            return .ok
        case PTPOperation.initiateCapture:
            return initiateCapture(request, connection: number)
        case PTPOperation.initiateOpenCapture:
            return startRecording(request, connection: number)
        case PTPOperation.terminateOpenCapture:
            return stopRecording(request)
        case PTPOperation.setDevicePropValue where busyFaultStrikes():
            return refuseBusy()
        default:
            return camera.perform(request)
        }
    }

    private func busyFaultStrikes() -> Bool {
        options.faults.busy > 0 && random.nextUnit() < options.faults.busy
    }

    private func refuseBusy() -> OperationReply {
        counters.refusedBusy += 1
        options.onEvent(.refused(reason: "busy"))
        return .code(PTPResponse.deviceBusy)
    }

    /// Answers at once, as PTP cameras do; the picture arrives later with ObjectAdded and
    /// CaptureComplete on the event connection.
    ///
    /// A refusal is followed by an event ending the capture: StoreFull for a full card,
    /// CaptureComplete (nothing taken) for a busy camera. libgphoto2 2.5.30's generic capture
    /// ignores InitiateCapture's response code and waits for events, so without them it would
    /// wait forever; with them it reports an error.
    private func initiateCapture(_ request: OperationRequest, connection number: UInt32) -> OperationReply {
        guard camera.freePictures > 0 else {
            counters.refusedFull += 1
            options.onEvent(.refused(reason: "full"))
            raiseLater([Self.event(PTPEvent.storeFull, transactionID: request.transactionID, parameters: [TetheredCamera.storageID])],
                       connection: number)
            return .code(PTPResponse.storeFull)
        }
        guard !isExposing, recording == nil, writesPending < options.profile.bufferDepth, !busyFaultStrikes() else {
            raiseLater([Self.event(PTPEvent.captureComplete, transactionID: request.transactionID)], connection: number)
            return refuseBusy()
        }
        isExposing = true
        writesPending += 1
        camera.capturesPending += 1
        let profile = options.profile
        let exposure = scaled(profile.shutterLag + camera.properties.exposureTime)
        let writing = scaled(profile.writeTime)
        let brightness = exposureStopsNow()
        spawn {
            await $0.runCapture(exposure: exposure, writing: writing, brightness: brightness, transactionID: request.transactionID,
                                connection: number)
        }
        return .ok
    }

    /// Starts a clip (libgphoto2's `movie` widget set to 1); it is stored when it stops.
    private func startRecording(_ request: OperationRequest, connection number: UInt32) -> OperationReply {
        guard camera.freePictures > 0 else {
            counters.refusedFull += 1
            options.onEvent(.refused(reason: "full"))
            return .code(PTPResponse.storeFull)
        }
        guard !isExposing, recording == nil else { return refuseBusy() }
        recording = (request.transactionID, number, ContinuousClock.now)
        camera.capturesPending += 1
        return .ok
    }

    /// Ends the clip started in the transaction named by the first parameter, as PTP asks;
    /// ObjectAdded and CaptureComplete follow.
    private func stopRecording(_ request: OperationRequest) -> OperationReply {
        guard let clip = recording else { return .code(PTPResponse.generalError) }
        guard request.parameter(0) == clip.transactionID else { return .code(PTPResponse.invalidTransactionID) }
        recording = nil
        camera.capturesPending -= 1
        let brightness = exposureStopsNow()
        let object = camera.storeClip(length: ContinuousClock.now - clip.started, at: Date(), exposureStops: brightness)
        counters.captures += 1
        options.onEvent(.capture(file: object.name, bytes: object.bytes, brightness: brightness))
        raiseLater(captureEvents(object, transactionID: clip.transactionID), connection: clip.connection)
        return .ok
    }

    private nonisolated func scaled(_ duration: Duration) -> Duration { duration * max(0, options.timeScale) }

    /// How far from a correct exposure a picture taken now comes out: the scene's light now
    /// against the settings now.
    private func exposureStopsNow() -> Double {
        guard let scene = options.scene else { return camera.properties.exposureStops() }
        return camera.properties.exposureStops(sceneEV: scene.ev(at: started.duration(to: .now)).stops)
    }

    private func runCapture(exposure: Duration, writing: Duration, brightness: Double, transactionID: UInt32, connection number: UInt32) async {
        try? await Task.sleep(for: exposure)
        isExposing = false
        try? await Task.sleep(for: writing)
        writesPending -= 1
        camera.capturesPending -= 1
        let object = camera.storePicture(at: Date(), exposureStops: brightness)
        counters.captures += 1
        options.onEvent(.capture(file: object.name, bytes: object.bytes, brightness: brightness))
        await raise(captureEvents(object, transactionID: transactionID), connection: number)
    }

    /// ObjectAdded and CaptureComplete for a stored capture, and StoreFull if it filled the card.
    private func captureEvents(_ object: StoredObject, transactionID: UInt32) -> [PTPIPPacket] {
        var events = [
            Self.event(PTPEvent.objectAdded, transactionID: transactionID, parameters: [object.handle]),
            Self.event(PTPEvent.captureComplete, transactionID: transactionID),
        ]
        if camera.freePictures == 0 {
            events.append(Self.event(PTPEvent.storeFull, transactionID: transactionID, parameters: [TetheredCamera.storageID]))
        }
        return events
    }

    /// Raises events once the current operation's response is on its way.
    private func raiseLater(_ events: [PTPIPPacket], connection number: UInt32) {
        spawn { await $0.raise(events, connection: number) }
    }

    private func raise(_ events: [PTPIPPacket], connection number: UInt32) async {
        guard let writer = sessions[number]?.events else { return }
        do {
            try await writer.write(contentsOf: events)
        } catch {
            options.log("could not send events to connection \(number): \(error)")
        }
    }

    private static func event(_ code: UInt16, transactionID: UInt32, parameters: [UInt32] = []) -> PTPIPPacket {
        .make(.event) { buffer in
            buffer.writeLE(code)
            buffer.writeLE(transactionID)
            for parameter in parameters { buffer.writeLE(parameter) }
        }
    }

    // MARK: Faults

    private func runUnplugFaults() async {
        let clock = ContinuousClock()
        let start = clock.now
        for unplug in options.faults.unplugs.sorted(by: { $0.at < $1.at }) {
            guard (try? await clock.sleep(until: start + unplug.at)) != nil else { return }
            self.unplug()
            guard (try? await clock.sleep(until: start + unplug.at + unplug.length)) != nil else { return }
            replug()
        }
    }
}
