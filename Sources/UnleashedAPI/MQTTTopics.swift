import Foundation

/// Where the bridge publishes and listens, under `<prefix>/<node>` (docs/mqtt.md):
///
/// | topic | what | retained |
/// |---|---|---|
/// | `<prefix>/<node>/availability` | `online`, or `offline` (also the last will) | yes |
/// | `<prefix>/<node>/instance` | the daemon that holds the node: instance, host, pid, start | yes |
/// | `<prefix>/<node>/cameras/<camera>/state` | the camera's status document, as `GET /v1/cameras/NAME/status` | yes |
/// | `<prefix>/<node>/cameras/<camera>/shoot` | a command: take a picture now, or at `{"at": UTC time}` | no |
/// | `<prefix>/<node>/cameras/<camera>/shot` | each picture taken on a command, with its timing | no |
/// | `<prefix>/<node>/cameras/<camera>/run` | the camera's time-lapse: running, frames, next shot, interval | yes |
/// | `<prefix>/<node>/cameras/<camera>/running/set` | a command: `ON` starts a time-lapse at the interval, `OFF` stops it | no |
/// | `<prefix>/<node>/cameras/<camera>/interval/set` | a command: the interval in seconds for the next time-lapse | no |
/// | `<prefix>/<node>/cameras/<camera>/settings/<name>/set` | a command: the setting's value as text (`1/125`) | no |
/// | `<prefix>/<node>/cameras/<camera>/settings/<name>` | the outcome: `{"ok", "value"}` or `{"ok": false, "error"}` | no |
/// | `<prefix>/<node>/clock` | the host's clock: synchronised, its estimated error | yes |
/// | `<prefix>/<node>/jobs/<id>` | a job's progress, on each change and frame | yes |
/// | `<prefix>/<node>/jobs/<id>/frames` | each frame as it is recorded | no |
/// | `<prefix>/fleet/shoot` | a command to every host: fire at `{"at": UTC time}` | no |
/// | `<prefix>/fleet/timelapse` | a command to every host: a time-lapse from `{"start": UTC time}` | no |
/// | `<prefix>/fleet/stop` | a command to every host: stop its time-lapses (a group's) now | no |
/// | `<prefix>/<node>/fleet` | this host's answer to each fleet command | no |
///
/// A camera's name becomes one topic level as ``level(_:)`` writes it.
package struct MQTTTopics: Sendable, Equatable {
    package let prefix: String
    package let node: String

    package init(prefix: String, node: String) {
        self.prefix = prefix
        self.node = node
    }

    package var availability: String { "\(base)/availability" }
    /// Which daemon holds this node: `{"instance", "host", "pid", "startedAt"}`, retained.
    package var instance: String { "\(base)/instance" }
    package func cameraState(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/state" }
    package func shoot(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/shoot" }
    package func shot(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/shot" }
    package func run(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/run" }
    package func runningCommand(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/running/set" }
    package func intervalCommand(_ camera: String) -> String { "\(base)/cameras/\(Self.level(camera))/interval/set" }
    package var clock: String { "\(base)/clock" }
    package func job(_ id: Int) -> String { "\(base)/jobs/\(id)" }
    package func frames(_ id: Int) -> String { "\(base)/jobs/\(id)/frames" }
    /// Every camera's shoot command, for the one subscription.
    package var shootCommands: String { "\(base)/cameras/+/shoot" }
    package var fleetShoot: String { "\(prefix)/fleet/shoot" }
    package var fleetTimelapse: String { "\(prefix)/fleet/timelapse" }
    package var fleetStop: String { "\(prefix)/fleet/stop" }
    package var fleetAnswers: String { "\(base)/fleet" }
    /// Every host's answers, for whoever sent a fleet command.
    package var allFleetAnswers: String { "\(prefix)/+/fleet" }

    private var base: String { "\(prefix)/\(node)" }

    package var runningCommands: String { "\(base)/cameras/+/running/set" }
    package var intervalCommands: String { "\(base)/cameras/+/interval/set" }
    package var settingCommands: String { "\(base)/cameras/+/settings/+/set" }
    /// Where the outcome of a setting command goes: `{"ok", "value"}` or `{"ok": false, "error"}`.
    package func setting(_ camera: String, _ name: String) -> String { "\(base)/cameras/\(Self.level(camera))/settings/\(name)" }

    /// What a camera's command topic asks.
    package enum CameraCommand: Sendable, Equatable {
        case shoot, running, interval
        /// A setting by the name the CLI and the API use (`shutter-speed`).
        case setting(String)
    }

    /// The camera (as its level) and the command of a topic under ``shootCommands``,
    /// ``runningCommands`` or ``intervalCommands``; nil for any other topic.
    package func cameraCommand(_ topic: String) -> (level: String, command: CameraCommand)? {
        let head = "\(base)/cameras/"
        guard topic.hasPrefix(head) else { return nil }
        let levels = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        switch levels.count {
        case 2 where levels[1] == "shoot" && !levels[0].isEmpty: return (String(levels[0]), .shoot)
        case 3 where levels[1] == "running" && levels[2] == "set" && !levels[0].isEmpty: return (String(levels[0]), .running)
        case 3 where levels[1] == "interval" && levels[2] == "set" && !levels[0].isEmpty: return (String(levels[0]), .interval)
        case 4 where levels[1] == "settings" && levels[3] == "set" && !levels[0].isEmpty && !levels[2].isEmpty:
            return (String(levels[0]), .setting(String(levels[2])))
        default: return nil
        }
    }

    /// A name as one topic level and as part of an id Home Assistant takes: letters, digits,
    /// `-` and `_` stay, everything else becomes `_`. Two names that differ only there share a
    /// level; the daemon's names are its own configuration's, where that is easy to avoid.
    package static func level(_ name: String) -> String {
        let kept = name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_") ? Character(scalar) : "_"
        }
        return kept.isEmpty ? "_" : String(kept)
    }
}
