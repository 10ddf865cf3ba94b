public import GATT
public import UnleashedKit
import Synchronization

/// Links to a ``SimulatedCameraBody`` in memory, as BlueZ links to a camera: demo mode's
/// `--demo-camera` and the drivers' tests. Each connection is a new ``InMemoryGATTLink``.
public struct InMemoryCameraProvider: GATTLinkProvider {
    public let body: any SimulatedCameraBody
    /// How long a connect attempt takes.
    public var connectDelay: Duration
    /// What the scan and the connect attempt wait on.
    public let clock: any Clock<Duration>

    public init(body: any SimulatedCameraBody, connectDelay: Duration = .milliseconds(5), clock: any Clock<Duration> = ContinuousClock()) {
        self.body = body
        self.connectDelay = connectDelay
        self.clock = clock
    }

    public func discover(timeout: Duration) async throws(GATTError) {
        // Scans in 20 ms rounds until the camera advertises or the rounds add up to the timeout.
        var scanned = Duration.zero
        while !(await body.isConnectable) {
            guard scanned < timeout else { throw .notConnected("the camera is not advertising") }
            try? await clock.sleep(for: .milliseconds(20))
            scanned += .milliseconds(20)
        }
    }

    public func connect() async throws(GATTError) -> any GATTLink {
        try? await clock.sleep(for: connectDelay)
        guard await body.isConnectable else { throw .notConnected("the camera did not answer (asleep or out of range)") }
        return await InMemoryGATTLink(body: body)
    }
}

/// One connection to a simulated body.
public final class InMemoryGATTLink: GATTLink {
    public let events: AsyncStream<GATTLinkEvent>
    public let mtu = 23
    private let body: any SimulatedCameraBody
    private let sink: AsyncStream<GATTLinkEvent>.Continuation
    private let state = Mutex(State())

    private struct State {
        var connected = true
        var subscribed: Set<GATTCharacteristicID> = []
    }

    init(body: any SimulatedCameraBody) async {
        self.body = body
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        await body.connected { [weak self] signal in self?.receive(signal) }
    }

    private func receive(_ signal: BodySignal) {
        switch signal {
        case .value(let characteristic, let value):
            if state.withLock({ $0.connected && $0.subscribed.contains(characteristic) }) {
                sink.yield(.value(characteristic, value))
            }
        case .dropLink(let reason):
            drop(reason)
        }
    }

    private func drop(_ reason: String) {
        let wasConnected = state.withLock { state in
            defer { state.connected = false }
            return state.connected
        }
        guard wasConnected else { return }
        sink.yield(.disconnected(reason: reason))
        sink.finish()
    }

    private var isConnected: Bool { state.withLock { $0.connected } }

    public func offers(_ characteristic: GATTCharacteristicID) async -> Bool {
        body.services.contains { $0.identifiers.contains(characteristic) }
    }

    public func write(_ value: [UInt8], to characteristic: GATTCharacteristicID, withResponse: Bool) async throws(GATTError) {
        guard isConnected else { throw .notConnected("the link is down") }
        guard await offers(characteristic) else { throw .missing(characteristic) }
        guard value.count <= mtu - 3 || withResponse else { throw .failed("value of \(value.count) bytes exceeds the ATT MTU") }
        do {
            try await body.write(value, to: characteristic)
        } catch {
            if withResponse { throw .refused(error) }
        }
    }

    public nonisolated(nonsending) func send(_ values: [[UInt8]], to characteristic: GATTCharacteristicID) async throws(GATTError) {
        for value in values { try await write(value, to: characteristic, withResponse: false) }
    }

    public func read(_ characteristic: GATTCharacteristicID) async throws(GATTError) -> [UInt8] {
        guard isConnected else { throw .notConnected("the link is down") }
        guard await offers(characteristic) else { throw .missing(characteristic) }
        do {
            return try await body.read(characteristic)
        } catch {
            throw .refused(error)
        }
    }

    public func subscribe(_ characteristic: GATTCharacteristicID) async throws(GATTError) {
        guard isConnected else { throw .notConnected("the link is down") }
        guard await offers(characteristic) else { throw .missing(characteristic) }
        state.withLock { _ = $0.subscribed.insert(characteristic) }
    }

    public func close() async {
        guard isConnected else { return }
        drop("closed by this computer")
        await body.disconnected()
    }
}
