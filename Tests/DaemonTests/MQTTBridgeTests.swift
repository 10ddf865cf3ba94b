@testable import Daemon
import Foundation
import Intervalometer
import JSON
import Logging
import MQTT
import Synchronization
import DaemonClient
import UnleashedAPI
import Testing
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// The daemon's bridge against a real broker (mosquitto, started by each test), with simulated
/// cameras, watched by a second client as Home Assistant or another host would watch it.
@Suite("the daemon on MQTT", .timeLimit(.minutes(2)))
struct MQTTBridgeTests {
    @Test("on connecting it says online, publishes its clock, each camera's state and Home Assistant's discovery")
    func announces() async throws {
        try await BridgeRig.with(cameras: ["left", "right wing"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            try await rig.watcher.waitFor("both states and the clock") { messages in
                ["unleashed/hostA/cameras/left/state", "unleashed/hostA/cameras/right_wing/state", "unleashed/hostA/clock"]
                    .allSatisfy { messages[$0] != nil }
            }
            let state = try rig.watcher.json("unleashed/hostA/cameras/right_wing/state")
            #expect(state["name"] == "right wing" && state["connection"] == "ready")
            let clock = try rig.watcher.json("unleashed/hostA/clock")
            #expect(clock["synchronised"]?.boolValue != nil && clock["estimatedErrorMs"] != nil)
            // 1 daemon entity + 7 per camera.
            try await rig.watcher.waitFor("discovery") { $0.keys.count { $0.hasPrefix("homeassistant/") } == 15 }
            try HomeAssistantSchema.check(rig.watcher.messages.filter { $0.key.hasPrefix("homeassistant/") }, availability: "unleashed/hostA/availability")
        }
    }

    @Test("a shoot command takes a picture and says so; one at a UTC time fires then; a time already past is refused")
    func shoots() async throws {
        try await BridgeRig.with(cameras: ["left"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: "PRESS"))
            try await rig.watcher.waitFor("a shot") { $0["unleashed/hostA/cameras/left/shot"] != nil }
            let now = try rig.watcher.json("unleashed/hostA/cameras/left/shot")
            #expect(now["ok"] == true && now["shot"]?.objectValue?["counter"] == 1)

            let at = Date().addingTimeInterval(3)
            rig.watcher.forget("unleashed/hostA/cameras/left/shot")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: #"{"at": "\#(FleetTime.text(at))"}"#))
            try await rig.watcher.waitFor("the timed shot") { $0["unleashed/hostA/cameras/left/shot"] != nil }
            let timed = try rig.watcher.json("unleashed/hostA/cameras/left/shot")
            #expect(timed["ok"] == true && timed["at"] == .string(FleetTime.text(at)), "\(timed) \(FleetTime.text(at))")
            // It answered after its time, not before.
            #expect(Date() >= at)

            rig.watcher.forget("unleashed/hostA/cameras/left/shot")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: #"{"at": "2020-01-01T00:00:00Z"}"#))
            try await rig.watcher.waitFor("the refusal") { $0["unleashed/hostA/cameras/left/shot"] != nil }
            let refused = try rig.watcher.json("unleashed/hostA/cameras/left/shot")
            #expect(refused["ok"] == false)
            #expect(refused["error"]?.stringValue?.contains("ago when the command arrived") == true)
        }
    }

    @Test("a fleet shot fires every camera here at its time and answers with the clock; a bad one is refused by id")
    func fleetShot() async throws {
        try await BridgeRig.with(cameras: ["left", "right"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            // Far enough ahead that a loaded machine still delivers the command in time (a host
            // refuses a time less than 50 ms ahead when the command arrives).
            let at = Date().addingTimeInterval(3)
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/shoot", text: #"{"id": "f1", "at": "\#(FleetTime.text(at))"}"#))
            try await rig.watcher.waitFor("the answer") { $0["unleashed/hostA/fleet"] != nil }
            let answer = try rig.watcher.json("unleashed/hostA/fleet")
            #expect(answer["id"] == "f1" && answer["accepted"] == true && answer["node"] == "hostA", "\(answer)")
            #expect(answer["clock"]?.objectValue?["synchronised"] != nil)
            let shots = answer["shots"]?.arrayValue ?? []
            #expect(shots.count == 2 && shots.allSatisfy { $0.objectValue?["ok"] == true }, "\(answer)")
            #expect(Date() >= at)

            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/shoot", text: #"{"id": "f2", "at": "tomorrow"}"#))
            try await rig.watcher.waitFor("the refusal") { $0["unleashed/hostA/fleet"] != nil }
            let refusal = try rig.watcher.json("unleashed/hostA/fleet")
            #expect(refusal["id"] == "f2" && refusal["accepted"] == false)
            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/shoot", text: #"{"id": "f3", "at": "\#(FleetTime.text(Date().addingTimeInterval(5)))", "group": "north"}"#))
            try await rig.watcher.waitFor("no such group") { $0["unleashed/hostA/fleet"] != nil }
            #expect(try rig.watcher.json("unleashed/hostA/fleet")["reason"] == "no group north on this host")
        }
    }

    @Test("a fleet stop ends the fleet's time-lapse here and lists it; with nothing running it says so; a bad one is refused")
    func fleetStop() async throws {
        try await BridgeRig.with(cameras: ["left", "right"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            // Far enough ahead that a loaded machine still delivers the command in time: at 1.5 s a
            // fresh-clone run of make test once delivered it too late.
            let start = FleetTime.text(Date().addingTimeInterval(3))
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/timelapse", text: #"{"id": "t1", "start": "\#(start)", "intervalMs": 300}"#))
            try await rig.watcher.waitFor("the time-lapse's answer") { $0["unleashed/hostA/fleet"] != nil }
            let started = try rig.watcher.json("unleashed/hostA/fleet")
            let job = try #require(started["job"]?.integerValue, "\(started)")
            try await rig.watcher.waitFor("two frames", timeout: .seconds(30)) { _ in
                ((rig.watcher.peek("unleashed/hostA/jobs/\(job)")?["lastFrame"]?.objectValue?["frame"]?.integerValue) ?? 0) >= 2
            }
            // Each camera of the rig job shows it running, with its frames.
            try await rig.watcher.waitFor("both cameras' runs") { _ in
                ["left", "right"].allSatisfy { camera in
                    let run = rig.watcher.peek("unleashed/hostA/cameras/\(camera)/run")
                    return run?["running"] == true && run?["job"]?.integerValue == job && (run?["frames"]?.integerValue ?? 0) >= 1
                }
            }

            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/stop", text: #"{"id": "s1", "group": "north"}"#))
            try await rig.watcher.waitFor("no such group") { $0["unleashed/hostA/fleet"] != nil }
            #expect(try rig.watcher.json("unleashed/hostA/fleet")["reason"] == "no group north on this host")

            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/stop", text: #"{"id": "s2"}"#))
            try await rig.watcher.waitFor("the stop's answer") { $0["unleashed/hostA/fleet"] != nil }
            let answer = try rig.watcher.json("unleashed/hostA/fleet")
            #expect(answer["id"] == "s2" && answer["accepted"] == true)
            let stopped = try #require(answer["stopped"]?.arrayValue?.first?.objectValue, "\(answer)")
            #expect(stopped["job"]?.integerValue == job && stopped["cameras"] == ["left", "right"])
            #expect((stopped["frames"]?.integerValue ?? 0) >= 2)
            try await rig.watcher.waitFor("the job ended") { _ in
                rig.watcher.peek("unleashed/hostA/jobs/\(job)")?["state"]?.stringValue == "finished"
            }
            let summary = FleetShotSummary(at: Date(), answers: [try StrictJSONDecoder().decode(FleetAnswer.self, from: .object(answer))])
            #expect(summary.status == 0)
            #expect(summary.stopText.contains("hostA: job \(job) on left, right stopped after slot"), "\(summary.stopText)")

            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/stop", text: #"{"id": "s3"}"#))
            try await rig.watcher.waitFor("the second stop's answer") { $0["unleashed/hostA/fleet"] != nil }
            let idle = FleetShotSummary(at: Date(), answers: [try StrictJSONDecoder().decode(FleetAnswer.self, from: .object(try rig.watcher.json("unleashed/hostA/fleet")))])
            #expect(idle.stopText.hasSuffix("hostA: nothing was running") && idle.status == 0, "\(idle.stopText)")

            rig.watcher.forget("unleashed/hostA/fleet")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/stop", text: "stop!"))
            try await rig.watcher.waitFor("the refusal") { $0["unleashed/hostA/fleet"] != nil }
            let refusal = try rig.watcher.json("unleashed/hostA/fleet")
            #expect(refusal["accepted"] == false && refusal["reason"]?.stringValue?.hasPrefix("the command is not a JSON object") == true)
        }
    }

    @Test("the running switch starts a time-lapse at the interval set, frames come out, and OFF stops it")
    func timelapse() async throws {
        try await BridgeRig.with(cameras: ["left"]) { rig in
            try await rig.watcher.waitFor("the run's state") { $0["unleashed/hostA/cameras/left/run"] != nil }
            #expect(try rig.watcher.json("unleashed/hostA/cameras/left/run")["running"] == false)
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/interval/set", text: "0.5"))
            try await rig.watcher.waitFor("the interval") { _ in (rig.watcher.peek("unleashed/hostA/cameras/left/run")?["intervalSeconds"]) == .number(0.5) }
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/running/set", text: "ON"))
            try await rig.watcher.waitFor("three frames", timeout: .seconds(30)) { _ in
                ((rig.watcher.peek("unleashed/hostA/cameras/left/run")?["frames"]?.integerValue) ?? 0) >= 3
            }
            let run = try rig.watcher.json("unleashed/hostA/cameras/left/run")
            #expect(run["running"] == true && run["nextShot"]?.stringValue != nil)
            let job = try #require(run["job"]?.integerValue)
            #expect(rig.watcher.messages["unleashed/hostA/jobs/\(job)/frames"] != nil)
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/running/set", text: "OFF"))
            try await rig.watcher.waitFor("stopped") { _ in (rig.watcher.peek("unleashed/hostA/cameras/left/run")?["running"]) == false }
        }
    }

    @Test("a shot waiting for its time holds up nothing; garbage on every command topic is refused, and the bridge goes on")
    func hostileCommands() async throws {
        try await BridgeRig.with(cameras: ["left"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            // Half an hour ahead: waits on its own task.
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot",
                                                       text: #"{"at": "\#(FleetTime.text(Date().addingTimeInterval(1800)))"}"#))
            let garbage: [[UInt8]] = [Array("{\"at\":".utf8), [0xFF, 0xFE, 0x00, 0x41], Array(repeating: 0x7B, count: 100_000), Array("ON ON".utf8), Array("-5".utf8), Array("nan".utf8), []]
            for payload in garbage {
                for topic in ["unleashed/hostA/cameras/left/shoot", "unleashed/hostA/cameras/left/running/set",
                              "unleashed/hostA/cameras/left/interval/set", "unleashed/fleet/shoot", "unleashed/fleet/timelapse",
                              "unleashed/hostA/cameras/nobody/shoot"] {
                    try rig.watcher.client.publish(MQTTMessage(topic: topic, payload: payload))
                }
            }
            // The bridge takes messages in order: every answer to the garbage comes before the
            // PRESS's, so the wait below sees the PRESS's, whatever came between.
            rig.watcher.forget("unleashed/hostA/cameras/left/shot")
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: "PRESS"))
            try await rig.watcher.waitFor("the shot, answered while the other waits") { messages in
                (rig.watcher.peek("unleashed/hostA/cameras/left/shot")?["ok"]) == true
            }
            // Nothing started a run, and the interval is still the default.
            let run = try rig.watcher.json("unleashed/hostA/cameras/left/run")
            #expect(run["running"] == false && run["intervalSeconds"] == .integer(10))
        }
    }

    @Test("commands left retained on the broker are not carried out when the bridge subscribes; a fire time years off is refused, not a crash")
    func retainedCommands() async throws {
        let far = #"{"id": "far", "at": "2999-01-01T00:00:00Z"}"#
        let retained = [MQTTMessage(topic: "unleashed/fleet/shoot", text: far, retain: true),
                        MQTTMessage(topic: "unleashed/fleet/stop", text: #"{"id": "stop"}"#, retain: true),
                        MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: "PRESS", retain: true),
                        MQTTMessage(topic: "unleashed/hostA/cameras/left/running/set", text: "ON", retain: true)]
        try await BridgeRig.with(cameras: ["left"], retained: retained) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            try await rig.watcher.waitFor("the camera's run") { $0["unleashed/hostA/cameras/left/run"] != nil }
            // A command sent now is carried out, and it is the camera's first picture: the
            // retained PRESS, delivered first, was not.
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/hostA/cameras/left/shoot", text: "{}"))
            try await rig.watcher.waitFor("the shot") { $0["unleashed/hostA/cameras/left/shot"] != nil }
            let shot = try rig.watcher.json("unleashed/hostA/cameras/left/shot")
            #expect(shot["ok"] == true && shot["shot"]?.objectValue?["counter"] == 1, "\(shot)")
            #expect(try rig.watcher.json("unleashed/hostA/cameras/left/run")["running"] == false)
            #expect(rig.watcher.messages["unleashed/hostA/fleet"] == nil, "a retained fleet command was answered")
            // The same far-off time sent live is refused with the reason, and the bridge goes on.
            try rig.watcher.client.publish(MQTTMessage(topic: "unleashed/fleet/shoot", text: far))
            try await rig.watcher.waitFor("the refusal") { $0["unleashed/hostA/fleet"] != nil }
            let answer = try rig.watcher.json("unleashed/hostA/fleet")
            #expect(answer["accepted"] == false && answer["id"] == "far")
            #expect(answer["reason"]?.stringValue?.contains("not a time near this host's clock") == true, "\(answer)")
        }
    }

    @Test("a broker that is down when the bridge starts is connected to once it is up")
    func brokerLater() async throws {
        let broker = try await Broker()
        broker.stop()
        let registry = CameraRegistry()
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        await registry.add(demo.camera, name: "left", source: "demo")
        let jobs = JobManager(journal: MemoryJournal(), cameras: registry)
        var settings = DaemonConfiguration.MQTTSettings()
        settings.broker = BrokerAddress(host: "127.0.0.1", port: broker.port, tls: false)
        settings.node = "hostA"
        let bridge = try MQTTBridge(settings: settings, version: "0.0.0-test", cameras: registry, jobs: jobs, groups: [],
                                    logger: Logger(label: "test.mqtt"))
        let task = Task { await bridge.run() }
        // The bridge's first attempts are refused; then the broker comes up.
        await bridge.firstAttempt()
        try await broker.start()
        let watcher = try TopicWatcher(broker: broker)
        try await watcher.waitForSubscription()
        try await watcher.waitFor("online", timeout: .seconds(45)) { $0["unleashed/hostA/availability"] == "online" }
        task.cancel()
        await task.value
        watcher.client.stop()
        try? await demo.finish()
    }

    @Test("two cameras whose names are one topic level: the first is on the broker, the second is not, and forgetting the second leaves the first's entities")
    func collidingNames() async throws {
        try await BridgeRig.with(cameras: ["a b", "a_b"]) { rig in
            // 1 daemon entity + 7 for the one camera on the broker.
            try await rig.watcher.waitFor("one camera's discovery") { $0.keys.count { $0.hasPrefix("homeassistant/") } == 8 }
            try await rig.watcher.waitFor("its state") { $0["unleashed/hostA/cameras/a_b/state"] != nil }
            #expect(try rig.watcher.json("unleashed/hostA/cameras/a_b/state")["name"] == "a b")
            // The second, never announced, is forgotten; a third comes after it, so its discovery
            // says the bridge has handled the removal.
            let second = try #require(await rig.registry.remove(named: "a_b"))
            _ = await rig.registry.add(second.camera, name: "c", source: "demo")
            try await rig.watcher.waitFor("the third's discovery") { $0.count { $0.key.hasPrefix("homeassistant/") && !$0.value.isEmpty } == 15 }
            let first = rig.watcher.messages.filter { $0.key.hasPrefix("homeassistant/") && $0.key.contains("/a_b_") }
            #expect(first.count == 7 && first.allSatisfy { !$0.value.isEmpty }, "\(first.keys.sorted())")
            #expect(rig.watcher.messages["unleashed/hostA/cameras/a_b/state"]?.isEmpty == false)
        }
    }

    @Test("a second daemon with the same node takes it over: the first says so and leaves the broker, instead of both knocking each other off")
    func sameNode() async throws {
        try await BridgeRig.with(cameras: ["left"]) { rig in
            try await rig.watcher.waitFor("the first online") { $0["unleashed/hostA/availability"] == "online" }
            let firstClaim = try rig.watcher.json("unleashed/hostA/instance")
            // The second daemon: the same node (and so the same client id), cameras of its own.
            let registry = CameraRegistry()
            let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
            await registry.add(demo.camera, name: "right", source: "demo")
            let jobs = JobManager(journal: MemoryJournal(), cameras: registry)
            var settings = DaemonConfiguration.MQTTSettings()
            settings.broker = BrokerAddress(host: "127.0.0.1", port: rig.broker.port, tls: false)
            settings.node = "hostA"
            let second = try MQTTBridge(settings: settings, version: "0.0.0-test", cameras: registry, jobs: jobs, groups: [],
                                        logger: Logger(label: "test.mqtt.second"))
            let secondTask = Task { await second.run() }
            // The first bridge ends by itself; the second keeps the node.
            await rig.bridgeTask.value
            try await rig.watcher.waitFor("the second's camera") { $0["unleashed/hostA/cameras/right/state"] != nil }
            // The first, reconnecting, wrote its claim once more before it read the second's;
            // the second writes its own again as it reconnects.
            try await rig.watcher.waitFor("the second's claim") { _ in rig.watcher.peek("unleashed/hostA/instance")?["instance"] != firstClaim["instance"] }
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            secondTask.cancel()
            await secondTask.value
            try? await demo.finish()
        }
    }

    @Test("a setting command sets the camera's setting and says so; an unknown setting or value is refused with the camera's words")
    func settings() async throws {
        try await BridgeRig.with(cameras: ["left"]) { rig in
            try await rig.watcher.waitFor("online") { $0["unleashed/hostA/availability"] == "online" }
            let outcome = "unleashed/hostA/cameras/left/settings/shutter-speed"
            try rig.watcher.client.publish(MQTTMessage(topic: outcome + "/set", text: "1/250"))
            try await rig.watcher.waitFor("the setting's outcome") { _ in rig.watcher.peek(outcome) != nil }
            #expect(try rig.watcher.json(outcome)["ok"] == true && rig.watcher.json(outcome)["value"] == "1/250")
            rig.watcher.forget(outcome)
            try rig.watcher.client.publish(MQTTMessage(topic: outcome + "/set", text: "fast please"))
            try await rig.watcher.waitFor("the refusal") { _ in rig.watcher.peek(outcome) != nil }
            #expect(try rig.watcher.json(outcome)["ok"] == false && rig.watcher.json(outcome)["error"]?.stringValue?.isEmpty == false, "\(rig.watcher.messages[outcome] ?? "")")
            let unknown = "unleashed/hostA/cameras/left/settings/warp-speed"
            try rig.watcher.client.publish(MQTTMessage(topic: unknown + "/set", text: "9"))
            try await rig.watcher.waitFor("the unknown setting") { _ in rig.watcher.peek(unknown) != nil }
            #expect(try rig.watcher.json(unknown)["ok"] == false)
        }
    }

    @Test("a camera forgotten is removed from Home Assistant; the bridge stopping says offline")
    func forgetAndStop() async throws {
        try await BridgeRig.with(cameras: ["left", "right"]) { rig in
            try await rig.watcher.waitFor("discovery") { $0.keys.count { $0.hasPrefix("homeassistant/") } == 15 }
            _ = await rig.registry.remove(named: "right")
            try await rig.watcher.waitFor("right's entities and state emptied") { messages in
                messages.filter { $0.key.hasPrefix("homeassistant/") && $0.key.contains("_right_") }.allSatisfy { $0.value.isEmpty }
                    && messages["unleashed/hostA/cameras/right/state"] == "" && messages["unleashed/hostA/cameras/right/run"] == ""
            }
            // Left is still there.
            #expect(rig.watcher.messages["unleashed/hostA/cameras/left/state"]?.isEmpty == false)
            rig.bridgeTask.cancel()
            try await rig.watcher.waitFor("offline") { $0["unleashed/hostA/availability"] == "offline" }
        }
    }
}

/// A registry of simulated cameras, a job manager, the bridge as node `hostA`, and a watcher
/// subscribed to everything, on a broker of their own.
struct BridgeRig {
    let broker: Broker
    let registry: CameraRegistry
    let watcher: TopicWatcher
    let bridgeTask: Task<Void, Never>

    /// - Parameter retained: messages published with retain before the bridge starts, as a
    ///   command left on the broker by a careless sender would be.
    static func with(cameras names: [String], retained: [MQTTMessage] = [], _ body: (BridgeRig) async throws -> Void) async throws {
        let broker = try await Broker()
        let registry = CameraRegistry()
        var demos: [Demo] = []
        for name in names {
            let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
            demos.append(demo)
            await registry.add(demo.camera, name: name, source: "demo")
        }
        let jobs = JobManager(journal: MemoryJournal(), cameras: registry)
        var settings = DaemonConfiguration.MQTTSettings()
        settings.broker = BrokerAddress(host: "127.0.0.1", port: broker.port, tls: false)
        settings.node = "hostA"
        let watcher = try TopicWatcher(broker: broker)
        try await watcher.waitForSubscription()
        for message in retained { try watcher.client.publish(message) }
        // Stored by the broker once the watcher has seen them.
        try await watcher.waitFor("the retained messages") { seen in retained.allSatisfy { seen[$0.topic] == $0.text } }
        let bridge = try MQTTBridge(settings: settings, version: "0.0.0-test", cameras: registry, jobs: jobs, groups: [],
                                    logger: Logger(label: "test.mqtt"))
        let task = Task { await bridge.run() }
        let rig = BridgeRig(broker: broker, registry: registry, watcher: watcher, bridgeTask: task)
        let result: Result<Void, any Error>
        do { result = .success(try await body(rig)) } catch { result = .failure(error) }
        task.cancel()
        await task.value
        await jobs.suspendAll()
        watcher.client.stop()
        for demo in demos { try? await demo.finish() }
        try result.get()
    }
}

/// A client subscribed to every topic, keeping the last payload of each.
final class TopicWatcher: Sendable {
    let client: MQTTClient
    /// The last payload of each topic; the watcher's own `test/subscribed` says it is subscribed.
    private let latest = Observed<[String: String]>([:])

    init(broker: Broker) throws {
        client = try MQTTClient(MQTTClient.Configuration(host: "127.0.0.1", port: broker.port, clientID: "watcher-\(UUID().uuidString.prefix(8))"))
        let events = client.events
        Task { [self] in
            for await event in events {
                switch event {
                case .connected:
                    try? client.subscribe("#")
                    try? client.publish(MQTTMessage(topic: "test/subscribed", text: "yes"))
                case .message(let message):
                    latest.update { $0[message.topic] = message.text }
                case .disconnected, .refused: break
                }
            }
        }
        try client.start()
    }

    var messages: [String: String] { latest.value }

    func forget(_ topic: String) { latest.update { $0.removeValue(forKey: topic) } }

    /// The topic's last payload as a JSON object, or nil (nothing there yet, or not an object).
    func peek(_ topic: String) -> [String: JSONValue]? {
        messages[topic].flatMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)).objectValue }
    }

    func json(_ topic: String) throws -> [String: JSONValue] {
        let text = try #require(messages[topic], "nothing on \(topic)")
        return try #require(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)).objectValue, "\(topic): \(text)")
    }

    func waitForSubscription() async throws {
        try await waitFor("the watcher's subscription") { $0["test/subscribed"] != nil }
    }

    /// Waits until `condition` holds on the last payloads, each message waking it.
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: @escaping @Sendable ([String: String]) -> Bool) async throws {
        do {
            try await latest.wait(what, timeout: timeout, until: condition)
        } catch {
            Issue.record("no \(what); topics: \(messages.keys.sorted())")
            throw error
        }
    }
}

/// The keys Home Assistant's MQTT discovery documents for each platform used here
/// (home-assistant.io, integrations mqtt, button.mqtt, switch.mqtt, number.mqtt, sensor.mqtt),
/// and the rules every entity must keep: its topic's shape, a unique id, a device (with
/// identifiers; a camera through the daemon's), availability from the daemon's will.
enum HomeAssistantSchema {
    static let common: Set<String> = ["name", "unique_id", "device", "availability_topic", "payload_available",
                                      "payload_not_available", "entity_category", "json_attributes_topic", "value_template", "icon"]
    static let platforms: [String: (required: Set<String>, allowed: Set<String>)] = [
        "button": (["command_topic"], ["command_topic", "payload_press", "device_class", "qos", "retain"]),
        "switch": (["command_topic"], ["command_topic", "state_topic", "payload_on", "payload_off", "state_on", "state_off", "device_class", "optimistic"]),
        "number": (["command_topic"], ["command_topic", "state_topic", "min", "max", "step", "mode", "unit_of_measurement", "device_class"]),
        "sensor": (["state_topic"], ["state_topic", "unit_of_measurement", "device_class", "state_class", "expire_after", "force_update"]),
    ]
    static let deviceKeys: Set<String> = ["identifiers", "name", "manufacturer", "model", "sw_version", "via_device", "connections", "hw_version"]

    static func check(_ configs: [String: String], availability: String) throws {
        var uniqueIDs: Set<String> = []
        var hubs: Set<String> = []
        var vias: Set<String> = []
        for (topic, text) in configs {
            let levels = topic.split(separator: "/")
            try #require(levels.count == 5 && levels[0] == "homeassistant" && levels[4] == "config", "\(topic)")
            let platform = String(levels[1])
            let rules = try #require(platforms[platform], "\(topic): no platform \(platform)")
            #expect(levels[2].allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }, "node id \(levels[2])")
            #expect(levels[3].allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }, "object id \(levels[3])")
            let document = try #require(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)).objectValue, "\(topic)")
            for key in rules.required { #expect(document[key]?.stringValue?.isEmpty == false, "\(topic): \(key)") }
            for key in document.keys { #expect(common.contains(key) || rules.allowed.contains(key), "\(topic): \(key) is not a key of \(platform)") }
            let id = try #require(document["unique_id"]?.stringValue, "\(topic): unique_id")
            #expect(uniqueIDs.insert(id).inserted, "\(id) twice")
            #expect(document["availability_topic"]?.stringValue == availability, "\(topic)")
            #expect(document["payload_available"] == "online" && document["payload_not_available"] == "offline")
            let device = try #require(document["device"]?.objectValue, "\(topic): device")
            for key in device.keys { #expect(deviceKeys.contains(key), "\(topic): device.\(key)") }
            let identifiers = (device["identifiers"]?.arrayValue ?? []).compactMap { $0.stringValue }
            #expect(!identifiers.isEmpty)
            if let via = device["via_device"]?.stringValue { vias.insert(via) } else { hubs.formUnion(identifiers) }
            for key in ["command_topic", "state_topic"] {
                if let target = document[key]?.stringValue { #expect(!target.contains("+") && !target.contains("#"), "\(topic): \(key)") }
            }
        }
        // Every camera's device hangs off the daemon's.
        #expect(!vias.isEmpty && vias.isSubset(of: hubs), "via_device \(vias) against the daemon's \(hubs)")
    }
}
