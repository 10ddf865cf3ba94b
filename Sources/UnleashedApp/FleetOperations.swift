public import CommandCore
public import DaemonClient
public import Foundation
public import JSON
import MQTT

/// `unleashed fleet`'s work: the broker that the daemons' configuration names, one command to
/// every host through it, and the hosts' answers summed up. A configuration without a broker
/// is a usage error; a broker that does not answer, unavailable.
public struct FleetOperations: Sendable {
    private let broker: FleetClient.Broker

    /// The broker of the configuration the daemon would read (`system`: the system service's
    /// only), or of `file`.
    public init(system: Bool, file: String?, environment: [String: String]) throws(CameraFailure) {
        let broker: FleetClient.Broker?
        do throws(DaemonLaunchError) {
            broker = try DaemonLaunch(system: system, file: file, environment: environment).fleetBroker
        } catch {
            throw CameraFailure(code: "configuration", error.description, status: .usage)
        }
        guard let broker else {
            throw CameraFailure(code: "configuration", "no [mqtt] broker in the configuration; add broker = \"mqtt://HOST:1883\" (docs/mqtt.md)",
                                status: .usage)
        }
        self.broker = broker
    }

    /// ``FleetClient/shoot(at:group:wait:connectTimeout:)``, summed up.
    public func shoot(at time: Date, group: String?, wait: Duration) async throws(CameraFailure) -> FleetShotSummary {
        FleetShotSummary(at: time, answers: try await ask { client throws(MQTTError) in try await client.shoot(at: time, group: group, wait: wait) })
    }

    /// ``FleetClient/timelapse(start:interval:frames:group:wait:connectTimeout:)``, summed up.
    public func timelapse(start: Date, interval: Duration, frames: Int?, group: String?) async throws(CameraFailure) -> FleetShotSummary {
        FleetShotSummary(at: start, answers: try await ask { client throws(MQTTError) in
            try await client.timelapse(start: start, interval: interval, frames: frames, group: group, wait: .seconds(3))
        })
    }

    /// ``FleetClient/stop(group:wait:connectTimeout:)``, summed up.
    public func stop(group: String?, wait: Duration) async throws(CameraFailure) -> FleetShotSummary {
        FleetShotSummary(at: Date(), answers: try await ask { client throws(MQTTError) in try await client.stop(group: group, wait: wait) })
    }

    /// ``FleetClient/status(wait:connectTimeout:)``.
    public func status() async throws(CameraFailure) -> JSONValue {
        try await ask { client throws(MQTTError) in try await client.status() }
    }

    private func ask<T>(_ question: (FleetClient) async throws(MQTTError) -> T) async throws(CameraFailure) -> T {
        do throws(MQTTError) {
            return try await question(try FleetClient(broker: broker))
        } catch {
            throw CameraFailure(code: "mqtt", error.description, status: .unavailable)
        }
    }
}
