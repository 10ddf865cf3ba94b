import CameraKit
import Daemon
public import UnleashedAPI

/// How a command names the cameras of a rig: one by one, by a configured group, or all of them.
/// The rules between those ways and the lookups of groups live here, so that they can be
/// tested without a command line.
public struct RigSelection: Sendable, Equatable {
    /// Cameras named one by one, in order.
    public var cameras: [String]
    /// A group from the configuration (`[[groups]]`).
    public var group: String?
    /// Every configured module (or every camera a daemon holds).
    public var all: Bool

    public init(cameras: [String] = [], group: String? = nil, all: Bool = false) {
        self.cameras = cameras
        self.group = group
        self.all = all
    }

    /// Whether a rig was asked for; without one a command acts on one camera.
    public var isRig: Bool { !cameras.isEmpty || group != nil || all }

    /// Refuses a selection that names the cameras more than one way, or one that goes with
    /// `--module` or a backend that drives one camera; returns the cameras named one by one,
    /// or nil when a group or `--all` must be looked up (``pick(from:in:)``).
    public func named(module: String?, backend: BackendChoice) throws(CameraChoiceError) -> [String]? {
        let ways = (cameras.isEmpty ? 0 : 1) + (group == nil ? 0 : 1) + (all ? 1 : 0)
        guard ways == 1 else { throw .usage("name the cameras one way: --camera (repeated), --group or --all") }
        guard module == nil else { throw .usage("--module picks one module; a rig is named with --camera, --group or --all") }
        guard backend == .unleashed else { throw .usage("a rig is a set of Unleashed modules; --backend gphoto2 drives one camera") }
        guard !cameras.isEmpty else { return nil }
        var seen: Set<String> = []
        for name in cameras where !seen.insert(name).inserted { throw .usage("--camera \(name) is given twice") }
        return cameras
    }

    /// Where groups and `--all` were looked up, for messages.
    public enum Source: Sendable {
        /// The daemon that answers: its `[[groups]]` and every camera it holds.
        case daemon
        /// The configuration files a user's daemon would read.
        case configuration
    }

    /// The cameras of the group, or all of them with `--all`.
    public func pick(from known: KnownRigs, in source: Source) throws(CameraChoiceError) -> [String] {
        let place = source == .daemon ? "the daemon's configuration" : "the configuration"
        if let group {
            guard let found = known.groups.first(where: { $0.name == group }) else {
                let names = known.groups.map(\.name)
                throw .invalid(code: "unknownGroup", "no group '\(group)' in \(place)"
                    + (names.isEmpty ? " (it has no [[groups]])" : " (groups: \(names.joined(separator: ", ")))"))
            }
            return found.cameras
        }
        guard !known.all.isEmpty else {
            let none = source == .daemon ? "the daemon holds no camera"
                : "the configuration lists none (add [[modules]] tables; see docs/configuration.md)"
            throw .invalid(code: "noModules", "--all means every configured module, and \(none)")
        }
        return known.all
    }

    /// The cameras to resume run `runID` with: those it was started with (`recorded`, as the
    /// journal keeps them, comma-separated), since every frame is recorded per body. A rig
    /// given again (`given`) must be the same cameras in the same order; a run of one camera
    /// is resumed without one (nil).
    public static func resuming(runID: Int64, recorded cameras: [String], given: [String]?) throws(CameraChoiceError) -> [String]? {
        guard cameras.count > 1 else {
            if given != nil {
                throw .usage("run \(runID) was on one camera (\(cameras.first ?? "")); resume it without --camera, --group or --all")
            }
            return nil
        }
        if let given, given != cameras {
            throw .usage("run \(runID) is a rig of \(cameras.joined(separator: ", ")); "
                + "resume it with those cameras, or without --camera, --group or --all")
        }
        return cameras
    }
}

/// The groups and the cameras `--all` means, wherever they come from.
public struct KnownRigs: Sendable, Equatable {
    /// A named group of cameras, as the API lists them.
    public typealias Group = GroupList.Group

    public var groups: [Group]
    /// Every camera, in order.
    public var all: [String]
    /// A configured module's address by its name.
    public var addresses: [String: String]

    public init(groups: [Group], all: [String], addresses: [String: String] = [:]) {
        self.groups = groups
        self.all = all
        self.addresses = addresses
    }

    /// The rigs of a user's daemon configuration files (the system file, then the user's own),
    /// read without a daemon.
    public static func configured(environment: [String: String]) throws(DaemonLaunchError) -> KnownRigs {
        let configuration: DaemonConfiguration
        do {
            configuration = try DaemonConfiguration.load(files: DaemonConfiguration.files(scope: .user, environment: environment),
                                                         environment: environment, scope: .user)
        } catch {
            throw .configuration(error.description)
        }
        return KnownRigs(groups: configuration.groups.map { Group(name: $0.name, cameras: $0.cameras) },
                         all: configuration.modules.map(\.name),
                         addresses: Dictionary(configuration.modules.map { ($0.name, $0.address) }, uniquingKeysWith: { first, _ in first }))
    }
}
