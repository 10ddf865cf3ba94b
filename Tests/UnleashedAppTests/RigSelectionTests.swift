import Foundation
import Testing
import UnleashedApp

/// How a rig is named (--camera, --group, --all) and resumed, without launching the CLI.
@Suite struct RigSelectionTests {
    private let known = KnownRigs(groups: [.init(name: "stereo", cameras: ["left", "right"])], all: ["left", "right", "top"])

    @Test func camerasNamedOneByOneAreTakenInOrderEachOnce() throws {
        #expect(try RigSelection(cameras: ["b", "a"]).named(module: nil, backend: .unleashed) == ["b", "a"])
        #expect(throws: CameraChoiceError.usage("--camera a is given twice")) {
            try RigSelection(cameras: ["a", "a"]).named(module: nil, backend: .unleashed)
        }
        #expect(try RigSelection(group: "stereo").named(module: nil, backend: .unleashed) == nil, "a group is looked up")
    }

    @Test func aRigIsNamedOneWayOnly() {
        #expect(throws: CameraChoiceError.usage("name the cameras one way: --camera (repeated), --group or --all")) {
            try RigSelection(cameras: ["left"], group: "stereo").named(module: nil, backend: .unleashed)
        }
        #expect(throws: CameraChoiceError.usage("--module picks one module; a rig is named with --camera, --group or --all")) {
            try RigSelection(all: true).named(module: "AA:BB:CC:DD:EE:FF", backend: .unleashed)
        }
        #expect(throws: CameraChoiceError.usage("a rig is a set of Unleashed modules; --backend gphoto2 drives one camera")) {
            try RigSelection(all: true).named(module: nil, backend: .gphoto2)
        }
    }

    @Test func groupsAndAllComeFromWhereTheyWereLookedUp() throws {
        #expect(try RigSelection(group: "stereo").pick(from: known, in: .configuration) == ["left", "right"])
        #expect(try RigSelection(all: true).pick(from: known, in: .daemon) == ["left", "right", "top"])
        #expect(throws: CameraChoiceError.invalid(code: "unknownGroup", "no group 'trio' in the configuration (groups: stereo)")) {
            try RigSelection(group: "trio").pick(from: known, in: .configuration)
        }
        #expect(throws: CameraChoiceError.invalid(code: "unknownGroup", "no group 'trio' in the daemon's configuration (it has no [[groups]])")) {
            try RigSelection(group: "trio").pick(from: KnownRigs(groups: [], all: []), in: .daemon)
        }
        #expect(throws: CameraChoiceError.invalid(code: "noModules", "--all means every configured module, and the daemon holds no camera")) {
            try RigSelection(all: true).pick(from: KnownRigs(groups: [], all: []), in: .daemon)
        }
    }

    @Test func aRigRunResumesOnTheCamerasItWasStartedWith() throws {
        #expect(try RigSelection.resuming(runID: 3, recorded: ["left", "right"], given: nil) == ["left", "right"])
        #expect(try RigSelection.resuming(runID: 3, recorded: ["left", "right"], given: ["left", "right"]) == ["left", "right"])
        #expect(throws: CameraChoiceError.usage("run 3 is a rig of left, right; resume it with those cameras, or without --camera, --group or --all")) {
            try RigSelection.resuming(runID: 3, recorded: ["left", "right"], given: ["right", "left"])
        }
        #expect(try RigSelection.resuming(runID: 4, recorded: ["SIM0001"], given: nil) == nil)
        #expect(throws: CameraChoiceError.usage("run 4 was on one camera (SIM0001); resume it without --camera, --group or --all")) {
            try RigSelection.resuming(runID: 4, recorded: ["SIM0001"], given: ["a", "b"])
        }
    }

    /// Without a daemon, groups and modules come from the files a user's daemon would read.
    @Test func theUsersConfigurationNamesGroupsAndModules() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("rigs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: config) }
        try FileManager.default.createDirectory(at: config.appendingPathComponent("unleashed"), withIntermediateDirectories: true)
        try Data("""
            [[modules]]
            name = "left"
            address = "AA:BB:CC:DD:EE:01"

            [[modules]]
            name = "right"
            address = "AA:BB:CC:DD:EE:02"

            [[groups]]
            name = "stereo"
            cameras = ["left", "right"]

            """.utf8).write(to: config.appendingPathComponent("unleashed/config.toml"))
        let rigs = try KnownRigs.configured(environment: ["XDG_CONFIG_HOME": config.path, "HOME": config.path])
        #expect(rigs.groups == [.init(name: "stereo", cameras: ["left", "right"])])
        #expect(rigs.all == ["left", "right"])
        #expect(rigs.addresses == ["left": "AA:BB:CC:DD:EE:01", "right": "AA:BB:CC:DD:EE:02"])
    }
}
