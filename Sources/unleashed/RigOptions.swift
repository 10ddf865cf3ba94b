import ArgumentParser
import CameraKit
import DaemonClient
import Foundation
import Intervalometer
import UnleashedApp
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The cameras of a rig a command acts on together: named one by one, by a configured group,
/// or all configured modules. Without any of them a command acts on one camera as before.
struct RigOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("camera"), help: ArgumentHelp(
        "A camera of a rig: a configured module's name, or a module's address or name. Repeat it for each "
            + "camera; they are all fired together.", valueName: "name"))
    var cameras: [String] = []

    @Option(help: ArgumentHelp("The cameras of a group from the configuration ([[groups]]).", valueName: "name"))
    var group: String?

    @Flag(name: .customLong("all"), help: "Every module the configuration lists ([[modules]]).")
    var allCameras = false

    /// The selection as the application layer takes it.
    var selection: RigSelection { RigSelection(cameras: cameras, group: group, all: allCameras) }

    /// Whether a rig was asked for.
    var isRig: Bool { selection.isRig }

    /// The names of the rig's cameras, in order, each once. With a daemon answering, groups and
    /// `--all` are the daemon's: its `[[groups]]` and every camera it holds. Without one they
    /// come from the configuration files the daemon would read (`unleashed daemon --check`).
    func names(_ options: GlobalOptions, daemon: DaemonClient?) async throws(ExitCode) -> [String] {
        let selection = selection
        let backend = try options.chosenBackend()
        do throws(CameraChoiceError) {
            if let named = try selection.named(module: options.module, backend: backend) { return named }
        } catch {
            throw options.fail(error)
        }
        let known: KnownRigs
        let source: RigSelection.Source
        if let daemon, let answered = try await daemonRigs(daemon, options) {
            (known, source) = (answered, .daemon)
        } else {
            (known, source) = (try Self.configuration(options), .configuration)
        }
        do throws(CameraChoiceError) {
            return try selection.pick(from: known, in: source)
        } catch {
            throw options.fail(error)
        }
    }

    /// The rig to resume `record` with: the cameras it was started with, which the journal
    /// keeps (``RigSelection/resuming(runID:recorded:given:)``).
    func resuming(_ record: RunRecord, _ options: GlobalOptions) async throws(ExitCode) -> RigOptions? {
        let given = isRig ? try await names(options, daemon: options.daemonClient()) : nil
        let cameras: [String]?
        do throws(CameraChoiceError) {
            cameras = try RigSelection.resuming(runID: record.id, recorded: record.cameras, given: given)
        } catch {
            throw options.fail(error)
        }
        guard let cameras else { return nil }
        do {
            return try RigOptions.parse(cameras.flatMap { ["--camera", $0] })
        } catch {
            throw options.usage("run \(record.id) names its cameras '\(record.camera)', which cannot be read back")
        }
    }

    /// The daemon's groups (`GET /v1/groups`) for `--group`, or its cameras (`GET /v1/status`)
    /// for `--all`; nil when it does not answer after all (a socket left by one that did not
    /// stop cleanly).
    private func daemonRigs(_ daemon: DaemonClient, _ options: GlobalOptions) async throws(ExitCode) -> KnownRigs? {
        do {
            guard group != nil else {
                return KnownRigs(groups: [], all: try await daemon.status().cameras.map(\.name))
            }
            return KnownRigs(groups: try await daemon.groups().map { KnownRigs.Group(name: $0.name, cameras: $0.cameras) }, all: [])
        } catch {
            if error.isUnreachable { return nil }
            throw options.fail(error)
        }
    }

    /// The rigs of the configuration files of a user's daemon (the system file, then the user's own).
    static func configuration(_ options: GlobalOptions) throws(ExitCode) -> KnownRigs {
        do throws(DaemonLaunchError) {
            return try KnownRigs.configured(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw options.fail(code: "configuration", error.description, status: .usage)
        }
    }
}

extension GlobalOptions {
    /// Opens every camera of the rig, runs `body` with them, and closes them. A camera that
    /// cannot be opened stops the command before anything is fired, naming the camera. Ctrl-C
    /// cancels `body` (or calls `onInterrupt`); a second Ctrl-C exits at once.
    func withRig(_ selection: RigOptions, onInterrupt: (@Sendable () -> Void)? = nil,
                 _ body: @escaping @Sendable (Rig) async throws(ExitCode) -> Void) async throws {
        let daemon = daemonClient()
        let names = try await selection.names(self, daemon: daemon)
        let backends = try await openRig(names, daemon: daemon)
        let members = zip(names, backends).map { RigCamera(name: $0, camera: $1.camera) }
        guard let rig = Rig(members) else { throw usage("a rig needs at least one camera, each named once") }
        let failure = await Interrupt.running(onInterrupt: onInterrupt) { () async throws(ExitCode) in try await body(rig) }
        for backend in backends { try? await backend.close() }
        if let failure { throw failure }
    }

    /// One camera per name, opened at once: the daemon's cameras when it answers, simulated
    /// ones in demo mode, else modules over BlueZ. All or none: what was opened is closed again
    /// when one fails.
    private func openRig(_ names: [String], daemon: DaemonClient?) async throws(ExitCode) -> [OpenedCamera] {
        if let daemon { return try await openRemoteRig(names, daemon: daemon) }
        let configured = demoMode ? [:] : (try RigOptions.configuration(self)).addresses
        let choice = try cameraChoice()
        let rig: RigSpec
        do throws(CameraChoiceError) {
            rig = try choice.rig(names, configured: configured)
        } catch {
            throw fail(error)
        }
        do throws(RigOpenError) {
            return try await CameraProvider().open(rig: rig)
        } catch {
            throw fail(error.error)
        }
    }

    /// The daemon's cameras of a rig, all or none.
    private func openRemoteRig(_ names: [String], daemon: DaemonClient) async throws(ExitCode) -> [OpenedCamera] {
        var opened: [OpenedCamera] = []
        for name in names {
            do {
                opened.append(.remote(try await RemoteCamera.open(client: daemon, camera: name)))
            } catch {
                for camera in opened { try? await camera.close() }
                throw fail(error)
            }
        }
        return opened
    }

    /// Each simulated camera of a rig keeps its settings in a file of its own.
    static func demoStateFile(for name: String) -> URL { CameraSpec.demoStateFile(for: name) }
}

extension GlobalOptions {
    /// Fires `command` on every camera of `rig` together and prints what each did, then the
    /// spread between the first and last command and between the first and last completion.
    /// Every camera is reported, those that failed included; the exit status is then the first
    /// failure's.
    func fire<Value: Sendable>(_ rig: Rig, _ command: @escaping @Sendable (any Camera) async throws(CameraError) -> Value,
                               json: @escaping (Value) -> JSONValue, human: @escaping (Value) -> String) async throws(ExitCode) {
        _ = await rig.prepareShot()
        let (outcomes, spread) = await rig.fire(command)
        try report(outcomes, spread, json: json, human: human)
    }

    /// Prints what each camera of a rig did, then the spreads; the exit status is the first
    /// failure's.
    func report<Value: Sendable>(_ outcomes: [Volley<Value>.Outcome], _ spread: VolleySpread,
                                 json: (Value) -> JSONValue, human: (Value) -> String) throws(ExitCode) {
        var entries: [JSONValue] = []
        var lines: [String] = []
        var failure: CameraError?
        for outcome in outcomes {
            switch outcome.result {
            case .success(let value)?:
                var entry = json(value).objectValue ?? [:]
                entry["camera"] = .string(outcome.name)
                entries.append(.object(entry))
                lines.append("\(outcome.name): \(human(value))")
            case .failure(let error)?:
                failure = failure ?? error
                entries.append(["camera": .string(outcome.name),
                                "error": ["code": .string(Output.classify(error).0), "message": .string(error.description)]])
                lines.append("\(outcome.name): error: \(error)")
            case nil:
                break
            }
        }
        emit(["cameras": .array(entries), "spread": Self.json(spread)]) {
            (lines + [Self.text(spread, cameras: outcomes.count)]).joined(separator: "\n")
        }
        if let failure { throw ExitCode(Output.classify(failure).1.rawValue) }
    }

    static func json(_ spread: VolleySpread) -> JSONValue {
        var members: [String: JSONValue] = [:]
        members["commandsMs"] = spread.commands.map { .number(Double($0.wholeMicroseconds) / 1000) }
        members["completionsMs"] = spread.completions.map { .number(Double($0.wholeMicroseconds) / 1000) }
        return .object(members)
    }

    static func text(_ spread: VolleySpread, cameras: Int) -> String {
        func milliseconds(_ duration: Duration?) -> String {
            duration.map { String(format: "%.3f ms", Double($0.wholeMicroseconds) / 1000) } ?? "-"
        }
        return "Spread over \(English.counting(cameras, "camera")): commands \(milliseconds(spread.commands)), completions \(milliseconds(spread.completions))"
    }
}
