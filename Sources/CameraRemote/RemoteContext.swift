public import CameraKit
import CameraProtocols
public import GATT
public import UnleashedKit

/// What a driver's operation sends and waits for, on one connection: writes and reads that fail
/// as ``CameraError`` in words for the person, and waits for the camera's messages that begin
/// before the write that provokes them, so that a quick answer is not missed.
public struct RemoteContext: Sendable {
    /// The connection's GATT client.
    public let link: any GATTLink
    /// How long a step waits for an answer unless told otherwise.
    public let stepTimeout: Duration
    let inbox: NotificationInbox
    let clock: any Clock<Duration>
    let explain: @Sendable (ATTError, String) -> CameraError?

    init(link: any GATTLink, inbox: NotificationInbox, stepTimeout: Duration, clock: any Clock<Duration>,
         explain: @escaping @Sendable (ATTError, String) -> CameraError?) {
        self.link = link
        self.inbox = inbox
        self.stepTimeout = stepTimeout
        self.clock = clock
        self.explain = explain
    }

    /// Writes `value`, as part of `operation` (named in errors).
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool = true,
                      for operation: String) async throws(CameraError) {
        do {
            try await link.write(value, to: characteristic, withResponse: withResponse)
        } catch {
            throw translate(error, during: operation)
        }
    }

    /// Reads a value, as part of `operation`.
    public func read(_ characteristic: GATTCharacteristicID, for operation: String) async throws(CameraError) -> [UInt8] {
        do {
            return try await link.read(characteristic)
        } catch {
            throw translate(error, during: operation)
        }
    }

    /// Starts watching for the next message on `characteristic` that `matches`; call it before
    /// the write that provokes the message, then ``Expectation/wait(for:timeout:)``.
    public func expect(_ characteristic: GATTCharacteristicID,
                       where matches: @escaping @Sendable ([UInt8]) -> Bool = { _ in true }) async -> Expectation {
        Expectation(id: await inbox.expect(characteristic, matches), inbox: inbox, clock: clock, stepTimeout: stepTimeout)
    }

    /// Waits `duration` on the connection's clock (a button held, a camera's settle time).
    public func sleep(for duration: Duration) async throws(CameraError) {
        do {
            try await clock.sleep(for: duration)
        } catch {
            throw .cancelled
        }
    }

    /// A link failure as the person reads it.
    public func translate(_ error: GATTError, during operation: String) -> CameraError {
        switch error {
        case .notConnected(let why):
            .device(DeviceFailure(.disconnected, "the camera is not connected: \(why)"))
        case .missing(let id):
            .device(DeviceFailure(.unsupported, "the camera offers no characteristic \(id.characteristic) for \(operation); "
                + "it may be in another Bluetooth mode or run other firmware"))
        case .refused(let att):
            explain(att, operation) ?? .device(DeviceFailure(.failed, "the camera refused \(operation) (\(att))"))
        case .notPaired:
            .device(DeviceFailure(.permissionDenied, "the camera is not paired with this computer; run: unleashed pair"))
        case .timedOut:
            .timedOut(operation, after: stepTimeout)
        case .failed(let why):
            .device(DeviceFailure(.link, "\(operation) failed: \(why)"))
        }
    }
}

/// A wait for one message, started by ``RemoteContext/expect(_:where:)``.
public struct Expectation: Sendable {
    let id: Int
    let inbox: NotificationInbox
    let clock: any Clock<Duration>
    let stepTimeout: Duration

    /// The message, or ``CameraError/timedOut(_:after:)`` naming `operation` after `timeout`
    /// (the step timeout when nil); a lost link fails at once.
    public func wait(for operation: String, timeout: Duration? = nil) async throws(CameraError) -> [UInt8] {
        let limit = timeout ?? stepTimeout
        let (inbox, id, clock) = (inbox, id, clock)
        let timer = Task {
            try? await clock.sleep(for: limit)
            if !Task.isCancelled { await inbox.settle(id, with: .timedOut) }
        }
        defer { timer.cancel() }
        let outcome = await withTaskCancellationHandler {
            await inbox.outcome(of: id)
        } onCancel: {
            Task { await inbox.settle(id, with: .cancelled) }
        }
        switch outcome {
        case .message(let message): return message
        case .timedOut: throw .timedOut(operation, after: limit)
        case .cancelled: throw .cancelled
        case .linkLost(let why): throw .device(DeviceFailure(.disconnected, "the camera is not connected: \(why)"))
        }
    }

    /// Stops waiting; a message that comes later goes to the driver's events only.
    public func cancel() async {
        await inbox.settle(id, with: .cancelled)
    }
}

/// The messages of one connection: packets joined by the driver's assemblers, handed to the
/// waits that asked for them first.
actor NotificationInbox {
    enum Outcome: Sendable {
        case message([UInt8])
        case timedOut
        case cancelled
        case linkLost(String)
    }

    private struct Wait {
        let characteristic: GATTCharacteristicID
        let matches: @Sendable ([UInt8]) -> Bool
        var outcome: Outcome?
        var continuation: CheckedContinuation<Outcome, Never>?
    }

    private var waits: [Int: Wait] = [:]
    private var order: [Int] = []
    private var nextID = 0
    private var assemblers: [GATTCharacteristicID: any MessageAssembler] = [:]
    private let makeAssembler: @Sendable (GATTCharacteristicID) -> (any MessageAssembler)?
    private var lost: String?

    init(makeAssembler: @escaping @Sendable (GATTCharacteristicID) -> (any MessageAssembler)?) {
        self.makeAssembler = makeAssembler
    }

    func expect(_ characteristic: GATTCharacteristicID, _ matches: @escaping @Sendable ([UInt8]) -> Bool) -> Int {
        nextID += 1
        waits[nextID] = Wait(characteristic: characteristic, matches: matches, outcome: lost.map { .linkLost($0) })
        order.append(nextID)
        return nextID
    }

    func outcome(of id: Int) async -> Outcome {
        guard let wait = waits[id] else { return .cancelled }
        if let outcome = wait.outcome {
            forget(id)
            return outcome
        }
        return await withCheckedContinuation { continuation in
            waits[id]?.continuation = continuation
        }
    }

    func settle(_ id: Int, with outcome: Outcome) {
        guard var wait = waits[id], wait.outcome == nil || wait.continuation != nil else { return }
        if let continuation = wait.continuation {
            forget(id)
            continuation.resume(returning: outcome)
        } else {
            wait.outcome = outcome
            waits[id] = wait
        }
    }

    private func forget(_ id: Int) {
        waits[id] = nil
        order.removeAll { $0 == id }
    }

    /// Takes a packet; returns the message it completed, if any, after giving it to the first
    /// wait that wanted it. A packet that breaks the framing is returned as the error.
    func deliver(_ packet: [UInt8], on characteristic: GATTCharacteristicID) -> Result<[UInt8]?, MalformedMessage> {
        var message = packet
        if var assembler = assemblers[characteristic] ?? makeAssembler(characteristic) {
            do {
                guard let whole = try assembler.accept(packet) else {
                    assemblers[characteristic] = assembler
                    return .success(nil)
                }
                assemblers[characteristic] = assembler
                message = whole
            } catch {
                assemblers[characteristic] = nil
                return .failure(error)
            }
        }
        for id in order {
            guard let wait = waits[id], wait.outcome == nil, wait.characteristic == characteristic, wait.matches(message) else { continue }
            settle(id, with: .message(message))
            break
        }
        return .success(message)
    }

    /// The link is gone: every wait fails, and so does every wait started later.
    func linkLost(_ reason: String) {
        lost = reason
        for id in order { settle(id, with: .linkLost(reason)) }
    }
}
