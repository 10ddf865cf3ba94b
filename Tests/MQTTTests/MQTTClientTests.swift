import Foundation
import MQTT
import Synchronization
import Testing
import UnleashedTestSupport

/// The client against a real broker (mosquitto, started by each test on a port of its own).
@Suite("MQTT through libmosquitto, against mosquitto", .timeLimit(.minutes(2)))
struct MQTTClientTests {
    @Test("a message goes out and comes back; a retained one reaches a later subscriber")
    func roundTrip() async throws {
        let broker = try await Broker()
        let (first, firstLog) = try connected(broker, id: "first")
        defer { first.stop() }
        try await firstLog.waitFor("connected") { $0.contains(.connected) }
        try first.subscribe("unleashed/test/#")
        // Delivered live, a message has its retain flag clear (MQTT 3.1.1, 3.3.1.3); only one
        // delivered from the broker's store has it set.
        try first.publish(MQTTMessage(topic: "unleashed/test/ping", text: "hello"))
        try await firstLog.waitFor("hello back") { $0.contains(.message(MQTTMessage(topic: "unleashed/test/ping", text: "hello"))) }

        try first.publish(MQTTMessage(topic: "unleashed/test/state", text: "{\"frames\":3}", retain: true))
        let (second, secondLog) = try connected(broker, id: "second")
        defer { second.stop() }
        try await secondLog.waitFor("connected") { $0.contains(.connected) }
        try second.subscribe("unleashed/test/state")
        try await secondLog.waitFor("the retained state") {
            $0.contains(.message(MQTTMessage(topic: "unleashed/test/state", text: "{\"frames\":3}", retain: true)))
        }
    }

    @Test("a client gone without a goodbye has its will published; one that says goodbye does not")
    func lastWill() async throws {
        let broker = try await Broker()
        let (watcher, watcherLog) = try connected(broker, id: "watcher")
        defer { watcher.stop() }
        try await watcherLog.waitFor("connected") { $0.contains(.connected) }
        try watcher.subscribe("unleashed/+/availability")
        // The subscription is in place once the watcher's own message on it comes back: from
        // then on the clients' messages reach it live, not as the broker's retained copies.
        try watcher.publish(MQTTMessage(topic: "unleashed/watcher/availability", text: "subscribed"))
        try await watcherLog.waitFor("the watcher's subscription") {
            $0.contains(.message(MQTTMessage(topic: "unleashed/watcher/availability", text: "subscribed")))
        }

        for (id, goodbye) in [("polite", true), ("crashed", false)] {
            var configuration = MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: id)
            configuration.keepAlive = 5
            configuration.will = MQTTMessage(topic: "unleashed/\(id)/availability", text: "offline", retain: true)
            let client = try MQTTClient(configuration)
            let log = EventLog(client.events)
            try client.start()
            try await log.waitFor("connected") { $0.contains(.connected) }
            try client.publish(MQTTMessage(topic: "unleashed/\(id)/availability", text: "online", retain: true))
            try await watcherLog.waitFor("\(id) online") { $0.contains(.message(MQTTMessage(topic: "unleashed/\(id)/availability", text: "online"))) }
            if goodbye { client.stop() } else { client.drop() }
        }
        // The broker notices the silent one after one and a half keep-alives.
        try await watcherLog.waitFor("crashed offline", timeout: .seconds(15)) {
            $0.contains(.message(MQTTMessage(topic: "unleashed/crashed/availability", text: "offline")))
        }
        #expect(!watcherLog.events.contains(.message(MQTTMessage(topic: "unleashed/polite/availability", text: "offline"))))
    }

    @Test("the broker killed and started again: the client reconnects by itself and a queued message goes out")
    func brokerLost() async throws {
        let broker = try await Broker()
        var configuration = MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: "survivor")
        configuration.keepAlive = 5
        let client = try MQTTClient(configuration)
        defer { client.stop() }
        let log = EventLog(client.events)
        try client.start()
        try await log.waitFor("connected") { $0.contains(.connected) }
        broker.stop()
        try await log.waitFor("the loss") { events in events.contains { if case .disconnected = $0 { true } else { false } } }
        // Published while the broker is away: QoS 1 is kept and sent once connected again.
        try client.publish(MQTTMessage(topic: "unleashed/survivor/frames", text: "41", qos: 1, retain: true))
        try await broker.start()
        try await log.waitFor("connected again", timeout: .seconds(60)) { $0.filter { $0 == .connected }.count == 2 }
        let (reader, readerLog) = try connected(broker, id: "reader")
        defer { reader.stop() }
        try await readerLog.waitFor("connected") { $0.contains(.connected) }
        try reader.subscribe("unleashed/survivor/frames")
        // Connected again is not yet sent: the queued message reaches the reader as the broker's
        // retained copy when it went out before the subscription, or live (retain cleared) after it.
        try await readerLog.waitFor("the queued message") { events in
            events.contains { event in
                guard case .message(let message) = event else { return false }
                return message.topic == "unleashed/survivor/frames" && message.payload == Array("41".utf8)
            }
        }
    }

    @Test("over TLS: a broker whose certificate the given CA signed is reached; checked against the system's CAs instead, it is refused")
    func tls() async throws {
        let broker = try await Broker(tls: true)
        var configuration = MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: "secure")
        configuration.tls = true
        configuration.caFile = broker.caFile
        let client = try MQTTClient(configuration)
        defer { client.stop() }
        let log = EventLog(client.events)
        try client.start()
        try await log.waitFor("connected over TLS") { $0.contains(.connected) }
        try client.subscribe("unleashed/tls/#")
        try client.publish(MQTTMessage(topic: "unleashed/tls/ping", text: "sealed"))
        try await log.waitFor("the message back") { $0.contains(.message(MQTTMessage(topic: "unleashed/tls/ping", text: "sealed"))) }

        // The broker's CA is not among the system's: the handshake fails, and no connection is made.
        var untrusting = MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: "untrusting")
        untrusting.tls = true
        let refused = try MQTTClient(untrusting)
        let refusedLog = EventLog(refused.events)
        // Only what the broker logs from here on: its start was probed with a bare connection.
        let logged = broker.log.count
        try refused.start()
        // libmosquitto reports a failed handshake as a failed attempt only sometimes; the broker
        // logs the TLS error each time.
        try await poll("the broker to log the refused handshake") { broker.log.dropFirst(logged).contains("OpenSSL Error") }
        #expect(!refusedLog.events.contains(.connected), "\(refusedLog.events)")
        refused.stop()
    }

    @Test("bad topics and settings are refused before anything is sent; no broker is retried, not a crash")
    func refusals() async throws {
        let broker = try await Broker()
        let client = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: "strict"))
        defer { client.stop() }
        #expect(throws: MQTTError.invalid("\"a/+/b\" is not a topic to publish to")) { try client.publish(MQTTMessage(topic: "a/+/b", text: "x")) }
        #expect(throws: MQTTError.invalid("\"a/#/b\" is not a topic filter")) { try client.subscribe("a/#/b") }
        #expect(throws: MQTTError.invalid("the broker's port 0 is not a port")) {
            _ = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: 0, clientID: "x"))
        }
        #expect(throws: MQTTError.invalid("a keep-alive of 2 s: it must be 5 to 65535 s")) {
            var configuration = MQTTClient.Configuration(host: "127.0.0.1", port: 1883, clientID: "x")
            configuration.keepAlive = 2
            _ = try MQTTClient(configuration)
        }
        #expect(throws: MQTTError.invalid("the client id is empty")) {
            _ = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: 1883, clientID: ""))
        }
        // Nobody on this port: the client says so and keeps trying, without failing or crashing.
        let lonely = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: try Broker.freePortForTests(), clientID: "lonely"))
        let log = EventLog(lonely.events)
        try lonely.start()
        try await log.waitFor("a failed attempt") { events in events.contains { if case .disconnected = $0 { true } else { false } } }
        lonely.stop()
    }

    private func connected(_ broker: Broker, id: String) throws -> (MQTTClient, EventLog) {
        let client = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: id))
        let log = EventLog(client.events)
        try client.start()
        return (client, log)
    }
}

/// Every event a client reported, collected as they come, for a test to wait on.
final class EventLog: Sendable {
    private let seen = Observed<[MQTTClient.Event]>([])

    init(_ events: AsyncStream<MQTTClient.Event>) {
        Task { [seen] in
            for await event in events { seen.append(event) }
        }
    }

    var events: [MQTTClient.Event] { seen.value }

    /// Waits until `condition` holds on the events so far, each event waking it.
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: @escaping @Sendable ([MQTTClient.Event]) -> Bool) async throws {
        do {
            try await seen.wait(what, timeout: timeout, until: condition)
        } catch {
            Issue.record("no \(what); events: \(events)")
            throw error
        }
    }
}
