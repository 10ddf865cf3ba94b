import Hummingbird
import UnleashedAPI

/// `GET /v1/fleet`: every host on the MQTT broker as this daemon hears it, for the web app's
/// rig view. Without `[mqtt]`, a fleet of none that says it is not enabled.
struct FleetRoutes: Sendable {
    let board: FleetBoard?

    func add(to router: APIRoutes) {
        router.on(API.fleet, requires: .watch) { _, _ in
            board?.document ?? FleetDocument(enabled: false, connected: false, node: nil, hosts: [], rig: nil)
        }
    }
}
