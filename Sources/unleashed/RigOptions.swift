import ArgumentParser
import CameraKit
import CommandCore
import DaemonClient
import Intervalometer
import JSON
import UnleashedApp
import UnleashedKit

/// The cameras of a rig a command acts on together: named one by one, by a configured group,
/// or all configured modules. Without any of them a command acts on one camera as before.
struct RigOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("camera"), help: ArgumentHelp(
        "A camera of a rig: a configured module's name, or a module's address or name, or BRAND:ADDRESS for a "
            + "camera over its own Bluetooth remote protocol (sony:C0:CA:4E:00:00:02). Repeat it for each camera; "
            + "they are all fired together.", valueName: "name"))
    var cameras: [String] = []

    @Option(help: ArgumentHelp("The cameras of a group from the configuration ([[groups]]).", valueName: "name"))
    var group: String?

    @Flag(name: .customLong("all"), help: "Every module the configuration lists ([[modules]]).")
    var allCameras = false

    /// The selection as the application layer takes it.
    var selection: RigSelection { RigSelection(cameras: cameras, group: group, all: allCameras) }

    /// Whether a rig was asked for.
    var isRig: Bool { selection.isRig }

    /// The names of the rig's cameras, in order, each once (``CameraRequest/rigNames(_:daemon:)``).
    func names(_ options: GlobalOptions, daemon: DaemonClient?) async throws(ExitCode) -> [String] {
        let (request, selection) = (options.request, selection)
        return try await options.reporting { () async throws(CameraFailure) in try await request.rigNames(selection, daemon: daemon) }
    }

    /// The rig to resume `record` with: the cameras it was started with, which the journal keeps.
    func resuming(_ record: RunRecord, _ options: GlobalOptions) async throws(ExitCode) -> RigOptions? {
        let (request, selection, daemon) = (options.request, selection, options.daemonClient())
        let resumed = try await options.reporting { () async throws(CameraFailure) in
            try await request.resuming(record, selection, daemon: daemon)
        }
        guard let resumed else { return nil }
        do {
            return try RigOptions.parse(resumed.cameras.flatMap { ["--camera", $0] })
        } catch {
            throw options.usage("run \(record.id) names its cameras '\(record.camera)', which cannot be read back")
        }
    }
}

extension GlobalOptions {
    /// Opens every camera of the rig, runs `body` with them, and closes them. A camera that
    /// cannot be opened stops the command before anything is fired, naming the camera. Ctrl-C
    /// cancels `body` (or calls `onInterrupt`); a second Ctrl-C exits at once.
    func withRig(_ selection: RigOptions, onInterrupt: (@Sendable () -> Void)? = nil,
                 _ body: @escaping @Sendable (Rig) async throws(ExitCode) -> Void) async throws {
        let (request, daemon) = (request, daemonClient())
        let names = try await selection.names(self, daemon: daemon)
        let backends = try await reporting { () async throws(CameraFailure) in try await request.openRig(names, daemon: daemon) }
        let members = zip(names, backends).map { RigCamera(name: $0, camera: $1.camera) }
        guard let rig = Rig(members) else { throw usage("a rig needs at least one camera, each named once") }
        let failure = await Interrupt.running(onInterrupt: onInterrupt) { () async throws(ExitCode) in try await body(rig) }
        for backend in backends { try? await backend.close() }
        if let failure { throw failure }
    }

    /// Fires `command` on every camera of `rig` together and prints what each did, then the
    /// spreads (``report(_:_:json:human:)``).
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
        let report = CameraRigReport(outcomes, spread, json: json, human: human)
        emit(report.json) { report.lines.joined(separator: "\n") }
        if let failure = report.failure { throw ExitCode(CameraFailure(failure).status.rawValue) }
    }
}
