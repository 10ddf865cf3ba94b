import Foundation
import Testing
import UnleashedTestSupport

/// `unleashed daemon` as installed: the built binary, a private bus with the fake bluetoothd and
/// three modules, the CLI and curl as its clients.
@Suite("unleashed daemon over BlueZ (private bus, unleashed-sim bluez, three modules)", .serialized, .timeLimit(.minutes(3)))
struct DaemonCommandTests {
    @Test("the daemon connects the three configured modules and reports them by name")
    func connectsModules() async throws {
        let rig = try await DaemonRig()
        try await rig.start()
        let status = try await rig.status()
        let cameras = try #require(status["cameras"] as? [[String: Any]])
        #expect(cameras.compactMap { $0["name"] as? String }.sorted() == ["a", "b", "c"])
        #expect(cameras.allSatisfy { ($0["status"] as? [String: Any])?["connection"] as? String == "ready" }, "\(cameras)")
        #expect(Set(cameras.compactMap { $0["source"] as? String }) == ["F0:5E:D0:00:00:01", "F0:5E:D0:00:00:02", "F0:5E:D0:00:00:03"])
        #expect(try await rig.stop(SIGTERM) == 0, "\(rig.daemonLog)")
        #expect(!FileManager.default.fileExists(atPath: rig.socket), "a clean stop removes the socket")
    }

    @Test("the socket is owned by the daemon's user and has mode 0660; its directory 0750")
    func socketModeAndOwner() async throws {
        let rig = try await DaemonRig(modules: 1)
        try await rig.start()
        let attributes = try FileManager.default.attributesOfItem(atPath: rig.socket)
        #expect(attributes[.type] as? FileAttributeType == .typeSocket)
        #expect(attributes[.posixPermissions] as? Int == 0o660)
        #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid())
        #expect((attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value == getgid())
        let directory = (rig.socket as NSString).deletingLastPathComponent
        #expect(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int == 0o750)
        // A second daemon on the same socket is refused instead of taking it over.
        let second = try await rig.unleashed("daemon", "--config", rig.configFile.path)
        #expect(second.status != 0)
        #expect(second.stderr.contains("another process is listening"), "\(second.stderr)")
        #expect(try await rig.status()["cameras"] != nil, "the first daemon still answers")
        try await rig.stop()
    }
}
