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

    public init(_ camera: VirtualCamera) {
        profile = camera.profile.id
        settings = Dictionary(uniqueKeysWithValues: camera.settings.map { ($0.key.userName, $0.value.text) })
        shotCounter = camera.shotCounter
        shotsRemaining = camera.shotsRemaining
        battery = camera.battery
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

/// Demo mode: a simulated module and camera in this process, reached over an in-memory link
/// through the same session and codec as a real module.
public struct Demo: Sendable {
    public let camera: ModuleCamera
    public let module: VirtualModule
    public let stateFile: URL?

    /// Where the demo camera's state lives unless told otherwise: `$UNLEASHED_DEMO_STATE`, else
    /// `$XDG_STATE_HOME/unleashed/demo-camera.json`, else `~/.local/state/unleashed/demo-camera.json`.
    public static func defaultStateFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let path = environment["UNLEASHED_DEMO_STATE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let stateHome = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".local/state")
        return stateHome.appendingPathComponent("unleashed/demo-camera.json")
    }

    /// Starts the simulated module, restoring its camera from `stateFile` when there is one, and
    /// connects to it.
    public static func start(stateFile: URL?, profile: CameraProfile = .nikonLike, mtu: Int = 247) async throws(DemoError) -> Demo {
        let camera = try loadCamera(from: stateFile, default: profile)
        let module = VirtualModule(camera: camera)
        let link = InMemoryLink(mtu: mtu)
        await module.serve(link.peripheral)
        do throws(CameraError) {
            let session: ModuleSession
            do {
                session = try ModuleSession(transport: link.central)
            } catch {
                throw .session(error)
            }
            return Demo(camera: try await ModuleCamera(session: session), module: module, stateFile: stateFile)
        } catch {
            throw .camera(error)
        }
    }

    /// Saves the camera's state and ends the session.
    public func finish() async throws(DemoError) {
        await camera.close()
        guard let stateFile else { return }
        let state = DemoCameraState(await module.camera)
        do {
            try FileManager.default.createDirectory(at: stateFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(state).write(to: stateFile, options: .atomic)
        } catch {
            throw .unwritableState(path: stateFile.path, reason: error.localizedDescription)
        }
    }

    private static func loadCamera(from stateFile: URL?, default profile: CameraProfile) throws(DemoError) -> VirtualCamera {
        guard let stateFile, FileManager.default.fileExists(atPath: stateFile.path) else {
            return VirtualCamera(profile: profile)
        }
        let state: DemoCameraState
        do {
            state = try JSONDecoder().decode(DemoCameraState.self, from: Data(contentsOf: stateFile))
        } catch {
            throw .unreadableState(path: stateFile.path, reason: String(describing: error))
        }
        return try VirtualCamera(restoring: state)
    }
}
