import JSON
import UnleashedAPI

/// What the bridge tells Home Assistant through its MQTT discovery: each camera a device,
/// reached through the daemon's own device (`via_device`), with a capture button, a running
/// switch, an interval, the batteries, the frames taken and the next shot; the daemon's device
/// with its clock's estimated error. All available while the daemon's availability topic says
/// `online`, which its last will turns to `offline`.
///
/// The documents follow Home Assistant's MQTT discovery (`<discovery prefix>/<component>/<node
/// id>/<object id>/config`, retained; an empty document removes the entity), with the keys its
/// MQTT button, switch, number and sensor platforms document.
struct HomeAssistantDiscovery: Sendable {
    let topics: MQTTTopics
    let discoveryPrefix: String
    let version: String

    /// One entity's config: its topic and document.
    struct Entity: Sendable, Equatable {
        let topic: String
        let document: JSONValue
    }

    /// The daemon's own device and entities.
    func daemon() -> [Entity] {
        [entity("sensor", object: "clock_error", device: hubDevice, [
            "name": "Clock error",
            "state_topic": .string(topics.clock),
            "value_template": "{{ value_json.estimatedErrorMs }}",
            "unit_of_measurement": "ms",
            "device_class": "duration",
            "entity_category": "diagnostic",
            "json_attributes_topic": .string(topics.clock),
        ])]
    }

    /// A camera's device and entities.
    func camera(_ name: String, model: String?) -> [Entity] {
        let level = MQTTTopics.level(name)
        var device: [String: JSONValue] = [
            "identifiers": [.string("\(nodeID)_\(level)")],
            "name": .string(name),
            "via_device": .string(nodeID),
        ]
        if let model { device["model"] = .string(model) }
        let run = topics.run(name)
        let state = topics.cameraState(name)
        func object(_ entity: String) -> String { "\(level)_\(entity)" }
        return [
            entity("button", object: object("capture"), device: .object(device), [
                "name": "Capture",
                "command_topic": .string(topics.shoot(name)),
                "payload_press": "{}",
            ]),
            entity("switch", object: object("running"), device: .object(device), [
                "name": "Time-lapse",
                "command_topic": .string(topics.runningCommand(name)),
                "state_topic": .string(run),
                "value_template": "{{ 'ON' if value_json.running else 'OFF' }}",
                "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF",
            ]),
            entity("number", object: object("interval"), device: .object(device), [
                "name": "Interval",
                "command_topic": .string(topics.intervalCommand(name)),
                "state_topic": .string(run),
                "value_template": "{{ value_json.intervalSeconds }}",
                "min": .number(0.5), "max": .number(86_400), "step": .number(0.5),
                "unit_of_measurement": "s", "mode": "box",
            ]),
            entity("sensor", object: object("module_battery"), device: .object(device), [
                "name": "Module battery",
                "state_topic": .string(state),
                "value_template": "{{ value_json.moduleBattery }}",
                "unit_of_measurement": "%", "device_class": "battery", "state_class": "measurement",
            ]),
            entity("sensor", object: object("camera_battery"), device: .object(device), [
                "name": "Camera battery",
                "state_topic": .string(state),
                "value_template": "{{ value_json.cameraBattery }}",
                "unit_of_measurement": "%", "device_class": "battery", "state_class": "measurement",
            ]),
            entity("sensor", object: object("frames"), device: .object(device), [
                "name": "Frames",
                "state_topic": .string(run),
                "value_template": "{{ value_json.frames }}",
                "state_class": "total_increasing",
            ]),
            entity("sensor", object: object("next_shot"), device: .object(device), [
                "name": "Next shot",
                "state_topic": .string(run),
                "value_template": "{{ value_json.nextShot }}",
                "device_class": "timestamp",
            ]),
        ]
    }

    /// The config topics of a camera's entities, for removal (an empty retained document each).
    func cameraTopics(_ name: String) -> [String] {
        camera(name, model: nil).map(\.topic)
    }

    private var nodeID: String { "unleashed_\(MQTTTopics.level(topics.node))" }

    private var hubDevice: JSONValue {
        ["identifiers": [.string(nodeID)], "name": .string("unleashed on \(topics.node)"),
         "manufacturer": "unleashed", "model": "camera daemon", "sw_version": .string(version)]
    }

    private func entity(_ component: String, object: String, device: JSONValue, _ members: [String: JSONValue]) -> Entity {
        var document = members
        document["unique_id"] = .string("\(nodeID)_\(object)")
        document["device"] = device
        document["availability_topic"] = .string(topics.availability)
        document["payload_available"] = "online"
        document["payload_not_available"] = "offline"
        return Entity(topic: "\(discoveryPrefix)/\(component)/\(nodeID)/\(object)/config", document: .object(document))
    }
}
