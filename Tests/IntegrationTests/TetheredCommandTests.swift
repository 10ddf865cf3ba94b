import Foundation
import Testing
import UnleashedTestSupport

/// The built `unleashed --backend gphoto2` driving the simulated PTP/IP camera
/// (`unleashed-sim ptpip`) through the real libgphoto2, as it drives a camera on USB.
@Suite("unleashed over libgphoto2 (unleashed-sim ptpip)", .serialized, .timeLimit(.minutes(3)))
struct TetheredCommandTests {
    @Test("status names the camera, its battery and its card")
    func status() async throws {
        let camera = try await SimulatedTetheredCamera()
        let result = try await camera.unleashed("status", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        let body = try #require(json["camera"] as? [String: Any], "\(json)")
        #expect((body["model"] as? String)?.isEmpty == false)
        #expect(body["battery"] is Int, "\(body)")
        #expect(body["shotsRemaining"] is Int, "\(body)")
        let text = try await camera.unleashed("status")
        #expect(text.status == 0)
        #expect(text.stdout.contains("iso"), "\(text.stdout)")
    }

    @Test("settings list, get and set by common name and by libgphoto2 path; an unoffered value is refused")
    func settings() async throws {
        let camera = try await SimulatedTetheredCamera()
        let list = try await camera.unleashed("settings", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        let listed = try #require(list.stdout.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [[String: Any]])
        let names = Set(listed.compactMap { $0["setting"] as? String })
        #expect(names.isSuperset(of: ["iso", "shutter-speed", "aperture", "exposure-compensation"]), "\(names)")

        let set = try await camera.unleashed("settings", "set", "iso", "400")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "iso set to 400\n")
        let get = try await camera.unleashed("settings", "get", "iso")
        #expect(get.stdout == "iso 400\n", "a new session reads the value the camera kept")

        let refused = try await camera.unleashed("settings", "set", "iso", "450", "--json")
        #expect(refused.status == 65)
        let error = try #require(refused.json?["error"] as? [String: Any])
        #expect(error["code"] as? String == "valueNotOffered")
        #expect((error["nearest"] as? [String])?.contains("400") == true, "\(error)")

        let all = try await camera.unleashed("settings", "list", "--all")
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.contains("/main/"), "\(all.stdout)")
        let byPath = try await camera.unleashed("settings", "get", "batterylevel", "--json")
        #expect(byPath.status == 0, "\(byPath.stderr)")
        #expect((byPath.json?["setting"] as? String)?.hasPrefix("/main/") == true, "\(byPath.stdout)")
        let unknown = try await camera.unleashed("settings", "get", "no-such-setting")
        #expect(unknown.status == 64, "\(unknown.stderr)")
    }

    @Test("a shot is downloaded to a folder, byte for byte what the camera holds")
    func shootAndDownload() async throws {
        let camera = try await SimulatedTetheredCamera()
        let folder = camera.directory.appendingPathComponent("pictures")
        let result = try await camera.unleashed("--download", folder.path, "shoot", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let downloaded = try result.savedPicture()
        let card = try camera.cardFiles()
        #expect(card.count == 1)
        #expect(downloaded == card.values.first, "the file saved is the camera's file")
    }

}

/// Time-lapses through the built `unleashed --backend gphoto2` and the simulated PTP/IP camera:
/// a suite of their own, one at a time, beside the commands' suite and the lost camera's, so
/// that the three lanes take a third of the time one did (it was the longest suite of `make test`).
@Suite("unleashed time-lapses over libgphoto2 (unleashed-sim ptpip)", .serialized, .timeLimit(.minutes(3)))
struct TetheredRunTests {
    @Test("a 20-frame time-lapse downloads every frame under its frame number, runs the hook, and opens one session")
    func timelapseWithDownloadAndHook() async throws {
        let camera = try await SimulatedTetheredCamera()
        let folder = camera.directory.appendingPathComponent("frames")
        let hookLog = camera.directory.appendingPathComponent("hook.log")
        let hook = camera.directory.appendingPathComponent("hook.sh")
        try """
            #!/bin/sh
            echo "$ACTION $ARGUMENT $UNLEASHED_FRAME" >> '\(hookLog.path)'
            """.write(to: hook, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)

        // A shot and its download take about 0.2 s here; `defer` takes every slot even when a
        // machine running the rest of the suite stalls one for longer than the interval (timing
        // is `make bench-gphoto2`'s business, not this test's).
        let run = try await camera.unleashed("--download", folder.path, "--filename", "tl_%F.%C", "timelapse",
                                             "--interval", "1s", "--frames", "20", "--overrun", "defer",
                                             "--hook", hook.path, "--json")
        #expect(run.status == 0, "\(run.stderr)\(run.stdout)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 20)
        #expect(frames.allSatisfy { $0["outcome"] as? String == "taken" }, "\(frames)\n\(run.stderr)")

        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == (1...20).map { String(format: "tl_%04d.jpg", $0) })
        let card = try camera.cardFiles()
        #expect(Set(card.values) == Set(try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }),
                "every downloaded file is one of the camera's, and every one of the camera's was downloaded")

        let calls = try String(contentsOf: hookLog, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(calls.first?.first == "init")
        #expect(calls.last?.first == "stop", "stop comes after the last download")
        #expect(calls.filter { $0.first == "frame" }.count == 20)
        let downloads = calls.filter { $0.first == "download" }
        #expect(downloads.count == 20)
        #expect(downloads.allSatisfy { $0.count == 3 && $0[1].hasSuffix("tl_\(String(format: "%04d", Int($0[2]) ?? 0)).jpg") },
                "ARGUMENT is the saved file and UNLEASHED_FRAME its frame: \(downloads)")

        #expect(camera.events("sessionOpened").count == 1, "the camera is opened once for the whole run")
        #expect(camera.events("capture").count == 20)
    }

    @Test("a ramped time-lapse meters each picture's thumbnail: a metering frame first, then the ramp's settings, recorded")
    func rampedTimelapse() async throws {
        // The sun just above the horizon: about EV 10, where 1/125 s at f/8 is three stops under.
        let camera = try await SimulatedTetheredCamera(["--sky", "52.5,13.4,2026-12-21T14:45:00Z", "--time-scale", "0.01"])
        let run = try await camera.unleashed("timelapse", "--interval", "1s", "--frames", "4", "--overrun", "defer",
                                             "--ramp", "auto", "--ramp-aperture", "f/2.8", "--ramp-gap", "300ms", "--json")
        #expect(run.status == 0, "\(run.stderr)\(run.stdout)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 4 && frames.allSatisfy { $0["outcome"] as? String == "taken" }, "\(frames)\n\(run.stderr)")
        #expect(frames.first?["exposure"] as? String == "a metering frame at the camera's settings")
        #expect(frames.first?["ramp"] == nil)
        for frame in frames.dropFirst() {
            #expect((frame["exposure"] as? String)?.hasSuffix(" f/2.8") == true, "\(frame)")
            let ramp = try #require(frame["ramp"] as? [String: Any], "\(frame)")
            #expect(abs((ramp["sceneEV"] as? Double ?? 0) - 10) < 1.5, "the thumbnail read about EV 10: \(ramp)")
        }
        let brightness = camera.events("capture").compactMap { $0["brightness"] as? Double }
        #expect(brightness.count == 4)
        #expect(brightness.first.map { $0 < -2 } == true, "the metering frame at 1/125 s, f/8 is dark: \(brightness)")
        #expect(brightness.dropFirst().allSatisfy { abs($0) < 0.5 }, "the ramped frames are exposed for the light: \(brightness)")
    }

    @Test("a full card stops the series with a message that says so")
    func fullCard() async throws {
        let camera = try await SimulatedTetheredCamera(["--card-capacity", "3"])
        let result = try await camera.unleashed("shoot", "--count", "5", "--json")
        #expect(result.status == 65, "\(result.stdout)\(result.stderr)")
        #expect(result.jsonLines.filter { $0["counter"] != nil }.count == 3)
        let error = try #require(result.jsonLines.compactMap { $0["error"] as? [String: Any] }.first)
        #expect(error["code"] as? String == "cardFull")
        #expect((error["message"] as? String)?.contains("card is full") == true, "\(error)")
        let text = try await camera.unleashed("shoot")
        #expect(text.status == 65)
        #expect(text.stderr.contains("card is full"), "\(text.stderr)")
    }

}

/// A camera lost in the middle of a time-lapse, in a lane of its own: its run is the longest of
/// these (half a minute on the real clock).
@Suite("unleashed over libgphoto2: the camera lost mid-run (unleashed-sim ptpip)", .timeLimit(.minutes(3)))
struct TetheredLossTests {
    @Test("the camera disappearing mid-run: frames fail with the reason, and the run picks up when it is back")
    func cameraDisappearsMidRun() async throws {
        let camera = try await SimulatedTetheredCamera()
        async let running = camera.unleashed("timelapse", "--interval", "500ms", "--frames", "60", "--json")
        try await camera.waitForEvents("capture", count: 5)
        let port = camera.port
        camera.pullThePlug()
        // Real time: the camera stays away while slots of the wall-clock schedule pass.
        try await Task.sleep(for: .seconds(2))
        try await camera.start(port: port)
        // The run finds the camera again, however slowly a loaded machine lets it; 60 slots
        // leave it about 25 s to do so.
        try await camera.waitForEvents("capture", count: 5 + 3, timeout: .seconds(25))
        let run = try await running
        #expect(run.status == 0, "the run ends normally: \(run.stderr)")
        let frames = run.jsonLines.filter { $0["frame"] != nil }
        #expect(frames.count == 60, "every slot is recorded")
        // The shot or the picture's reading after it notices the camera gone: the slot fails, or
        // the next ones are skipped because the camera is not connected; either way the record
        // says why.
        let missed = frames.filter { $0["outcome"] as? String != "taken" }
        #expect(!missed.isEmpty, "frames while the camera was gone are not taken: \(frames.map { $0["outcome"] ?? "" })")
        #expect(missed.allSatisfy { ($0["error"] as? String)?.contains("camera") == true }, "\(missed)")
        let lastFailed = missed.compactMap { $0["frame"] as? Int }.max() ?? 0
        let takenAfter = frames.filter { $0["outcome"] as? String == "taken" && ($0["frame"] as? Int ?? 0) > lastFailed }
        #expect(takenAfter.count >= 3, "frames are taken again once the camera is back: \(frames)")
    }

}

extension TetheredCommandTests {
    @Test("cameras lists a camera named by --port; module commands point to it")
    func camerasCommand() async throws {
        let camera = try await SimulatedTetheredCamera()
        let result = try await camera.unleashed("cameras", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try #require(result.stdout.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [[String: Any]])
        #expect(listed.contains { $0["port"] as? String == camera.portString }, "\(listed)")
        let scan = try await camera.unleashed("scan")
        #expect(scan.status == 64)
        #expect(scan.stderr.contains("unleashed cameras"))
    }
}

@Suite("unleashed --backend gphoto2: mistakes on the command line")
struct TetheredUsageTests {
    private func unleashed(_ arguments: String...) async throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = FileManager.default.temporaryDirectory.path
        environment["UNLEASHED_DEMO"] = nil
        environment["UNLEASHED_BACKEND"] = nil
        return try await runProgram(Built.unleashed, arguments, environment: environment)
    }

    /// Which options go with which backend is decided in UnleashedApp (`CameraChoice`, tested
    /// there); here the parser's refusal and the exit status of a camera that is not there.
    @Test("bad backend, nothing listening")
    func usageErrors() async throws {
        let badBackend = try await unleashed("--backend", "canon", "status")
        #expect(badBackend.status == 64)
        #expect(badBackend.stderr.contains("unleashed"), "\(badBackend.stderr)")
        let nobody = try await unleashed("--backend", "gphoto2", "--port", "ptpip:127.0.0.1:1", "status", "--json")
        #expect(nobody.status == 69, "\(nobody.stdout)\(nobody.stderr)")
        #expect(nobody.json?["error"] != nil)
    }
}
