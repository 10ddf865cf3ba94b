import BlueZ
import CameraKit
import CommandCore
import DaemonClient
import Foundation
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The decisions the global options make, called without launching the program.
@Suite struct CameraRequestTests {
    @Test func demoModeComesFromTheFlagOrTheEnvironment() {
        #expect(!CameraRequest(environment: [:]).demoMode)
        #expect(CameraRequest(demo: true, environment: [:]).demoMode)
        #expect(CameraRequest(environment: ["UNLEASHED_DEMO": "1"]).demoMode)
        #expect(CameraRequest(environment: ["UNLEASHED_DEMO": "Yes"]).demoMode)
        #expect(!CameraRequest(environment: ["UNLEASHED_DEMO": "0"]).demoMode)
    }

    @Test func theBackendIsTheOptionsElseTheEnvironments() throws {
        #expect(try CameraRequest(environment: ["UNLEASHED_BACKEND": "gphoto2"]).chosenBackend() == .gphoto2)
        #expect(try CameraRequest(backend: .unleashed, environment: ["UNLEASHED_BACKEND": "gphoto2"]).chosenBackend() == .unleashed)
        #expect(throws: CameraFailure.usage("UNLEASHED_BACKEND: 'canon' is not a backend; use unleashed or gphoto2")) {
            try CameraRequest(environment: ["UNLEASHED_BACKEND": "canon"]).chosenBackend()
        }
    }

    /// Formerly a launch each of `bulb`, `video record` and `watch --for` with a bad duration.
    @Test(arguments: ["soon", "1.5", "3", "10", "1.5 secs"])
    func aBadDurationIsAUsageErrorThatSaysHowToWriteOne(text: String) {
        do {
            _ = try CameraRequest.duration(text, for: "bulb")
            Issue.record("'\(text)' was read as a duration")
        } catch {
            #expect(error.code == "invalidDuration")
            #expect(error.status == .usage)
            #expect(error.message == "bulb: '\(text)' is not a duration; write it like 250ms, 30s, 1m30s or 2h")
        }
    }

    @Test func aDurationTooLongToCountIsSaidToBe() throws {
        #expect(try CameraRequest.duration("1m30s", for: "--for") == .seconds(90))
        #expect(throws: CameraFailure.self) { try CameraRequest.duration("9999999999999h", for: "--for") }
        do {
            _ = try CameraRequest.duration("9999999999999h", for: "--for")
        } catch {
            #expect(error.message.contains("is too long to be counted in milliseconds"))
        }
    }

    /// Formerly launches of `--demo-profile leica` and `--demo-faults drop=2`.
    @Test func badDemoOptionsAreUsageErrorsNamingTheOption() throws {
        #expect(throws: CameraFailure.usage("no simulated camera called 'leica'; there are: nikon-z, canon-r, sony-a")) {
            try CameraRequest(demo: true, demoProfile: "leica", environment: [:]).demoOptions()
        }
        do {
            _ = try CameraRequest(demo: true, demoFaults: "drop=2", environment: [:]).demoOptions()
            Issue.record("drop=2 was accepted")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("--demo-faults: cannot read 'drop=2': expected a probability from 0 to 1"))
        }
        #expect(throws: CameraFailure.self) { try CameraRequest(demo: true, demoSky: "north", environment: [:]).demoOptions() }
        let options = try CameraRequest(demo: true, demoProfile: "canon-r", demoSeed: 9, environment: [:]).demoOptions()
        #expect(options.profile?.id == "canon-r")
        #expect(options.seed == 9)
    }

    /// Formerly a launch of `status` without a module: the refusal says what to do.
    @Test func noModuleIsUnavailableAndSaysWhatToDo() {
        let failure = CameraFailure(CameraChoiceError.noModule)
        #expect(failure.status == .unavailable)
        #expect(failure.code == "noModule")
        #expect(failure.message.contains("run with --demo (or UNLEASHED_DEMO=1)"))
    }

    @Test func theDemoCameraOpensFromTheRequestAndTwoNamesMakeARig() async throws {
        let request = CameraRequest(demo: true, environment: [:])
        #expect(try request.choice().demo != nil)
        let named = try await request.rigNames(RigSelection(cameras: ["a", "b"]), daemon: nil)
        #expect(named == ["a", "b"])
        await #expect(throws: CameraFailure.usage("--camera a is given twice")) {
            try await request.rigNames(RigSelection(cameras: ["a", "a"]), daemon: nil)
        }
    }
}

/// Every error a command meets, classified as it prints: code, exit status and `--json` members.
@Suite struct CameraFailureTests {
    @Test func aCameraErrorTakesCameraKitsCodeAndStatus() {
        let cameraOff = CameraError.refused("shoot", .cameraOff, message: nil)
        let off = CameraFailure(cameraOff)
        #expect(off.code == cameraOff.code)
        #expect(off.status.rawValue == cameraOff.exitStatus)
        let iso = SettingValue(setting: .iso, text: "850")!
        let offered = [SettingValue(setting: .iso, text: "800")!, SettingValue(setting: .iso, text: "1000")!]
        let refused = CameraFailure(CameraError.valueNotOffered(iso, nearest: offered, offered: offered))
        #expect(refused.status == .refused)
        #expect(refused.extra["nearest"] == .array([.string("800"), .string("1000")]))
        #expect(refused.json.objectValue?["error"]?.objectValue?["offered"] != nil)
    }

    /// Formerly part of a launch: demo mode tells how a switched-off camera comes back.
    @Test func aCameraOffInDemoModeSaysHowToGetAFreshOne() {
        let off = CameraFailure(CameraError.refused("shoot", .cameraOff, message: nil))
        #expect(off.code == "cameraOff")
        #expect(off.inDemo(false) == off)
        #expect(off.inDemo(true).message.hasSuffix("switched on, in its place"))
        #expect(CameraFailure(CameraError.focusFailed).inDemo(true) == CameraFailure(CameraError.focusFailed))
    }

    @Test func bluetoothAndDaemonRefusalsHaveTheirStatuses() {
        #expect(CameraFailure(BlueZError.pairingRefused("x")).status == .refused)
        #expect(CameraFailure(BlueZError.bluezNotRunning).code == "bluetoothdNotRunning")
        #expect(CameraFailure(DaemonClientError.http(status: 403, code: "forbidden", message: "no", camera: nil)).status == .noPermission)
        #expect(CameraFailure(DaemonClientError.http(status: 409, code: "busy", message: "no", camera: nil)).status == .refused)
        #expect(CameraFailure(DaemonClientError.http(status: 404, code: "x", message: "no", camera: nil)).status == .usage)
        #expect(CameraFailure(DaemonClientError.http(status: 503, code: "x", message: "no", camera: nil)).status == .unavailable)
        #expect(CameraFailure(DaemonClientError.notReachable(socket: "/s", reason: "gone")).code == "noDaemon")
    }

    @Test func aRigsRefusalNamesEachCamera() {
        let failure = CameraFailure(RigError.partlyApplied(applied: ["left"], failed: [.init(name: "right", error: .focusFailed)]))
        #expect(failure.code == "rigPartlyApplied")
        #expect(failure.status == .refused)
        #expect(failure.extra["applied"] == .array([.string("left")]))
        #expect(failure.extra["cameras"]?.arrayValue?.first?.objectValue?["camera"] == .string("right"))
    }

    @Test func aCommandLineThatDoesNotParse() {
        let failure = CameraFailure.commandLine("Missing value for '--frames <n>'", hint: "write --frames=-3", usage: true)
        #expect(failure.code == "usage")
        #expect(failure.message == "Missing value for '--frames <n>'; write --frames=-3")
        #expect(CameraFailure.commandLine("x", hint: nil, usage: false).code == "failed")
        #expect(CameraFailure.missingOption(in: "Missing value for '--frames <n>'") == "--frames")
        #expect(CameraFailure.missingOption(in: "Unknown option '--bogus'") == nil)
    }
}
