import ArgumentParser
import Foundation
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(help: "Use the built-in simulated module and camera (also UNLEASHED_DEMO=1).")
    var demo = false

    @Flag(help: "Print one JSON object for scripts, errors included, instead of text.")
    var json = false

    var demoMode: Bool {
        demo || ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["UNLEASHED_DEMO"]?.lowercased() ?? "")
    }

    /// Connects to the camera, runs `body`, and turns any failure into a message and exit status.
    func withCamera(_ body: (ModuleCamera) async throws(CameraError) -> Void) async throws {
        guard demoMode else {
            throw fail(code: "noModule", "connecting to a real module over Bluetooth is not available in this version yet; "
                + "run with --demo (or UNLEASHED_DEMO=1) to use the built-in simulator", status: .unavailable)
        }
        let demo: Demo
        do {
            demo = try await Demo.start(stateFile: Demo.defaultStateFile())
        } catch {
            throw fail(error)
        }
        var failure: CameraError?
        do {
            try await body(demo.camera)
        } catch {
            failure = error
        }
        do {
            try await demo.finish()
        } catch {
            if failure == nil { throw fail(error) }
        }
        if let failure { throw fail(failure) }
    }

    /// Prints `value` as JSON or the text `human()` gives.
    func emit(_ value: JSONValue, human: () -> String) {
        print(json ? Output.json(value) : human())
    }

    private func fail(_ error: DemoError) -> ExitCode {
        if case .camera(let cameraError) = error { return fail(cameraError) }
        return fail(code: "demoState", error.description, status: .unavailable)
    }

    private func fail(_ error: CameraError) -> ExitCode {
        let (code, status) = Output.classify(error)
        var extra: [String: JSONValue] = [:]
        if case .valueNotOffered(_, let nearest, let offered) = error {
            extra["nearest"] = .array(nearest.map { .string($0.text) })
            extra["offered"] = .array(offered.map { .string($0.text) })
        }
        return fail(code: code, error.description, status: status, extra: extra)
    }

    private func fail(code: String, _ message: String, status: ExitStatus, extra: [String: JSONValue] = [:]) -> ExitCode {
        if json {
            var body = extra
            body["code"] = .string(code)
            body["message"] = .string(message)
            print(Output.json(["error": .object(body)]))
        } else {
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        }
        return ExitCode(status.rawValue)
    }
}

/// Exit statuses, from sysexits(3) so that scripts can tell failures apart.
enum ExitStatus: Int32 {
    case usage = 64
    case refused = 65
    case unavailable = 69
    case software = 70
    case temporary = 75
    /// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
    case interrupted = 130
}
