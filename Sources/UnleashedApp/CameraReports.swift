public import CameraKit
public import CameraProtocols
import CameraRemote
public import CommandCore
public import DaemonClient
public import Foundation
public import GPhoto2
public import JSON
public import UnleashedKit
public import UnleashedSimulator

/// What each camera of a rig did, then the spreads between the first and last command and
/// between the first and last completion, as `--json` and as lines of text. Every camera is
/// reported, those that failed included.
public struct CameraRigReport: Sendable {
    public var json: JSONValue
    public var lines: [String]
    /// The first camera's failure, in the rig's order: the command's exit status.
    public var failure: CameraError?

    public init<Value: Sendable>(_ outcomes: [Volley<Value>.Outcome], _ spread: VolleySpread,
                                 json: (Value) -> JSONValue, human: (Value) -> String) {
        var entries: [JSONValue] = []
        var lines: [String] = []
        for outcome in outcomes {
            switch outcome.result {
            case .success(let value)?:
                var entry = json(value).objectValue ?? [:]
                entry["camera"] = .string(outcome.name)
                entries.append(.object(entry))
                lines.append("\(outcome.name): \(human(value))")
            case .failure(let error)?:
                failure = failure ?? error
                entries.append(["camera": .string(outcome.name), "error": ["code": .string(error.code), "message": .string(error.description)]])
                lines.append("\(outcome.name): error: \(error)")
            case nil:
                break
            }
        }
        func milliseconds(_ duration: Duration?) -> String {
            duration.map { String(format: "%.3f ms", Double($0.wholeMicroseconds) / 1000) } ?? "-"
        }
        var spreads: [String: JSONValue] = [:]
        spreads["commandsMs"] = spread.commands.map { .number(Double($0.wholeMicroseconds) / 1000) }
        spreads["completionsMs"] = spread.completions.map { .number(Double($0.wholeMicroseconds) / 1000) }
        self.json = ["cameras": .array(entries), "spread": .object(spreads)]
        self.lines = lines + ["Spread over \(English.counting(outcomes.count, "camera")): commands \(milliseconds(spread.commands)), "
            + "completions \(milliseconds(spread.completions))"]
    }
}

/// What `status` shows: gathered from the camera (its settings only while it is on) and its
/// `--json` document. A camera on libgphoto2 has no module, its port instead; a camera driven
/// through its own Bluetooth remote has no module either, its brand instead.
public struct CameraStatusReport: Sendable {
    /// What drives the camera, as far as the report tells.
    public enum Kind: Sendable, Equatable {
        case module
        case tethered
        case bluetoothCamera(CameraBrand)
    }

    public var identity: CameraIdentity
    public var status: CameraStatus
    public var settings: [SettingDescriptor]
    public var kind: Kind

    /// Whether the camera is tethered through libgphoto2 rather than behind a module.
    public var tethered: Bool { kind == .tethered }

    public init(identity: CameraIdentity, status: CameraStatus, settings: [SettingDescriptor], kind: Kind) {
        self.identity = identity
        self.status = status
        self.settings = settings
        self.kind = kind
    }

    /// Asks `camera` for its status, and for its settings when it is on.
    public static func gather(_ camera: any Camera) async throws(CameraError) -> CameraStatusReport {
        let status = try await camera.status()
        let settings = status.cameraPower == .on ? try await camera.settings() : []
        // From the identity, not the camera's type: a camera the daemon holds comes as a
        // RemoteCamera, its identity saying what drives it.
        let kind: Kind = switch camera.identity.link {
        case .module: .module
        case .tethered: .tethered
        case .ownRemote(let brand): CameraBrand(rawValue: brand).map(Kind.bluetoothCamera) ?? .module
        }
        return CameraStatusReport(identity: camera.identity, status: status, settings: settings, kind: kind)
    }

    public var json: JSONValue {
        var cameraMembers: [String: JSONValue] = [
            "model": identity.cameraModel.map(JSONValue.string) ?? .null,
            "power": .string(status.cameraPower.description),
            "busy": .bool(status.busy),
        ]
        cameraMembers["battery"] = status.cameraBattery.map { .integer(Int64($0)) }
        cameraMembers["storage"] = status.storage.map { .string($0.description) }
        cameraMembers["shotsRemaining"] = status.shotsRemaining.map { .integer(Int64($0)) }
        cameraMembers["exposureMode"] = status.exposureMode.map { .string($0.description) }
        cameraMembers["meteredEV"] = status.meteredEV.map { .string($0.text) }
        let capabilities = JSONValue.array(identity.capabilities.names.map(JSONValue.string))
        var members: [String: JSONValue] = [
            "connection": .string(status.connection.phase.rawValue),
            "backend": .string(backendName),
            "settings": .object(Dictionary(uniqueKeysWithValues: settings.map { ($0.setting.userName, JSONValue.string($0.value.text)) })),
        ]
        switch kind {
        case .tethered:
            cameraMembers["port"] = .string(identity.name)
            cameraMembers["capabilities"] = capabilities
            cameraMembers["shotsThisSession"] = .integer(Int64(status.shotCounter))
        case .bluetoothCamera(let brand):
            cameraMembers["name"] = .string(identity.name)
            cameraMembers["brand"] = .string(brand.rawValue)
            cameraMembers["capabilities"] = capabilities
            cameraMembers["shotsThisSession"] = .integer(Int64(status.shotCounter))
        case .module:
            var module: [String: JSONValue] = ["name": .string(identity.name), "capabilities": capabilities,
                                               "shotCounter": .integer(Int64(status.shotCounter))]
            module["firmware"] = identity.firmwareVersion.map(JSONValue.string)
            module["protocolVersion"] = identity.protocolVersion.map { .integer(Int64($0)) }
            module["battery"] = status.moduleBattery.map { .integer(Int64($0)) }
            members["module"] = .object(module)
        }
        members["camera"] = .object(cameraMembers)
        return .object(members)
    }

    /// `unleashed`, `gphoto2`, or `ble` for a camera driven through its own Bluetooth remote.
    private var backendName: String {
        switch kind {
        case .module: BackendChoice.unleashed.rawValue
        case .tethered: BackendChoice.gphoto2.rawValue
        case .bluetoothCamera: "ble"
        }
    }
}

extension SavedFile {
    /// A downloaded picture, for `--json`.
    public var json: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "path": .string(path), "bytes": .integer(Int64(bytes)), "cameraPath": .string(cameraPath),
            "shotCounter": .integer(Int64(shotCounter)),
        ]
        members["frame"] = frame.map { .integer(Int64($0)) }
        return members
    }
}

/// The cameras libgphoto2 finds, and the one `port` (or `model`) names when detection does not
/// find it (a camera on the network is not detected, nor one only its model reaches: it is opened
/// to be listed).
public enum CameraDetection {
    public static func list(port: String?, model: String? = nil) async throws(CameraFailure) -> [DetectedCamera] {
        do throws(CameraError) {
            var found = try await GPhoto2Detection.detect()
            // Found already: on the port named, or (with no port) anywhere, and as the model named.
            let detected = found.contains { camera in
                (port.map { camera.port == $0 } ?? true)
                    && (model.map { camera.model.caseInsensitiveCompare($0) == .orderedSame } ?? true)
            }
            if (model != nil || port != nil) && !detected {
                let camera = try await GPhoto2Camera.open(port: port, model: model)
                found.append(DetectedCamera(model: camera.identity.cameraModel ?? camera.identity.name, port: port ?? camera.port))
                await camera.close()
            }
            return found
        } catch {
            throw CameraFailure(error)
        }
    }
}

/// `demo reset`: fresh simulated cameras in place of demo mode's single camera, or of a rig's.
public enum CameraDemoReset {
    /// One camera replaced: its name in a rig (nil for the single camera), its state file, and
    /// the new camera.
    public struct Replaced: Sendable {
        public var name: String?
        public var file: URL
        public var camera: VirtualCamera

        public var json: JSONValue {
            var entry: [String: JSONValue] = [
                "stateFile": .string(file.path), "profile": .string(camera.profile.id), "model": .string(camera.profile.model),
                "power": .string(camera.power.description), "battery": .integer(Int64(camera.battery)),
                "shotsRemaining": .integer(Int64(camera.shotsRemaining)),
            ]
            entry["camera"] = name.map(JSONValue.string)
            return .object(entry)
        }
    }

    /// Replaces the cameras `names` (none: the single camera) with new ones of `profile`, or of
    /// the body each was.
    public static func reset(_ names: [String], profile: CameraProfile?) throws(CameraFailure) -> [Replaced] {
        let files: [(String?, URL)] = names.isEmpty ? [(nil, Demo.defaultStateFile())] : names.map { ($0, CameraSpec.demoStateFile(for: $0)) }
        var replaced: [Replaced] = []
        for (name, file) in files {
            do throws(DemoError) {
                replaced.append(Replaced(name: name, file: file, camera: try Demo.reset(stateFile: file, profile: profile)))
            } catch {
                throw CameraFailure(error)
            }
        }
        return replaced
    }

    /// Refuses while `daemon` holds simulated cameras: it would save its own over the fresh
    /// ones when it stops.
    public static func refuseWhileHeld(by daemon: DaemonClient?) async throws(CameraFailure) {
        guard let daemon, let status = try? await daemon.status(),
              status.cameras.contains(where: { $0.source.hasPrefix("simulated") }) else { return }
        throw CameraFailure(code: "daemonHoldsDemo", "the daemon holds the simulated cameras and saves them when it stops; "
            + "stop it, run `unleashed demo reset`, and start it again", status: .refused)
    }

    /// The whole `--json` document: the camera's entry, or a rig's under `cameras`.
    public static func json(_ replaced: [Replaced], rig: Bool) -> JSONValue {
        rig ? ["cameras": .array(replaced.map(\.json))] : replaced[0].json
    }
}
