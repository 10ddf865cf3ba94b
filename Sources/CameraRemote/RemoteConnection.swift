public import CameraKit
import CameraProtocols
import GATT
public import UnleashedKit

/// How long a camera connection waits for each step.
public struct RemoteTiming: Hashable, Sendable {
    /// How long a scan looks for the camera.
    public var scanTimeout: Duration
    /// How long one step of an operation waits for the camera's answer.
    public var stepTimeout: Duration
    /// How long the handshake may take: Canon and Fujifilm wait for a person to confirm on
    /// the camera at the first pairing.
    public var handshakeTimeout: Duration

    public init(scanTimeout: Duration = .seconds(10), stepTimeout: Duration = .seconds(3), handshakeTimeout: Duration = .seconds(60)) {
        self.scanTimeout = scanTimeout
        self.stepTimeout = stepTimeout
        self.handshakeTimeout = handshakeTimeout
    }
}

/// What a camera connection reports, in order.
public enum RemoteConnectionEvent: Hashable, Sendable {
    case state(ConnectionState)
    /// Something the camera said outside a request.
    case signal(RemoteSignal)
    /// A packet that broke the protocol's framing; the connection carries on.
    case protocolError(String)
}

/// The link to one camera kept up by the project's one connection driver (the same state
/// machine, backoff and link handling a module's link follows), over the camera brand's dialect:
/// scan, connect, subscribe, the brand's handshake, its keep-alive while ready, and after a
/// loss, retries spaced by ``ReconnectPolicy`` so that a camera that went away costs a
/// connection attempt only now and then, not a radio kept busy.
public typealias RemoteConnection = ConnectionDriver<RemoteConnectionDialect>

/// A camera brand's remote protocol as a dialect of the connection driver: links from a
/// ``GATTLinkProvider``, the ``CameraRemoteDriver``'s subscriptions as the services, a
/// ``RemoteContext`` as the session, the driver's handshake and keep-alive, and the signals it
/// reads in the camera's messages as events.
public struct RemoteConnectionDialect: ConnectionDialect {
    let provider: any GATTLinkProvider
    let driver: any CameraRemoteDriver
    let timing: RemoteTiming
    let clock: any Clock<Duration>

    public var scanTimeout: Duration { timing.scanTimeout }
    public var handshakeLimit: Duration? { timing.handshakeTimeout }
    public var keepAliveInterval: Duration? { driver.keepAliveInterval }
    public var deviceWord: String { "camera" }
    public var endsEventsOnDisconnect: Bool { true }

    public func discover(timeout: Duration) async -> Bool {
        await Self.seen { () async throws(GATTError) in try await provider.discover(timeout: timeout) }
    }

    public func connect() async throws(ConnectionStepFailure) -> any GATTLink {
        try await Self.linking { () async throws(GATTError) in try await provider.connect() }
    }

    /// Subscribes to the driver's characteristics (cameras such as GoPro forget subscriptions).
    public func resolve(_ link: any GATTLink) async throws(ConnectionStepFailure) -> RemoteContext {
        for characteristic in driver.subscriptions {
            guard await link.offers(characteristic) else {
                throw .notThisDevice("the camera has no characteristic \(characteristic.characteristic); "
                    + "check that its Bluetooth remote is switched on")
            }
            do throws(GATTError) {
                try await link.subscribe(characteristic)
            } catch {
                throw .lost(error.description)
            }
        }
        let driver = driver
        let inbox = NotificationInbox { driver.makeAssembler(for: $0) }
        return RemoteContext(link: link, inbox: inbox, stepTimeout: timing.stepTimeout, clock: clock) {
            driver.explain($0, during: $1)
        }
    }

    public func relay(_ context: RemoteContext, to report: @escaping @Sendable (LinkReport<RemoteConnectionEvent>) async -> Void) async {
        let inbox = context.inbox
        for await event in context.link.events {
            switch event {
            case .value(let characteristic, let packet):
                switch await inbox.deliver(packet, on: characteristic) {
                case .success(let message?):
                    for signal in driver.events(from: message, on: characteristic) { await report(.event(.signal(signal))) }
                case .success(nil): break
                case .failure(let error): await report(.event(.protocolError(error.description)))
                }
            case .writeFailed:
                // Drivers write with `write(_:to:withResponse:)`, which reports its own failure.
                break
            case .disconnected(let reason):
                await inbox.linkLost(reason)
                await report(.lost(reason))
                return
            }
        }
    }

    public func handshake(_ context: RemoteContext) async throws(ConnectionStepFailure) -> String? {
        do throws(CameraError) {
            return try await driver.handshake(context)
        } catch .device(let failure) where failure.kind == .disconnected {
            throw .lost(failure.message)
        } catch .device(let failure) where failure.kind == .unsupported || failure.kind == .permissionDenied {
            throw .incompatible(failure.message)
        } catch {
            throw .failed(error.description)
        }
    }

    /// The driver's keep-alive; a failure means the link is lost.
    public func keepAlive(_ context: RemoteContext) async -> KeepAliveOutcome {
        do throws(CameraError) {
            try await driver.keepAlive(context)
            return .alive
        } catch .cancelled {
            return .stopped
        } catch {
            return .expired
        }
    }

    public func stateChanged(_ state: ConnectionState) -> RemoteConnectionEvent { .state(state) }

    public func close(_ link: any GATTLink) async {
        await link.close()
    }
}

extension ConnectionDriver where D == RemoteConnectionDialect {
    public init(provider: any GATTLinkProvider, driver: any CameraRemoteDriver, policy: ReconnectPolicy = ReconnectPolicy(),
                timing: RemoteTiming = RemoteTiming(), clock: any Clock<Duration> = ContinuousClock(),
                seed: UInt64 = .random(in: .min ... .max)) {
        self.init(RemoteConnectionDialect(provider: provider, driver: driver, timing: timing, clock: clock),
                  policy: policy, clock: clock, seed: seed)
    }

    /// The model the last handshake reported.
    public var model: String? { greeting }

    /// The context for an operation now, or the reason there is none.
    public func currentContext() throws(CameraError) -> RemoteContext {
        guard let context = readySession else {
            throw .device(DeviceFailure(.disconnected, "the camera is not connected (\(state))"))
        }
        return context
    }
}
