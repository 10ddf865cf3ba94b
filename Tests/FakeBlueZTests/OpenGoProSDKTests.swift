import CameraProtocols
import DBus
import FakeBlueZ
import Foundation
import SimulatedCameras
import Testing
import UnleashedTestSupport

/// The simulated GoPro seen by GoPro's own software: the Open GoPro Python SDK (`open-gopro`,
/// pinned in scripts/setup, in its own virtual environment) runs unchanged over BLE against the
/// fake bluetoothd, and pairs through Debian's `bluetoothctl`, as it does on Linux. A body that
/// lacked what the SDK expects (GP-0091, a 4-byte board type in Get Hardware Info) failed here
/// before it was fixed; the body notes every message it could not read, and there must be none.
@Suite("GoPro's own SDK (open-gopro) against the simulated GoPro", .timeLimit(.minutes(3)))
struct OpenGoProSDKTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The SDK's Python: scripts/setup makes it.
    static let python = ProcessInfo.processInfo.environment["UNLEASHED_OPEN_GOPRO_PYTHON"]
        ?? root.appending(path: ".build/open-gopro/bin/python").path
    static let session = root.appending(path: "Tests/VendorSDK/open_gopro_session.py").path

    @Test("open-gopro finds the camera, pairs through bluetoothctl, opens, reads hardware info and statuses, and takes a picture the body counts")
    func sdkSession() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "scripts/setup installs open-gopro in \(Self.python)")
        let rig = try await FakeBlueZRig {
            $0.modules = 0
            $0.cameras = [FakeBlueZ.CameraSource(name: "GoPro") { GoProBody(address: $0) }]
        }
        let address = SimulatedCameraCatalog.address(index: 0)
        let body = try #require(await rig.fake.camera(address: address) as? GoProBody)
        // Opened as a person would: Preferences → Wireless Connections → Connect Device.
        await body.setPairingMode(true)

        let client = try await PythonClient.run(python: Self.python, script: Self.session,
                                                [String(body.serialNumber.suffix(4))],
                                                bus: rig.bus.address, within: .seconds(150))
        let stderr = client.errors
        #expect(client.status == 0, "the SDK's session failed: \(stderr.suffix(4000))")
        let steps = try Self.steps(client.output)

        // Opening: pairing through bluetoothctl, GP-0091's "pairing finished", the third-party
        // flag, the local time, the version (2.0, the only one the SDK accepts), COHN's status.
        let paired = try await rig.managedObjects()[CameraDeviceTests.Body.path()]?[CameraDeviceTests.device]?.dictionaryValue?["Paired"]
        #expect(paired?.unwrapped == .bool(true), "bluetoothctl paired the camera")
        #expect(steps["opened"]?["version"] as? String == "2.0")
        #expect(await body.pairedClientName != nil, "the SDK said pairing finished, on GP-0091")
        #expect(await body.thirdPartyClient)
        #expect(await body.timeZone != nil, "Set Local Date Time")
        #expect(await body.dateTime != nil)
        let requests = await body.requests
        #expect(requests.contains(.getCOHNStatus(register: true)))
        #expect(requests.contains(.registerStatusUpdates([.busy])) && requests.contains(.registerStatusUpdates([.encoding])),
                "the SDK's readiness tracking registers for busy and encoding")

        // Asked of it: hardware info, statuses, a picture.
        #expect(steps["hardware info"]?["model"] as? String == body.model)
        #expect(steps["hardware info"]?["serial"] as? String == body.serialNumber)
        #expect(steps["statuses"]?["battery"] as? Int == 87)
        #expect(steps["photo preset group"]?["ok"] as? Bool == true)
        #expect(steps["keep alive"]?["ok"] as? Bool == true)
        #expect(await body.keepAlivesReceived >= 1)
        #expect(steps["shutter"]?["ok"] as? Bool == true)
        #expect(steps["shutter"]?["encoding"] as? [Int] == [1, 0], "the registration brought encoding on, then off")
        #expect(await body.picturesTaken == 1)
        #expect(steps["closed"] != nil)
        // bleak closes its bus when it hears `Connected: false`; a Disconnect answered after that
        // signal fails its call with EOFError, which the SDK logs and carries on.
        #expect(!stderr.contains("Error disconnecting"), "\(stderr.suffix(2000))")

        let unrecognized = await body.unrecognized
        #expect(unrecognized.isEmpty, "every message the SDK sent was understood: \(unrecognized.map(GoPro.hex))")
        await rig.stop()
    }

    /// The session's JSON lines by step.
    static func steps(_ text: String) throws -> [String: [String: Any]] {
        var steps: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let step = object["step"] as? String else { continue }
            steps[step] = object
        }
        return steps
    }
}
