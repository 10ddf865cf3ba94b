public import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import JSON
import UnleashedApp
import UnleashedKit
import UnleashedSimulator

/// Options every command takes.
///
/// Each command's help leaves them out (their group is hidden); `unleashed help options`
/// describes them.
struct GlobalOptions: ParsableArguments, Sendable {
    /// The heading they are shown under.
    static let title = "Global options"

    @Flag(help: "Use the built-in simulated module and camera (also UNLEASHED_DEMO=1).")
    var demo = false

    @Flag(help: "Drive the camera from this process even when the daemon runs (see `unleashed daemon`).")
    var direct = false

    @Flag(help: "Print JSON for scripts, errors included, instead of text.")
    var json = false

    @Option(name: .customLong("demo-profile"), help: ArgumentHelp(
        "The simulated camera body: \(CameraProfile.allIDs.joined(separator: ", ")).", valueName: "profile"))
    var demoProfile: String?

    @Option(name: .customLong("demo-seed"), help: ArgumentHelp(
        "Makes the simulator's faults and timing repeatable.", valueName: "n"))
    var demoSeed: UInt64 = 1

    @Option(name: .customLong("demo-faults"), help: ArgumentHelp(
        "Faults for the simulated radio and module, e.g. drop=0.05,linkloss=30s@2m (see docs/user-guide.md).",
        valueName: "plan"))
    var demoFaults: String?

    // Read unconditionally: a place in the southern or western hemisphere starts with a minus.
    @Option(name: .customLong("demo-sky"), parsing: .unconditional, help: ArgumentHelp(
        "The simulated camera meters a clear sky at this place: LAT,LON in degrees (north and east positive), and "
            + "optionally the moment the sky starts from, e.g. 52.5,13.4,2026-06-21T19:00:00Z (default: now). "
            + "For trying --ramp auto.", valueName: "place"))
    var demoSky: String?

    @Option(help: ArgumentHelp(
        "The Bluetooth adapter to use (default: the first one).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp(
        "The module to use, by address or name (default: the one `unleashed connect` remembered).", valueName: "address"))
    var module: String?

    @Option(name: .customLong("ble-camera"), help: ArgumentHelp(
        "A camera to drive over Bluetooth LE through its own remote protocol (GoPro, Sony, Canon, Fujifilm, Nikon), "
            + "by address or name; its brand is read from its advertisement (see `unleashed scan`, docs/cameras.md).",
        valueName: "address"))
    var bleCamera: String?

    @Option(help: ArgumentHelp(
        "The brand of --ble-camera when its advertisement does not say: \(CameraRequest.brandNames).", valueName: "brand"))
    var brand: String?

    @Option(name: .customLong("demo-camera"), help: ArgumentHelp(
        "Use a simulated camera of this brand, spoken to through the brand's own Bluetooth remote protocol: "
            + "\(CameraRequest.brandNames).", valueName: "brand"))
    var demoCamera: String?

    @Option(name: .customLong("scan-timeout"), help: ArgumentHelp(
        "How long to scan for a module that BlueZ does not know yet.", valueName: "duration"))
    var scanTimeout = "10s"

    @Option(help: ArgumentHelp(
        "What drives the camera: unleashed (a module over Bluetooth) or gphoto2 (a camera on USB or PTP/IP "
            + "through libgphoto2). Default: $UNLEASHED_BACKEND, else unleashed.",
        valueName: "backend"))
    var backend: BackendChoice?

    @Option(help: ArgumentHelp(
        "The camera's libgphoto2 port, for --backend gphoto2: usb: (the first USB camera, the default), "
            + "usb:BUS,DEV, or ptpip:HOST[:PORT]. `unleashed cameras` lists them.",
        valueName: "port"))
    var port: String?

    // Not --camera, which names the cameras of a rig in the commands that fire one.
    @Option(name: .customLong("camera-model"), help: ArgumentHelp(
        "For --backend gphoto2: open the camera as this model, libgphoto2's name for it (`gphoto2 --list-cameras`, "
            + "e.g. \"USB PTP Class Camera\" for any PTP camera), to reach a camera libgphoto2 does not detect. "
            + "With no --port, on usb:.",
        valueName: "model"))
    var cameraModel: String?

    @Option(help: ArgumentHelp(
        "Copy every picture taken to this folder (--backend gphoto2), between frames of a time-lapse.",
        valueName: "folder"))
    var download: String?

    @Option(help: ArgumentHelp(
        "Names for downloaded pictures: %F frame, %n shot in this session, %t time, %f the camera's name "
            + "for the file, %C its suffix, %% a percent sign. Default: %f.%C.",
        valueName: "template"))
    var filename: String?

    /// The options as the application layer takes them.
    var request: CameraRequest {
        CameraRequest(demo: demo, demoProfile: demoProfile, demoSeed: demoSeed, demoFaults: demoFaults, demoSky: demoSky,
                      backend: backend, port: port, cameraModel: cameraModel, download: download, filename: filename, module: module, adapter: adapter,
                      camera: bleCamera, brand: brand, demoCamera: demoCamera,
                      scanTimeout: scanTimeout, environment: ProcessInfo.processInfo.environment)
    }

    var demoMode: Bool { request.demoMode }

    /// The backend chosen by --backend, else by $UNLEASHED_BACKEND, else the module.
    func chosenBackend() throws(ExitCode) -> BackendChoice { try reporting(request.chosenBackend) }

    func demoOptions() throws(ExitCode) -> DemoOptions { try reporting(request.demoOptions) }

    /// Reads a duration argument (`250ms`, `30s`, `1m30s`, `2h`), or fails with a usage error.
    func duration(_ text: String, for what: String) throws(ExitCode) -> Duration {
        try reporting { () throws(CameraFailure) in try CameraRequest.duration(text, for: what) }
    }

    /// Connects to the camera and runs `body` (``CameraRequest/withCamera(daemon:events:onInterrupt:savedFiles:json:_:)``);
    /// a failure becomes a message and an exit status. Pictures copied to this computer are
    /// listed a line each, or with `savedFiles: .summary` one line at the end.
    func withCamera(onInterrupt: (@Sendable () -> Void)? = nil, savedFiles: SavedFileReport.TextLines = .eachFile,
                    events: Bool = false,
                    _ body: @escaping @Sendable (any Camera) async throws(CameraError) -> Void) async throws {
        let (request, daemon, listed, json) = (request, daemonClient(), download == nil ? nil : savedFiles, json)
        try await reporting { () async throws(CameraFailure) in
            try await request.withCamera(daemon: daemon, events: events, onInterrupt: onInterrupt, savedFiles: listed, json: json, body)
        }
    }

    /// Prints `value` as JSON or the text `human()` gives.
    func emit(_ value: JSONValue, human: () -> String) {
        Output.line(json ? Output.json(value) : human())
    }

    /// The result of `body`, or its failure reported.
    func reporting<Value>(_ body: () throws(CameraFailure) -> Value) throws(ExitCode) -> Value {
        do throws(CameraFailure) {
            return try body()
        } catch {
            throw fail(error)
        }
    }

    /// The result of `body`, or its failure reported.
    func reporting<Value>(_ body: () async throws(CameraFailure) -> Value) async throws(ExitCode) -> Value {
        do throws(CameraFailure) {
            return try await body()
        } catch {
            throw fail(error)
        }
    }

    func fail(_ error: CameraChoiceError) -> ExitCode { fail(CameraFailure(error)) }
    func fail(_ error: CameraOpenError) -> ExitCode { fail(CameraFailure(error)) }
    func fail(_ error: DemoError) -> ExitCode { fail(CameraFailure(error)) }
    func fail(_ error: CameraError) -> ExitCode { fail(CameraFailure(error)) }

    func fail(code: String, _ message: String, status: ExitStatus, extra: [String: JSONValue] = [:]) -> ExitCode {
        fail(CameraFailure(code: code, message, status: status, extra: extra))
    }

    /// Prints `failure` (as JSON with --json) and returns its exit status.
    func fail(_ failure: CameraFailure) -> ExitCode {
        let failure = failure.inDemo(demoMode)
        failure.report(json: json)
        return ExitCode(failure.status.rawValue)
    }
}

extension BackendChoice: ExpressibleByArgument {}

// The application layer's terminal line, by the name the commands use.
typealias TerminalLine = UnleashedApp.TerminalLine
