import ArgumentParser
import Daemon
import DaemonClient
import Foundation
import Intervalometer
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

    /// Whether a rig was asked for.
    var isRig: Bool { !cameras.isEmpty || group != nil || allCameras }

    /// The names of the rig's cameras, in order, each once. With a daemon answering, groups and
    /// `--all` are the daemon's: its `[[groups]]` and every camera it holds. Without one they
    /// come from the configuration files the daemon would read (`unleashed daemon --check`).
    func names(_ options: GlobalOptions, daemon: DaemonClient?) async throws(ExitCode) -> [String] {
        let ways = (cameras.isEmpty ? 0 : 1) + (group == nil ? 0 : 1) + (allCameras ? 1 : 0)
        guard ways == 1 else { throw options.usage("name the cameras one way: --camera (repeated), --group or --all") }
        guard options.module == nil else { throw options.usage("--module picks one module; a rig is named with --camera, --group or --all") }
        guard try options.chosenBackend() == .unleashed else {
            throw options.usage("a rig is a set of Unleashed modules; --backend gphoto2 drives one camera")
        }
        if !cameras.isEmpty {
            var seen: Set<String> = []
            for name in cameras where !seen.insert(name).inserted { throw options.usage("--camera \(name) is given twice") }
            return cameras
        }
        if let daemon, let known = try await daemonRigs(daemon, options) {
            return try pick(from: known, options, source: "the daemon's configuration", noModules: "the daemon holds no camera")
        }
        let configuration = try Self.configuration(options)
        let known = KnownRigs(groups: configuration.groups.map { ($0.name, $0.cameras) }, all: configuration.modules.map(\.name))
        return try pick(from: known, options, source: "the configuration", noModules: "the configuration lists none "
            + "(add [[modules]] tables; see docs/configuration.md)")
    }

    /// The rig to resume `record` with: the cameras it was started with, which the journal
    /// keeps. A rig given again must be the same cameras in the same order, since every
    /// frame is recorded per body; a run of one camera is resumed without one.
    func resuming(_ record: RunRecord, _ options: GlobalOptions) async throws(ExitCode) -> RigOptions? {
        let recorded = record.camera.split(separator: ",").map(String.init)
        guard recorded.count > 1 else {
            if isRig { throw options.usage("run \(record.id) was on one camera (\(record.camera)); resume it without --camera, --group or --all") }
            return nil
        }
        if isRig {
            let given = try await names(options, daemon: options.daemonClient())
            guard given == recorded else {
                throw options.usage("run \(record.id) is a rig of \(recorded.joined(separator: ", ")); "
                    + "resume it with those cameras, or without --camera, --group or --all")
            }
            return self
        }
        do {
            return try RigOptions.parse(recorded.flatMap { ["--camera", $0] })
        } catch {
            throw options.usage("run \(record.id) names its cameras '\(record.camera)', which cannot be read back")
        }
    }

    /// The groups and the cameras `--all` means, wherever they come from.
    struct KnownRigs {
        var groups: [(name: String, cameras: [String])]
        var all: [String]
    }

    private func pick(from known: KnownRigs, _ options: GlobalOptions, source: String, noModules: String) throws(ExitCode) -> [String] {
        if let group {
            guard let found = known.groups.first(where: { $0.name == group }) else {
                let names = known.groups.map(\.name)
                throw options.fail(code: "unknownGroup", "no group '\(group)' in \(source)"
                    + (names.isEmpty ? " (it has no [[groups]])" : " (groups: \(names.joined(separator: ", ")))"), status: .usage)
            }
            return found.cameras
        }
        guard !known.all.isEmpty else {
            throw options.fail(code: "noModules", "--all means every configured module, and \(noModules)", status: .usage)
        }
        return known.all
    }

    /// The daemon's groups (`GET /v1/groups`) for `--group`, or its cameras (`GET /v1/status`)
    /// for `--all`; nil when it does not answer after all (a socket left by one that did not
    /// stop cleanly).
    private func daemonRigs(_ daemon: DaemonClient, _ options: GlobalOptions) async throws(ExitCode) -> KnownRigs? {
        do {
            guard group != nil else {
                return KnownRigs(groups: [], all: try await daemon.status().cameras.map(\.name))
            }
            return KnownRigs(groups: try await daemon.groups().map { ($0.name, $0.cameras) }, all: [])
        } catch {
            if error.isUnreachable { return nil }
            throw options.fail(error)
        }
    }

    /// The configuration files of a user's daemon (the system file, then the user's own).
    static func configuration(_ options: GlobalOptions) throws(ExitCode) -> DaemonConfiguration {
        let environment = ProcessInfo.processInfo.environment
        do {
            return try DaemonConfiguration.load(files: DaemonConfiguration.files(scope: .user, environment: environment),
                                                environment: environment, scope: .user)
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
        let backends = try await openRigBackends(names, daemon: daemon)
        let members = zip(names, backends).map { RigCamera(name: $0, camera: $1.camera) }
        guard let rig = Rig(members) else { throw usage("a rig needs at least one camera, each named once") }
        let failure = await Interrupt.running(onInterrupt: onInterrupt) { () async throws(ExitCode) in try await body(rig) }
        for backend in backends { try? await backend.finish(self) }
        if let failure { throw failure }
    }

    /// One backend per name, opened at once: the daemon's cameras when it answers, simulated
    /// ones in demo mode, else modules over BlueZ. All or none: what was opened is closed again
    /// when one fails.
    private func openRigBackends(_ names: [String], daemon: DaemonClient?) async throws(ExitCode) -> [CameraBackend] {
        let configured = demoMode || daemon != nil ? [] : (try RigOptions.configuration(self)).modules
        let demo = demoMode ? try demoOptions() : nil
        let opened = await withTaskGroup(of: (Int, Result<CameraBackend, ExitCode>).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask {
                    do throws(ExitCode) {
                        return (index, .success(try await openRigBackend(name, index: index, daemon: daemon, demo: demo, configured: configured)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<CameraBackend, ExitCode>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var backends: [CameraBackend] = []
        var failure: ExitCode?
        for result in opened {
            switch result {
            case .success(let backend): backends.append(backend)
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure {
            for backend in backends { try? await backend.finish(self) }
            throw failure
        }
        return backends
    }

    private func openRigBackend(_ name: String, index: Int, daemon: DaemonClient?, demo: DemoOptions?,
                                configured: [DaemonConfiguration.Module]) async throws(ExitCode) -> CameraBackend {
        if let daemon {
            do {
                return .remote(try await RemoteCamera.open(client: daemon, camera: name))
            } catch {
                throw fail(error)
            }
        }
        if var demo {
            demo.seed = demo.seed &+ UInt64(index)
            do {
                return .demo(try await Demo.start(stateFile: Self.demoStateFile(for: name), options: demo))
            } catch {
                throw fail(error)
            }
        }
        let module = configured.first { $0.name == name }
        return .bluetooth(try await openModuleCamera(module?.address ?? name, named: name))
    }

    /// Each simulated camera of a rig keeps its settings in a file of its own.
    static func demoStateFile(for name: String) -> URL {
        let single = Demo.defaultStateFile()
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return single.deletingPathExtension().appendingPathExtension("\(safe).json")
    }
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
