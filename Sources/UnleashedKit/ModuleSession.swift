public import CameraKit
public import UnleashedProtocol

/// Why a request to a module did not succeed.
public enum SessionError: Error, Hashable, Sendable {
    /// No response arrived in time to any of the request's `sent` copies; it may or may not
    /// have run.
    case timedOut(Opcode, after: Duration, sent: Int = 1)
    /// The module answered with a status other than `ok`.
    case refused(Opcode, StatusCode, message: String?)
    /// The module speaks no protocol version this client speaks.
    case versionMismatch(module: ClosedRange<UInt8>, client: ClosedRange<UInt8>)
    /// The link is down.
    case disconnected(reason: String)
    /// The request could not be encoded (a bug in the caller, caught before sending).
    case invalidRequest(MessageEncodingError)
    case transport(TransportError)
}

extension SessionError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .timedOut(let opcode, let after, let sent):
            "the module did not answer \(opcode) within \(after.shortDescription)" + (sent > 1 ? " (sent \(sent) times)" : "")
        case .refused(let opcode, let status, let message):
            "the module refused \(opcode): \(status)" + (message.map { " (\($0))" } ?? "")
        case .versionMismatch(let module, let client):
            "the module speaks protocol versions \(module.lowerBound)-\(module.upperBound), this client \(client.lowerBound)-\(client.upperBound)"
        case .disconnected(let reason): "the link to the module is down: \(reason)"
        case .invalidRequest(let error): "invalid request: \(error)"
        case .transport(let error): error.description
        }
    }
}

/// What a module told the client in its `hello` response.
public struct ModuleIdentity: Hashable, Sendable {
    public var protocolVersion: UInt8
    public var firmwareVersion: String
    public var capabilities: Capabilities
    /// Nil when no camera is attached.
    public var cameraModel: String?
}

/// Something a session reports besides responses.
public enum SessionEvent: Sendable, Hashable {
    /// An event from the module, repeated ones already dropped.
    case module(EventCode, Fields)
    /// Event sequence numbers skipped this many events: they were lost on the way.
    case missedEvents(Int)
    /// Packets that could not be turned into a message; the session carries on.
    case protocolError(ReceiveError)
    /// The link went down; the session is over.
    case disconnected(reason: String)
}

/// How a session's link has behaved so far, for diagnostics.
public struct SessionFigures: Hashable, Sendable {
    /// Requests sent again because no response came in time.
    public var retransmissions: Int
    /// Responses that matched no outstanding request, such as a second answer to a request sent twice.
    public var strayResponses: Int
    /// The link's round trips and the wait before a request is sent again.
    public var roundTrips: RoundTripEstimator
}

/// One conversation with one module over one link: the `hello` handshake, requests matched to
/// responses by id with a timeout, and the module's events.
///
/// The session owns the link's receiving side; everything else about the module (reconnecting,
/// the camera's state) is built on top.
public actor ModuleSession {
    /// The protocol versions this client speaks.
    public static let supportedVersions: ClosedRange<UInt8> = UnleashedV1.protocolVersion...UnleashedV1.protocolVersion

    /// Events, protocol errors and the end of the link, in arrival order. One consumer.
    public nonisolated let events: AsyncStream<SessionEvent>

    /// The thread the session runs on; nil for Swift's shared pool.
    private nonisolated let executor: ExecutorThread?
    private nonisolated let poolIsolation = PoolIsolation()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? poolIsolation.unownedExecutor
    }

    private let transport: ModuleTransport
    private let dialect: any Dialect
    private let clock: any Clock<Duration>
    private let requestTimeout: Duration
    /// The link's round trips so far and the wait before a request is sent again.
    public private(set) var roundTrips: RoundTripEstimator
    private let eventSink: AsyncStream<SessionEvent>.Continuation
    private var receiver: any PacketReceiver
    private var pending: [UInt16: PendingRequest] = [:]
    private var lastID: UInt16 = 0
    private var lastEventSequence: UInt16?
    private var closedReason: String?
    private var readLoop: Task<Void, Never>?

    /// Statistics for diagnostics: responses that matched no outstanding request.
    public private(set) var strayResponses = 0

    private enum PendingRequest {
        case sending
        case waiting(CheckedContinuation<Message, any Error>)
        case finished(Result<Message, SessionError>)
    }

    /// When each outstanding request went, how many copies of it, and when it goes again or
    /// times out: times since the session began.
    private var transmissions: [UInt16: Transmission] = [:]

    private struct Transmission {
        let opcode: Opcode
        let packets: [[UInt8]]
        let limit: Duration
        let firstSent: Duration
        var copies = 1
        /// How long this copy is waited for before the request goes again.
        var wait: Duration
        var resendAt: Duration

        var deadline: Duration { firstSent + limit }
        var due: Duration { min(resendAt, deadline) }
    }

    /// The time since the session began, on its clock: what transmissions are timed against.
    private let elapsed: @Sendable () -> Duration
    /// The one timer of the session, set for the earliest resend or timeout due; nil when none
    /// is set. One timer for every request, not one each: a request answered in time (nearly
    /// all of them) costs no task and no wake-up of its own.
    private var timer: (cancel: @Sendable () -> Void, due: Duration)?

    /// Statistics for diagnostics: requests sent again because no response came in time.
    public private(set) var retransmissions = 0

    /// The figures above together.
    public var figures: SessionFigures {
        SessionFigures(retransmissions: retransmissions, strayResponses: strayResponses, roundTrips: roundTrips)
    }

    /// A session over `transport`. Call ``start(clientName:)`` before anything else.
    ///
    /// - Parameter retransmission: a request still unanswered after the link's retransmission
    ///   timeout (learned from its round trips, within these bounds) is sent again with the same
    ///   id, each time after twice the wait before, until its time limit. The module runs it at
    ///   most once and repeats its answer (PROTOCOL.md §9.2), so a lost packet costs about one
    ///   round trip more, not the request.
    /// - Parameter executor: the thread to run on, where the link delivers its packets (see
    ///   ``GATTLinkProvider/executor``); nil for Swift's shared pool.
    public init(
        transport: ModuleTransport,
        dialect: any Dialect = UnleashedV1(),
        clock: any Clock<Duration> = ContinuousClock(),
        requestTimeout: Duration = .seconds(3),
        retransmission: RoundTripEstimator.Bounds = .moduleLink,
        executor: ExecutorThread? = nil
    ) throws(SessionError) {
        self.executor = executor
        self.transport = transport
        self.dialect = dialect
        self.clock = clock
        self.requestTimeout = requestTimeout
        roundTrips = RoundTripEstimator(bounds: retransmission)
        elapsed = stopwatch(clock)
        do {
            receiver = try dialect.makeReceiver(mtu: transport.mtu)
        } catch {
            throw .invalidRequest(error)
        }
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    /// Starts reading from the link and says `hello`.
    public func start(clientName: String = "unleashed") async throws(SessionError) -> ModuleIdentity {
        if readLoop == nil {
            let transport = transport
            // Preferring the session's thread, the loop also wakes there when the link yields a
            // packet, rather than on the shared pool first.
            readLoop = Task(executorPreference: executor) { await Self.read(transport, into: self) }
            if let executor, transport.readingThread === executor {
                // Read on this session's own thread: each packet is handled where it is read.
                transport.deliverPackets { [weak self] packet in
                    self?.assumeIsolated { $0.handle(.packet(packet)) }
                }
            }
        }
        let versions = Self.supportedVersions
        let response = try await exchange(.hello, Fields {
            $0.minProtocolVersion = versions.lowerBound
            $0.maxProtocolVersion = versions.upperBound
            $0.clientName = String(clientName.utf8.prefix(32)) ?? "unleashed"
        })
        let fields = response.fields
        guard case .response(_, let status) = response.kind, status == .ok else {
            if let low = fields.minProtocolVersion, let high = fields.maxProtocolVersion {
                throw .versionMismatch(module: low...high, client: versions)
            }
            throw Self.refusal(of: response)
        }
        return ModuleIdentity(
            protocolVersion: fields.protocolVersion!, firmwareVersion: fields.firmwareVersion!,
            capabilities: fields.capabilities!, cameraModel: fields.cameraModel)
    }

    /// Sends a request and waits for its `ok` response's fields.
    ///
    /// - Throws: ``SessionError/refused(_:_:message:)`` for any other status,
    ///   ``SessionError/timedOut(_:after:sent:)`` when no response came in time.
    public func request(_ opcode: Opcode, _ fields: Fields = Fields(), timeout: Duration? = nil) async throws(SessionError) -> Fields {
        let response = try await exchange(opcode, fields, timeout: timeout)
        guard case .response(_, .ok) = response.kind else { throw Self.refusal(of: response) }
        return response.fields
    }

    /// Takes the link down and fails every outstanding request.
    public func close() async {
        await transport.close()
        linkDown("closed by the client")
    }

    // MARK: - Requests

    private static func refusal(of response: Message) -> SessionError {
        guard case .response(let opcode, let status) = response.kind else { return .disconnected(reason: "not a response") }
        return .refused(opcode, status, message: response.fields.errorMessage)
    }

    /// Sends a request and waits for its response, whatever its status.
    private func exchange(_ opcode: Opcode, _ fields: Fields, timeout: Duration? = nil) async throws(SessionError) -> Message {
        if let closedReason { throw .disconnected(reason: closedReason) }
        let id = nextID()
        let packets: [[UInt8]]
        do {
            packets = try dialect.packets(for: Message(.request(opcode), id: id, fields: fields), mtu: transport.mtu)
        } catch {
            throw .invalidRequest(error)
        }
        let limit = timeout ?? requestTimeout
        let now = elapsed()
        let transmission = Transmission(opcode: opcode, packets: packets, limit: limit, firstSent: now,
                                        wait: roundTrips.timeout, resendAt: now + roundTrips.timeout)
        transmissions[id] = transmission
        pending[id] = .sending
        setTimer(for: transmission.due)
        do {
            try await transport.send(packets)
        } catch {
            finish(id, with: .failure(.transport(error)))
        }
        do {
            return try await awaitResponse(id)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .disconnected(reason: "cancelled")
        }
    }

    private func nextID() -> UInt16 {
        repeat {
            lastID = lastID == Message.maximumID ? 1 : lastID + 1
        } while pending[lastID] != nil
        return lastID
    }

    /// Sets the session's timer for `due`, unless it is already set for then or sooner: when it
    /// goes off it looks at every outstanding request and sets itself for the next.
    private func setTimer(for due: Duration) {
        if let timer, timer.due <= due { return }
        timer?.cancel()
        let (clock, delay) = (clock, max(due - elapsed(), .zero))
        if let executor, clock is ContinuousClock {
            // On a thread of its own the session's timer is the thread's: setting it makes no
            // task, and going off wakes no other thread.
            let id = executor.schedule(at: .now + delay) { [weak self] in
                Task(executorPreference: executor) { await self?.timerWentOff() }
            }
            timer = ({ executor.cancel(id) }, due)
            return
        }
        let task = Task { [weak self] in
            do {
                try await clock.sleep(for: delay)
            } catch {
                return
            }
            await self?.timerWentOff()
        }
        timer = ({ task.cancel() }, due)
    }

    /// Sends again each request whose wait ran out, waiting twice as long for it next time (and
    /// backing the link's timeout off), and times out each one past its time limit.
    private func timerWentOff() async {
        timer = nil
        let now = elapsed()
        for id in transmissions.keys.sorted() {
            guard var transmission = transmissions[id] else { continue }
            if now >= transmission.deadline {
                finish(id, with: .failure(.timedOut(transmission.opcode, after: transmission.limit, sent: transmission.copies)))
            } else if now >= transmission.resendAt {
                retransmissions += 1
                roundTrips.backOff()
                transmission.copies += 1
                transmission.wait = roundTrips.backedOff(transmission.wait)
                transmission.resendAt = now + transmission.wait
                transmissions[id] = transmission
                try? await transport.send(transmission.packets)
            }
        }
        if let next = transmissions.values.map(\.due).min() { setTimer(for: next) }
    }

    private func awaitResponse(_ id: UInt16) async throws -> Message {
        switch pending[id] {
        case .finished(let result)?:
            pending[id] = nil
            return try result.get()
        case .sending?:
            return try await withCheckedThrowingContinuation { continuation in
                pending[id] = .waiting(continuation)
            }
        case .waiting?, nil:
            preconditionFailure("request \(id) awaited twice")
        }
    }

    /// Settles request `id`, whichever of response, timeout or link loss comes first.
    /// A response to a request sent once gives the link a round trip (Karn's rule: one sent
    /// again may be answering any of its copies).
    private func finish(_ id: UInt16, with result: Result<Message, SessionError>) {
        if let transmission = transmissions.removeValue(forKey: id), transmission.copies == 1, case .success = result {
            roundTrips.add(roundTrip: elapsed() - transmission.firstSent)
        }
        switch pending[id] {
        case .sending?:
            pending[id] = .finished(result)
        case .waiting(let continuation)?:
            pending[id] = nil
            continuation.resume(with: result.mapError { $0 as any Error })
        case .finished?, nil:
            if case .success = result { strayResponses += 1 }
        }
    }

    // MARK: - Receiving

    /// Hands the link's events to `session` until the link ends.
    ///
    /// Isolated to the session for the whole loop: each event resumes the loop on the session
    /// itself, and the request it answers continues there too, with no hand-over to another
    /// thread between the packet and the caller. It holds the session until the link's events
    /// end, which ``close()`` brings about.
    private static func read(_ transport: ModuleTransport, into session: isolated ModuleSession) async {
        for await linkEvent in transport.link.events {
            if let event = transport.event(from: linkEvent) { session.handle(event) }
        }
        session.linkDown("the transport closed")
    }

    private func handle(_ event: TransportEvent) {
        switch event {
        case .packet(let packet):
            let received = receiver.receive(packet)
            for error in received.errors { eventSink.yield(.protocolError(error)) }
            if let message = received.message { dispatch(message) }
        case .disconnected(let reason):
            linkDown(reason)
        case .sendFailed(let error):
            // The refused write was one of the requests still waiting; which one, the link does
            // not say. Its refusal is the answer they would otherwise wait out their timeout for.
            for id in Array(pending.keys) { finish(id, with: .failure(.transport(error))) }
        }
    }

    private func dispatch(_ message: Message) {
        switch message.kind {
        case .response(let opcode, _):
            // A hello, whatever its answer, restarts the module's event numbering, and the module
            // sends its response before any event numbered anew (PROTOCOL.md §7.1).
            if opcode == .hello { lastEventSequence = nil }
            finish(message.id, with: .success(message))
        case .event(let code):
            if let last = lastEventSequence {
                if message.id == last { return }
                let gap = Int(message.id &- last &- 1)
                if gap > 0 { eventSink.yield(.missedEvents(gap)) }
            }
            lastEventSequence = message.id
            eventSink.yield(.module(code, message.fields))
        case .request:
            eventSink.yield(.protocolError(.decoding(.invalidValue(field: "kind", reason: "a module does not send requests"))))
        }
    }

    private func linkDown(_ reason: String) {
        guard closedReason == nil else { return }
        closedReason = reason
        timer?.cancel()
        timer = nil
        for id in Array(pending.keys) { finish(id, with: .failure(.disconnected(reason: reason))) }
        receiver.reset()
        eventSink.yield(.disconnected(reason: reason))
        eventSink.finish()
    }
}
