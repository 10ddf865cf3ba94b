import CMosquitto
import Synchronization

/// A message to or from the broker.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    /// 0, 1 or 2.
    public var qos: Int
    /// Kept by the broker for whoever subscribes later (a state, an availability).
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: Int = 1, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// The payload as text, as nearly every payload here is.
    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Why MQTT failed, in words for a log or a status.
public enum MQTTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libmosquitto is missing or unusable.
    case library(String)
    /// A topic, filter or setting the library refused before anything was sent.
    case invalid(String)
    /// The library could not do what was asked (no connection, no memory, ...).
    case failed(String)

    public var description: String {
        switch self {
        case .library(let why), .invalid(let why), .failed(let why): why
        }
    }
}

/// An MQTT 3.1.1 client: libmosquitto on its own network thread (`mosquitto_loop_start`), which
/// connects, keeps the connection alive and reconnects with back-off by itself.
///
/// What happens on the connection arrives in ``events``, in order: each connection made, each
/// one lost, each message for a subscription. Subscriptions do not outlive a connection (the
/// session is clean), so a client subscribes again on each ``Event/connected``, as it publishes
/// its retained state again there.
public final class MQTTClient: Sendable {
    /// Where and as whom to connect.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var clientID: String
        public var username: String?
        public var password: String?
        /// TLS to the broker (`mqtts://`), checked against `caFile`, or the system's certificates without one.
        public var tls = false
        public var caFile: String?
        /// Seconds between keep-alives (5 at least, as libmosquitto asks); the broker declares the
        /// client gone (and sends its will) after one and a half of them without a word.
        public var keepAlive = 30
        /// Published by the broker when the connection ends without a goodbye.
        public var will: MQTTMessage?
        /// Seconds before a reconnection, doubling up to `reconnectMaximum`.
        public var reconnectDelay = 1
        public var reconnectMaximum = 30

        public init(host: String, port: Int, clientID: String) {
            self.host = host
            self.port = port
            self.clientID = clientID
        }
    }

    public enum Event: Sendable, Equatable {
        case connected
        /// Lost, or not reached; libmosquitto tries again by itself.
        case disconnected(String)
        /// The broker answered the connection and refused the session (its CONNACK code);
        /// libmosquitto tries again by itself.
        case refused(Refusal)
        case message(MQTTMessage)
    }

    /// A broker's refusal of a session: MQTT 3.1.1's CONNACK return code (section 3.2.2.3).
    public struct Refusal: Sendable, Equatable, CustomStringConvertible {
        public var code: Int32

        public init(code: Int32) {
            self.code = code
        }

        /// The user name and password, or what they may do, are the cause (codes 4 and 5).
        public var isCredentials: Bool { code == 4 || code == 5 }

        public var description: String {
            let reason = switch code {
            case 1: "it does not take MQTT 3.1.1"
            case 2: "it refused the client id"
            case 3: "it is unavailable"
            case 4: "bad user name or password"
            case 5: "not authorised"
            default: "code \(code)"
            }
            return "the broker refused the connection (\(reason))"
        }
    }

    /// What happens on the connection, until ``stop()``.
    public let events: AsyncStream<Event>

    private let library: LibMosquitto
    private let handle: Handle
    private let relay: Unmanaged<Relay>
    private let configuration: Configuration
    private let state = Mutex(State.created)
    /// What waits between first attempts while the broker has never been reached.
    private let clock: any Clock<Duration>
    /// Tries the first connection again until it is made (see ``start()``).
    private let firstAttempts = Mutex<Task<Void, Never>?>(nil)

    private enum State { case created, connecting, attempting, started, stopped }

    /// The handle, used from any thread: libmosquitto locks inside in threaded mode.
    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    /// Where the library's callbacks (on its thread) hand over events.
    private final class Relay: Sendable {
        let continuation: AsyncStream<Event>.Continuation
        let describe: @Sendable (Int32) -> String
        init(_ continuation: AsyncStream<Event>.Continuation, describe: @escaping @Sendable (Int32) -> String) {
            self.continuation = continuation
            self.describe = describe
        }
    }

    /// - Parameter clock: What the first connection's retries wait on.
    public init(_ configuration: Configuration, clock: any Clock<Duration> = ContinuousClock()) throws(MQTTError) {
        self.clock = clock
        let library = try LibMosquitto.shared.get()
        guard (1...65535).contains(configuration.port) else { throw .invalid("the broker's port \(configuration.port) is not a port") }
        guard !configuration.host.isEmpty else { throw .invalid("the broker's host is empty") }
        // MQTT 3.1.1 allows client ids of up to 23 bytes for certain; brokers take more, and
        // mosquitto does: the id stays as configured.
        guard !configuration.clientID.isEmpty else { throw .invalid("the client id is empty") }
        guard (5...65535).contains(configuration.keepAlive) else {
            throw .invalid("a keep-alive of \(configuration.keepAlive) s: it must be 5 to 65535 s")
        }
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let relay = Unmanaged.passRetained(Relay(continuation, describe: { library.describe($0) }))
        guard let pointer = library.new(configuration.clientID, true, relay.toOpaque()) else {
            relay.release()
            throw .failed("libmosquitto could not make a client")
        }
        self.library = library
        self.handle = Handle(pointer: pointer)
        self.relay = relay
        self.configuration = configuration
        self.events = events
        do throws(MQTTError) {
            try configure()
        } catch {
            library.destroy(pointer)
            relay.release()
            continuation.finish()
            throw error
        }
    }

    private func configure() throws(MQTTError) {
        let pointer = handle.pointer
        _ = library.intOption(pointer, MOSQ_OPT_PROTOCOL_VERSION.rawValue, MQTT_PROTOCOL_V311)
        if let will = configuration.will {
            try checkTopic(will.topic)
            try check(will.payload.withUnsafeBytes {
                library.willSet(pointer, will.topic, Int32($0.count), $0.baseAddress, Int32(will.qos), will.retain)
            }, "the last will")
        }
        if let username = configuration.username {
            try check(library.usernamePasswordSet(pointer, username, configuration.password), "the credentials")
        }
        if configuration.tls {
            if let caFile = configuration.caFile {
                try check(library.tlsSet(pointer, caFile, nil, nil, nil, nil), "TLS with \(caFile)")
            } else {
                _ = library.intOption(pointer, MOSQ_OPT_TLS_USE_OS_CERTS.rawValue, 1)
            }
        }
        try check(library.reconnectDelaySet(pointer, UInt32(max(configuration.reconnectDelay, 1)),
                                            UInt32(max(configuration.reconnectMaximum, 1)), true), "the reconnection delay")
        library.connectCallbackSet(pointer) { _, context, code in
            guard let context else { return }
            let relay = Unmanaged<Relay>.fromOpaque(context).takeUnretainedValue()
            if code == 0 {
                relay.continuation.yield(.connected)
            } else {
                relay.continuation.yield(.refused(Refusal(code: code)))
            }
        }
        library.disconnectCallbackSet(pointer) { _, context, code in
            guard let context else { return }
            let relay = Unmanaged<Relay>.fromOpaque(context).takeUnretainedValue()
            relay.continuation.yield(.disconnected(code == 0 ? "disconnected" : "the connection was lost (\(relay.describe(code)))"))
        }
        library.messageCallbackSet(pointer) { _, context, message in
            guard let context, let message = message?.pointee, let topic = message.topic else { return }
            let relay = Unmanaged<Relay>.fromOpaque(context).takeUnretainedValue()
            let payload = message.payload.map {
                Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen)))
            } ?? []
            relay.continuation.yield(.message(MQTTMessage(topic: String(cString: topic), payload: payload,
                                                          qos: Int(message.qos), retain: message.retain)))
        }
    }

    /// Starts connecting, on libmosquitto's thread; ``Event/connected`` says when it has.
    /// A broker that is not there yet is tried again with back-off.
    ///
    /// libmosquitto's thread reconnects a connection it once had, but not one whose first
    /// attempt failed (its loop ends, or waits on a connection that never was): until the first
    /// attempt succeeds, this client tries again itself, on `clock`, and starts the thread then.
    public func start() throws(MQTTError) {
        let first = state.withLock { state in
            defer { if state == .created { state = .connecting } }
            return state == .created
        }
        guard first else { return }
        if try attempt() { return }
        // Weakly held: a client let go without stop() ends its attempts with it.
        let task = Task { [weak self, configuration, clock] in
            var delay = Duration.seconds(max(configuration.reconnectDelay, 1))
            while !Task.isCancelled {
                do { try await clock.sleep(for: delay) } catch { return }
                guard let self, let made = try? attempt(), !made else { return }
                delay = min(delay * 2, .seconds(max(configuration.reconnectMaximum, 1)))
            }
        }
        firstAttempts.withLock { $0 = task }
    }

    /// One first attempt: true once the connection is under way and libmosquitto's thread runs
    /// it (or the client was stopped meanwhile); false after a refusal, which is reported.
    private func attempt() throws(MQTTError) -> Bool {
        // The attempt runs outside the lock (a broker's name may take seconds to resolve), so
        // that stop() is never held up by it; `attempting` keeps a second attempt out.
        let mine = state.withLock { state in
            guard state == .connecting else { return false }
            state = .attempting
            return true
        }
        guard mine else { return true }
        let status = library.connectAsync(handle.pointer, configuration.host, Int32(configuration.port), Int32(configuration.keepAlive))
        return try state.withLock { (state: inout State) throws(MQTTError) -> Bool in
            // Stopped meanwhile: nothing more to do; the handle is destroyed with the client.
            guard state == .attempting else { return true }
            guard status == MOSQ_ERR_SUCCESS.rawValue else {
                state = .connecting
                relay.takeUnretainedValue().continuation.yield(.disconnected("cannot reach the broker yet (\(library.describe(status)))"))
                return false
            }
            do throws(MQTTError) {
                try check(library.loopStart(handle.pointer), "libmosquitto's thread")
            } catch {
                state = .stopped
                throw error
            }
            state = .started
            return true
        }
    }

    /// Queues `message` for the broker. Without a connection the library keeps QoS 1 and 2
    /// messages and sends them once connected; QoS 0 ones are lost, as MQTT allows.
    public func publish(_ message: MQTTMessage) throws(MQTTError) {
        try checkTopic(message.topic)
        let status = message.payload.withUnsafeBytes {
            library.publish(handle.pointer, nil, message.topic, Int32($0.count), $0.baseAddress, Int32(message.qos), message.retain)
        }
        // Queued while the connection is down: sent on reconnection.
        if status == MOSQ_ERR_NO_CONN.rawValue { return }
        try check(status, "publishing to \(message.topic)")
    }

    /// Subscribes to `filter` on the current connection (again after each ``Event/connected``).
    public func subscribe(_ filter: String, qos: Int = 1) throws(MQTTError) {
        guard library.subscribeTopicCheck(filter) == MOSQ_ERR_SUCCESS.rawValue else { throw .invalid("\(filter.debugDescription) is not a topic filter") }
        try check(library.subscribe(handle.pointer, nil, filter, Int32(qos)), "subscribing to \(filter)")
    }

    /// Says goodbye (so the broker does not send the will), stops the thread and ends ``events``.
    public func stop() {
        let wasStarted = state.withLock { state in
            defer { state = .stopped }
            return state == .started
        }
        firstAttempts.withLock { $0 }?.cancel()
        if wasStarted {
            _ = library.disconnect(handle.pointer)
            _ = library.loopStop(handle.pointer, false)
        }
        relay.takeUnretainedValue().continuation.finish()
    }

    /// Ends the connection without a goodbye, as a crash or a pulled cable would: the broker
    /// sends the will. For tests of the will and of reconnection.
    public func drop() {
        let wasStarted = state.withLock { state in
            defer { state = .stopped }
            return state == .started
        }
        firstAttempts.withLock { $0 }?.cancel()
        if wasStarted { _ = library.loopStop(handle.pointer, true) }
        relay.takeUnretainedValue().continuation.finish()
    }

    deinit {
        stop()
        library.destroy(handle.pointer)
        relay.release()
    }

    private func checkTopic(_ topic: String) throws(MQTTError) {
        guard library.publishTopicCheck(topic) == MOSQ_ERR_SUCCESS.rawValue else {
            throw .invalid("\(topic.debugDescription) is not a topic to publish to")
        }
    }

    private func check(_ status: Int32, _ what: String) throws(MQTTError) {
        guard status == MOSQ_ERR_SUCCESS.rawValue else { throw .failed("\(what): \(library.describe(status))") }
    }
}
