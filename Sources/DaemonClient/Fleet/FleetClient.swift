public import Foundation
public import JSON
public import MQTT
import Synchronization
public import UnleashedAPI

/// `unleashed fleet`: one command to every host's daemon through the broker, and their answers.
///
/// A fleet shot is published once to `<prefix>/fleet/shoot` with an id and a UTC time; each host
/// fires its cameras at that time on its own clock and answers on `<prefix>/<node>/fleet`. What
/// the hosts are is what answers: the command waits until the time has passed and `wait` more,
/// and reports every answer carrying its id.
public final class FleetClient: Sendable {
    private let client: MQTTClient
    private let prefix: String

    /// Where the hosts' broker is, and how to log in: what `[mqtt]` in a daemon's configuration says.
    public struct Broker: Sendable, Equatable {
        public var address: BrokerAddress
        public var username: String?
        public var password: String?
        /// The certificate authority a TLS broker is checked against; nil for the system's.
        public var caFile: String?
        /// The first levels of every topic.
        public var topicPrefix: String

        public init(address: BrokerAddress, username: String?, password: String?, caFile: String?, topicPrefix: String) {
            self.address = address
            self.username = username
            self.password = password
            self.caFile = caFile
            self.topicPrefix = topicPrefix
        }
    }

    /// A client of `broker`, with an id of its own.
    public init(broker: Broker) throws(MQTTError) {
        var configuration = MQTTClient.Configuration(host: broker.address.host, port: broker.address.port,
                                                     clientID: "unleashed-fleet-\(UUID().uuidString.prefix(8).lowercased())")
        configuration.username = broker.username
        configuration.password = broker.password
        configuration.tls = broker.address.tls
        configuration.caFile = broker.caFile
        client = try MQTTClient(configuration)
        prefix = broker.topicPrefix
    }

    /// Fires every host's cameras (or a group's) at `at`, and returns the hosts' answers, sorted
    /// by node. Waits until every host the broker says is online has answered, or `wait` after
    /// the time. Throws when the broker cannot be reached within `connectTimeout`.
    public func shoot(at: Date, group: String?, wait: Duration, connectTimeout: Duration = .seconds(5)) async throws(MQTTError) -> [FleetAnswer] {
        let deadline = ContinuousClock.now + max(Duration.checked(from: Date(), to: at) ?? .zero, .zero) + wait
        return try await ask(MQTTTopics(prefix: prefix, node: "+").fleetShoot, { FleetShootCommand(id: $0, at: at, group: group) },
                             until: deadline, connectTimeout: connectTimeout)
    }

    /// Starts a time-lapse on every host's cameras (or a group's) from `start`, every
    /// `interval`, for `frames` slots (nil: until stopped), and returns the hosts' answers, each
    /// naming its job. Waits until every online host has answered, or `wait`.
    public func timelapse(start: Date, interval: Duration, frames: Int?, group: String?, wait: Duration,
                          connectTimeout: Duration = .seconds(5)) async throws(MQTTError) -> [FleetAnswer] {
        try await ask(MQTTTopics(prefix: prefix, node: "+").fleetTimelapse,
                      { FleetTimelapseCommand(id: $0, start: start, interval: interval, frames: frames, group: group) },
                      until: ContinuousClock.now + wait, connectTimeout: connectTimeout)
    }

    /// Stops every host's time-lapses (or those on a group's cameras) now, and returns the
    /// hosts' answers, each listing the jobs it stopped. Waits until every online host has
    /// answered, or `wait`.
    public func stop(group: String?, wait: Duration, connectTimeout: Duration = .seconds(5)) async throws(MQTTError) -> [FleetAnswer] {
        try await ask(MQTTTopics(prefix: prefix, node: "+").fleetStop, { FleetStopCommand(id: $0, group: group) },
                      until: ContinuousClock.now + wait, connectTimeout: connectTimeout)
    }

    /// Publishes the command made for an id of its own to `topic`, and returns every host's
    /// answer carrying that id, sorted by node: once every host the broker lists as online has
    /// answered, or at `deadline`. An answer that is not a ``FleetAnswer`` is passed over.
    private func ask(_ topic: String, _ command: (String) -> some Encodable, until deadline: ContinuousClock.Instant,
                     connectTimeout: Duration) async throws(MQTTError) -> [FleetAnswer] {
        let id = String(UUID().uuidString.prefix(12).lowercased())
        let topics = MQTTTopics(prefix: prefix, node: "+")
        let prefix = prefix
        let heard = try await exchange(subscribing: [topics.allFleetAnswers, topics.availability],
                                       publishing: MQTTMessage(topic: topic, payload: Array(JSONValue(encoding: command(id)).data)),
                                       until: .instant(deadline), connectTimeout: connectTimeout) { message -> FleetHeard? in
            if message.topic.hasSuffix("/availability") {
                let node = message.topic.dropFirst(prefix.count + 1).split(separator: "/").first.map(String.init) ?? ""
                return .availability(node: node, online: message.text == "online")
            }
            guard let answer = try? JSONDecoder().decode(FleetAnswer.self, from: Data(message.payload)), answer.id == id else { return nil }
            return .answer(answer)
        } finished: { heard in
            var online: Set<String> = []
            var answered: Set<String> = []
            for item in heard {
                switch item {
                case .availability(let node, true): online.insert(node)
                case .availability(let node, false): online.remove(node)
                case .answer(let answer): answered.insert(answer.node)
                }
            }
            return !online.isEmpty && online.isSubset(of: answered)
        }
        let answers = heard.compactMap { item -> FleetAnswer? in if case .answer(let answer) = item { answer } else { nil } }
        return answers.sorted { $0.node < $1.node }
    }

    /// Every host's retained state as the broker keeps it:
    /// `{node: {availability, clock, cameras: {name: {state, run}}, jobs: {id: job}}}`.
    public func status(wait: Duration = .milliseconds(500), connectTimeout: Duration = .seconds(5)) async throws(MQTTError) -> JSONValue {
        // The broker sends what it retains as it takes the subscription: `wait` counts from then.
        let messages = try await exchange(subscribing: FleetState.filters(prefix: prefix), publishing: nil, until: .afterConnecting(wait),
                                          connectTimeout: connectTimeout) { message -> MQTTMessage? in message } finished: { _ in false }
        var fleet = FleetState(prefix: prefix)
        for message in messages { _ = fleet.take(topic: message.topic, payload: message.payload) }
        return fleet.statusJSON
    }

    /// Connects, subscribes to `filters`, publishes `message` once subscribed, and collects what
    /// `keep` keeps of the messages that arrive until `deadline`, or until `finished` says what
    /// was kept is all. Fails when no connection is made within `connectTimeout`. A client makes
    /// one exchange: stopping it at the end ends its events.
    private func exchange<T: Sendable>(subscribing filters: [String], publishing message: MQTTMessage?, until deadline: ExchangeDeadline,
                                       connectTimeout: Duration, keep: @escaping @Sendable (MQTTMessage) -> T?,
                                       finished: @escaping @Sendable ([T]) -> Bool) async throws(MQTTError) -> [T] {
        let state = ExchangeState<T>()
        let client = client
        // Published to a topic of its own after the subscription: the broker handles a client's
        // packets in order, so once it comes back the subscription is in place, and the command
        // goes out with its answers sure to be heard.
        let marker = "\(prefix)/fleet/ready/\(UUID().uuidString.prefix(8))"
        let events = client.events
        let (connections, connection) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        try client.start()
        let connectBy = ContinuousClock.now + connectTimeout
        // The first to decide ends the exchange: the events as they come (all heard, or a
        // failure), the connection limit with no connection, or the deadline once connected.
        let outcome = await withTaskGroup(of: Result<[T], MQTTError>?.self) { group -> Result<[T], MQTTError> in
            group.addTask {
                var published = false
                for await event in events {
                    switch event {
                    case .connected:
                        // Connected only after the deadline: nothing more to wait for.
                        let late = state.withLock { $0.connected = true; return $0.pastDeadline }
                        if late { return .success(state.withLock { $0.kept }) }
                        connection.yield(.now)
                        do throws(MQTTError) {
                            for filter in filters { try client.subscribe(filter) }
                            try client.subscribe(marker)
                            try client.publish(MQTTMessage(topic: marker, text: "ready"))
                        } catch {
                            return .failure(error)
                        }
                    case .message(let received) where received.topic == marker:
                        guard !published, let message else { continue }
                        published = true
                        do throws(MQTTError) { try client.publish(message) } catch { return .failure(error) }
                    case .message(let received):
                        guard let value = keep(received) else { continue }
                        let kept = state.withLock { $0.kept.append(value); return $0.kept }
                        if finished(kept) { return .success(kept) }
                    case .disconnected, .refused:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(until: connectBy)
                guard !Task.isCancelled, !state.withLock({ $0.connected }) else { return nil }
                return .failure(.failed("the broker did not answer within \(connectTimeout)"))
            }
            group.addTask {
                switch deadline {
                case .instant(let instant):
                    try? await Task.sleep(until: instant)
                case .afterConnecting(let wait):
                    for await connected in connections {
                        try? await Task.sleep(until: connected + wait)
                        break
                    }
                }
                guard !Task.isCancelled else { return nil }
                // Not connected yet: the connection, or its limit, decides.
                let connected = state.withLock { $0.pastDeadline = true; return $0.connected }
                return connected ? .success(state.withLock { $0.kept }) : nil
            }
            var decided: Result<[T], MQTTError> = .success([])
            while let next = await group.next() {
                guard let next else { continue }
                decided = next
                break
            }
            group.cancelAll()
            return decided
        }
        client.stop()
        return try outcome.get()
    }
}

/// When an exchange stops listening: at an instant, or a while after it has connected.
private enum ExchangeDeadline: Sendable {
    case instant(ContinuousClock.Instant)
    case afterConnecting(Duration)
}

/// What an exchange has seen so far, shared by the tasks that decide when it ends.
private final class ExchangeState<T: Sendable>: Sendable {
    struct Seen {
        var connected = false
        var pastDeadline = false
        var kept: [T] = []
    }

    private let seen = Mutex(Seen())

    func withLock<R: Sendable>(_ body: (inout sending Seen) -> sending R) -> R {
        seen.withLock(body)
    }
}

/// What a fleet shot hears: a host's availability (to know whom to wait for), or an answer.
private enum FleetHeard: Sendable {
    case availability(node: String, online: Bool)
    case answer(FleetAnswer)
}
