public import CameraKit
public import Foundation
public import UnleashedKit
import UnleashedProtocol

/// What a simulated camera remembers between runs of the command-line tool: settings, shot
/// count, card and battery, as a real camera would.
public struct DemoCameraState: Codable, Hashable, Sendable {
    public var profile: String
    /// Setting user names to canonical value text.
    public var settings: [String: String]
    public var shotCounter: UInt32
    public var shotsRemaining: UInt32
    public var battery: UInt8
    /// `on`, `off` or `sleeping`; absent in files from older versions (the camera is then on).
    public var power: String?
    /// When video recording started (Unix milliseconds), if the camera is recording: a
    /// recording outlives the command that started it, as on a real camera.
    public var recordingSince: UInt64?

    public init(_ camera: VirtualCamera) {
        profile = camera.profile.id
        settings = Dictionary(uniqueKeysWithValues: camera.settings.map { ($0.key.userName, $0.value.text) })
        shotCounter = camera.shotCounter
        shotsRemaining = camera.shotsRemaining
        battery = camera.battery
        power = camera.power.description
    }
}

extension VirtualCamera {
    /// The camera as it was saved; settings that no longer parse or are not offered keep their
    /// defaults.
    public init(restoring state: DemoCameraState) throws(DemoError) {
        guard let profile = CameraProfile.named(state.profile) else { throw .unknownProfile(state.profile) }
        self.init(profile: profile)
        for (name, text) in state.settings {
            guard let setting = SettingID(userName: name), let value = SettingValue(setting: setting, text: text) else { continue }
            try? apply(value)
        }
        shotCounter = state.shotCounter
        shotsRemaining = min(state.shotsRemaining, profile.cardCapacity)
        battery = min(state.battery, 100)
        if let name = state.power {
            guard let power = CameraPower(name: name) else {
                throw .unreadableState(path: "", reason: "camera power '\(name)' is not on, off or sleeping")
            }
            self.power = power
        }
    }
}

/// Why demo mode could not start.
public enum DemoError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownProfile(String)
    case unreadableState(path: String, reason: String)
    case unwritableState(path: String, reason: String)
    case camera(CameraError)

    public var description: String {
        switch self {
        case .unknownProfile(let id):
            "no simulated camera called '\(id)'; there are: \(CameraProfile.all.map(\.id).joined(separator: ", "))"
        case .unreadableState(let path, let reason):
            "the demo camera's state file \(path) is unreadable (\(reason)); remove it to start with a new simulated camera"
        case .unwritableState(let path, let reason):
            "could not save the demo camera's state to \(path): \(reason)"
        case .camera(let error):
            error.description
        }
    }
}

/// How demo mode is set up: `--demo-profile`, `--demo-seed`, `--demo-faults`.
public struct DemoOptions: Sendable {
    /// The camera body to simulate; nil keeps the one in the state file (or the first profile).
    public var profile: CameraProfile?
    /// Makes faults and reconnect jitter repeatable.
    public var seed: UInt64
    /// What the simulated radio does wrong, and when the module goes out of range.
    public var faults: DemoFaults
    public var mtu: Int
    /// The light the camera meters; nil for a constant scene.
    public var scene: SceneLight?

    public init(profile: CameraProfile? = nil, seed: UInt64 = 1, faults: DemoFaults = DemoFaults(), mtu: Int = 185,
                scene: SceneLight? = nil) {
        self.profile = profile
        self.seed = seed
        self.faults = faults
        self.mtu = mtu
        self.scene = scene
    }
}

/// Demo mode: a simulated module and camera in this process, reached through a simulated radio
/// by the same connection, session and codec as a real module.
public struct Demo: Sendable {
    public let camera: ModuleCamera
    public let module: VirtualModule
    public let radio: SimulatedRadio
    public let stateFile: URL?
    private let faultPlan: Task<Void, Never>

    /// Where the demo camera's state lives unless told otherwise: `$UNLEASHED_DEMO_STATE`, else
    /// `$XDG_STATE_HOME/unleashed/demo-camera.json`, else `~/.local/state/unleashed/demo-camera.json`.
    public static func defaultStateFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let path = environment["UNLEASHED_DEMO_STATE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return unleashedStateDirectory(environment: environment).appendingPathComponent("demo-camera.json")
    }

    /// Starts the simulated module, restoring its camera from `stateFile` when there is one, and
    /// connects to it.
    public static func start(stateFile: URL?, options: DemoOptions = DemoOptions()) async throws(DemoError) -> Demo {
        let (camera, recordingSince) = try loadCamera(from: stateFile, profile: options.profile)
        let module = VirtualModule(camera: camera, scene: options.scene, seed: options.seed)
        if let recordingSince {
            let now = VirtualModule.systemTime()
            await module.resumeRecording(startedAgo: .milliseconds(Int64(now > recordingSince ? now - recordingSince : 0)))
        }
        let radio = SimulatedRadio(module: module, mtu: options.mtu, faults: options.faults.link, seed: options.seed)
        let connection = ModuleConnection(provider: radio, seed: options.seed)
        let faultPlan = options.faults.schedule(on: radio)
        do throws(CameraError) {
            let camera = try await ModuleCamera(connection: connection, name: module.info.serialNumber)
            return Demo(camera: camera, module: module, radio: radio, stateFile: stateFile, faultPlan: faultPlan)
        } catch {
            faultPlan.cancel()
            throw .camera(error)
        }
    }

    /// Saves the camera's state and ends the session.
    public func finish() async throws(DemoError) {
        faultPlan.cancel()
        await camera.close()
        guard let stateFile else { return }
        var state = DemoCameraState(await module.camera)
        if let elapsed = await module.recordingElapsed {
            state.recordingSince = VirtualModule.systemTime() - UInt64(max(elapsed.wholeMilliseconds, 0))
        }
        try Self.save(state, to: stateFile)
    }

    /// Replaces the camera saved in `stateFile` with a fresh one, as out of the box: switched
    /// on, its battery, card, settings and shot count as new, not recording. It keeps the saved
    /// body unless `profile` names another; a damaged file is replaced as well.
    @discardableResult
    public static func reset(stateFile: URL, profile: CameraProfile? = nil) throws(DemoError) -> VirtualCamera {
        let saved = try? JSONDecoder().decode(DemoCameraState.self, from: Data(contentsOf: stateFile))
        let camera = VirtualCamera(profile: profile ?? saved.flatMap { CameraProfile.named($0.profile) } ?? CameraProfile.all[0])
        try save(DemoCameraState(camera), to: stateFile)
        return camera
    }

    private static func save(_ state: DemoCameraState, to stateFile: URL) throws(DemoError) {
        do {
            try FileManager.default.createDirectory(at: stateFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(state).write(to: stateFile, options: .atomic)
        } catch {
            throw .unwritableState(path: stateFile.path, reason: error.localizedDescription)
        }
    }

    /// The saved camera, or a new one; asking for a different body than the saved one starts a
    /// new camera of that body.
    private static func loadCamera(from stateFile: URL?, profile: CameraProfile?) throws(DemoError) -> (VirtualCamera, recordingSince: UInt64?) {
        let fresh = VirtualCamera(profile: profile ?? CameraProfile.all[0])
        guard let stateFile, FileManager.default.fileExists(atPath: stateFile.path) else { return (fresh, nil) }
        let state: DemoCameraState
        do {
            state = try JSONDecoder().decode(DemoCameraState.self, from: Data(contentsOf: stateFile))
        } catch {
            throw .unreadableState(path: stateFile.path, reason: String(describing: error))
        }
        if let profile, profile.id != state.profile { return (fresh, nil) }
        do {
            return (try VirtualCamera(restoring: state), state.recordingSince)
        } catch .unreadableState(_, let reason) {
            throw .unreadableState(path: stateFile.path, reason: reason)
        }
    }
}
