public import ArgumentParser
import BlueZ
import CameraKit
import DaemonClient
import Dispatch
import Foundation
import GPhoto2
import Synchronization
import UnleashedKit
import UnleashedProtocol
import UnleashedApp
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
        "The simulated camera body: \(CameraProfile.all.map(\.id).joined(separator: ", ")).", valueName: "profile"))
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

    @Option(help: ArgumentHelp(
        "Copy every picture taken to this folder (--backend gphoto2), between frames of a time-lapse.",
        valueName: "folder"))
    var download: String?

    @Option(help: ArgumentHelp(
        "Names for downloaded pictures: %F frame, %n shot in this session, %t time, %f the camera's name "
            + "for the file, %C its suffix, %% a percent sign. Default: %f.%C.",
        valueName: "template"))
    var filename: String?

    var demoMode: Bool {
        demo || ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["UNLEASHED_DEMO"]?.lowercased() ?? "")
    }

    /// The backend chosen by --backend, else by $UNLEASHED_BACKEND, else the module.
    func chosenBackend() throws(ExitCode) -> BackendChoice {
        do throws(CameraChoiceError) {
            return try BackendChoice.chosen(backend, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw fail(error)
        }
    }

    /// The options as a camera to open in this process.
    func cameraChoice() throws(ExitCode) -> CameraChoice {
        CameraChoice(backend: try chosenBackend(), demo: demoMode ? try demoOptions() : nil, port: port, download: download,
                     filename: filename, module: module ?? RememberedModule.load()?.address, adapter: chosenAdapter,
                     scanTimeout: try moduleScanTimeout())
    }

    /// Connects to the camera, runs `body`, and turns any failure into a message and exit
    /// status. Ctrl-C cancels `body` (which then ends what it started, e.g. closes a bulb
    /// exposure), or calls `onInterrupt` instead when given (a time-lapse stops on its own
    /// terms); a second Ctrl-C exits at once.
    ///
    /// Pictures a tethered camera copies to this computer are listed as they arrive: a line
    /// each, or with `savedFiles: .summary` one line at the end (JSON: always a line each).
    func withCamera(onInterrupt: (@Sendable () -> Void)? = nil, savedFiles: SavedFileReport.TextLines = .eachFile,
                    _ body: @escaping @Sendable (any Camera) async throws(CameraError) -> Void) async throws {
        let opened = try await openCamera()
        let camera = opened.camera
        let report = download == nil ? nil : SavedFileReport(await camera.events(), options: self, text: savedFiles)
        let failure = await Interrupt.running(onInterrupt: onInterrupt) { () async throws(CameraError) in try await body(camera) }
        do throws(CameraOpenError) {
            try await opened.close()
        } catch {
            if failure == nil { throw fail(error) }
        }
        await report?.done()
        if let failure { throw fail(failure) }
    }

    /// The camera to drive: the daemon's when one answers, else the one the options choose.
    private func openCamera() async throws(ExitCode) -> OpenedCamera {
        if let daemon = daemonClient(), let camera = try await remoteCamera(through: daemon) {
            return .remote(camera)
        }
        let spec = try spec()
        do throws(CameraOpenError) {
            return try await CameraProvider().open(spec)
        } catch {
            throw fail(error)
        }
    }

    /// The camera the options choose, or the refusal of options that do not fit it.
    private func spec() throws(ExitCode) -> CameraSpec {
        let choice = try cameraChoice()
        do throws(CameraChoiceError) {
            return try choice.spec()
        } catch {
            throw fail(error)
        }
    }

    func demoOptions() throws(ExitCode) -> DemoOptions {
        var options = DemoOptions(seed: demoSeed)
        if let demoProfile {
            guard let profile = CameraProfile.named(demoProfile) else {
                throw fail(code: "usage", DemoError.unknownProfile(demoProfile).description, status: .usage)
            }
            options.profile = profile
        }
        if let demoFaults {
            do {
                options.faults = try DemoFaults(parsing: demoFaults)
            } catch {
                throw fail(code: "usage", "--demo-faults: \(error)", status: .usage)
            }
        }
        if let demoSky {
            do {
                options.scene = try Daylight(parsing: demoSky).sceneLight
            } catch {
                throw fail(code: "usage", "--demo-sky: \(error)", status: .usage)
            }
        }
        return options
    }

    /// Reads a duration argument (`250ms`, `30s`, `1m30s`, `2h`), or fails with a usage error.
    func duration(_ text: String, for what: String) throws(ExitCode) -> Duration {
        do throws(DurationTextError) {
            return try readDuration(text)
        } catch .tooLong {
            throw fail(code: "invalidDuration",
                       "\(what): '\(text)' is too long to be counted in milliseconds; write a duration like 30s, 1m30s or 2h",
                       status: .usage)
        } catch {
            throw fail(code: "invalidDuration",
                       "\(what): '\(text)' is not a duration; write it like 250ms, 30s, 1m30s or 2h", status: .usage)
        }
    }

    /// Prints `value` as JSON or the text `human()` gives.
    func emit(_ value: JSONValue, human: () -> String) {
        Output.line(json ? Output.json(value) : human())
    }

    func fail(_ error: CameraChoiceError) -> ExitCode {
        switch error {
        case .usage(let message): usage(message)
        case .noModule: fail(code: "noModule", error.description, status: .unavailable)
        case .invalid(let code, let message): fail(code: code, message, status: .usage)
        }
    }

    func fail(_ error: CameraOpenError) -> ExitCode {
        switch error {
        case .bluetooth(let error): fail(error)
        case .camera(let error): fail(error)
        case .demo(let error): fail(error)
        }
    }

    func fail(_ error: DemoError) -> ExitCode {
        if case .camera(let cameraError) = error { return fail(cameraError) }
        return fail(code: "demoState", error.description, status: .unavailable)
    }

    func fail(_ error: CameraError) -> ExitCode {
        var (code, status) = Output.classify(error)
        if status == .interrupted { status = Interrupt.exitStatus }
        var extra: [String: JSONValue] = [:]
        if case .valueNotOffered(_, let nearest, let offered) = error {
            extra["nearest"] = .array(nearest.map { .string($0.text) })
            extra["offered"] = .array(offered.map { .string($0.text) })
        }
        return fail(code: code, error.description, status: status, extra: extra)
    }

    func fail(_ error: BlueZError) -> ExitCode {
        fail(code: error.code, error.description, status: ExitStatus(rawValue: error.exitStatus) ?? .software)
    }

    func fail(code: String, _ message: String, status: ExitStatus, extra: [String: JSONValue] = [:]) -> ExitCode {
        var message = message
        if code == "cameraOff", demoMode {
            // The simulated camera is not switched on by hand: it stays off until replaced.
            message += "; the simulated camera stays off until `unleashed demo reset` puts a fresh one, switched on, in its place"
        }
        if json {
            var body = extra
            body["code"] = .string(code)
            body["message"] = .string(message)
            Output.line(Output.json(["error": .object(body)]))
        } else {
            Output.note("error: \(message)")
        }
        return ExitCode(status.rawValue)
    }
}

extension BackendChoice: ExpressibleByArgument {}

/// Exit statuses, from sysexits(3) so that scripts can tell failures apart.
enum ExitStatus: Int32 {
    case usage = 64
    case refused = 65
    case unavailable = 69
    case software = 70
    /// The run journal could not be written; the run is resumable and nothing taken was lost.
    case ioError = 74
    case temporary = 75
    /// Not allowed: the camera device's permissions, or the daemon's role or locked mode.
    case noPermission = 77
    /// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
    case interrupted = 130
    /// Stopped by SIGTERM (128 + SIGTERM).
    case terminated = 143
}

/// Ctrl-C while a command runs: the first calls `onFirst`, the second exits. With
/// `terminate`, SIGTERM does the same (a service manager's stop, `kill`), so that a command
/// ends the way Ctrl-C ends it, with its closing line, and exits 143 instead of 130.
final class Interrupt {
    private let watch: SignalWatch
    private static let received = Mutex<Int32?>(nil)

    /// The signal that interrupted the command, if one did.
    static var signal: Int32? { received.withLock { $0 } }

    /// The exit status of a command that a signal ended: 143 after SIGTERM, else 130.
    static var exitStatus: ExitStatus { signal == SIGTERM ? .terminated : .interrupted }

    init(terminate: Bool = false, _ onFirst: @escaping @Sendable () -> Void) {
        let count = Mutex(0)
        let handler: (Int32) -> @Sendable () -> Void = { number in
            {
                Self.received.withLock { $0 = $0 ?? number }
                let presses = count.withLock { $0 += 1; return $0 }
                if presses == 1 { onFirst() } else { exit(Self.exitStatus.rawValue) }
            }
        }
        var handlers = [SIGINT: handler(SIGINT)]
        if terminate { handlers[SIGTERM] = handler(SIGTERM) }
        watch = SignalWatch(handlers)
    }

    func disarm() { watch.disarm() }

    /// Runs `work` as a task that the first Ctrl-C cancels (or that calls `onInterrupt`
    /// instead), and returns how it failed, if it did.
    static func running<Failure: Error>(onInterrupt: (@Sendable () -> Void)?,
                                        _ work: @escaping @Sendable () async throws(Failure) -> Void) async -> Failure? {
        let task = Task { () async -> Failure? in
            do throws(Failure) {
                try await work()
                return nil
            } catch {
                return error
            }
        }
        // A command that handles SIGTERM itself passes `onInterrupt`; for the others SIGTERM
        // cancels like Ctrl-C.
        let interrupt = Interrupt(terminate: onInterrupt == nil, onInterrupt ?? { task.cancel() })
        let failure = await task.value
        interrupt.disarm()
        return failure
    }
}

/// Signals handled on a dispatch queue instead of by their default action, until disarmed.
final class SignalWatch {
    private let sources: [Int32: any DispatchSourceSignal]

    init(_ handlers: [Int32: @Sendable () -> Void]) {
        var made: [Int32: any DispatchSourceSignal] = [:]
        for (number, handler) in handlers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            made[number] = source
        }
        sources = made
    }

    /// Gives the signals their default actions back.
    func disarm() {
        for (number, source) in sources {
            source.cancel()
            signal(number, SIG_DFL)
        }
    }
}
