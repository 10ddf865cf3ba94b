import MQTT
import Synchronization
import UnleashedAPI

/// The fleet as this daemon hears it on its broker, for `GET /v1/fleet`: the bridge folds in
/// what it receives, the API reads it.
public final class FleetBoard: Sendable {
    private let state: Mutex<(fleet: FleetState, connected: Bool)>
    /// This host's name on the broker.
    let node: String

    init(settings: DaemonConfiguration.MQTTSettings) {
        node = MQTTBridge.node(settings)
        state = Mutex((FleetState(prefix: settings.topicPrefix), false))
    }

    /// Folds `message` in; false when it is not a host's state.
    func take(_ message: MQTTMessage) -> Bool {
        state.withLock { $0.fleet.take(topic: message.topic, payload: message.payload) }
    }

    func setConnected(_ connected: Bool) {
        state.withLock { $0.connected = connected }
    }

    var document: FleetDocument {
        state.withLock { $0.fleet.document(connected: $0.connected, node: node) }
    }
}
