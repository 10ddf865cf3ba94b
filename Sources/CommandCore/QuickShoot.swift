import CameraKit
public import DaemonClient
import Foundation

/// `unleashed shoot` through the daemon, as the small `unleashed` program runs it without
/// starting the full one.
///
/// Why a program of its own: the full `unleashed` takes about 13 ms to start (its argument
/// parser builds every command's options, and its runtime scans over 11,000 protocol
/// conformances), longer than the daemon takes to fire the camera. This path parses a narrow
/// grammar itself and hands every other command line, unchanged, to the full program
/// (``FullProgram``), which parses it with swift-argument-parser as always.
///
/// Its grammar is a subset of what the full program accepts, with the same meaning there:
/// `shoot` with any of `--json`, `--count N` and `--module NAME` (or `--option=value`), each
/// at most once, in any order. Anything else (help, a rig, direct mode, demo mode, an option
/// or value it does not know, a count out of range) is the full program's, and so is
/// everything before the first picture is asked for: opening the camera only reads the
/// daemon, so when that fails the full program opens it again and reports or falls back
/// exactly as it always does.
public struct QuickShoot: Sendable, Equatable {
    public var count = 1
    public var json = false
    /// The camera by its name in the daemon, or nil for its only one.
    public var module: String?

    public init(count: Int = 1, json: Bool = false, module: String? = nil) {
        self.count = count
        self.json = json
        self.module = module
    }

    /// The command line recognised, or nil when it is the full program's.
    public init?(arguments: [String], environment: [String: String]) {
        // Demo mode never goes through the daemon; let the full program read the variable.
        if let demo = environment["UNLEASHED_DEMO"], !demo.isEmpty { return nil }
        var seen: Set<String> = []
        var index = arguments.startIndex
        func value(of option: String, inline: Substring?) -> String? {
            if let inline { return String(inline) }
            index += 1
            return index < arguments.endIndex ? arguments[index] : nil
        }
        while index < arguments.endIndex {
            let argument = arguments[index]
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let inline = parts.count == 2 ? parts[1] : nil
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "shoot" where inline == nil: break
            case "--json" where inline == nil: json = true
            case "--count":
                guard let text = value(of: name, inline: inline), !text.isEmpty, text.allSatisfy(\.isASCII),
                      text.allSatisfy(\.isNumber), let count = Int(text), ShotReport.counts.contains(count) else { return nil }
                self.count = count
            case "--module":
                guard let text = value(of: name, inline: inline), !text.isEmpty, !text.hasPrefix("-") else { return nil }
                module = text
            default:
                return nil
            }
            index += 1
        }
        guard seen.contains("shoot") else { return nil }
    }

    /// Takes the pictures through `client` and returns the exit status, or nil when the camera
    /// could not be opened: nothing has been asked of the camera then, and the command line is
    /// the full program's to run (and to report).
    public func run(_ client: DaemonClient) async -> Int32? {
        let camera: RemoteCamera
        do {
            camera = try await RemoteCamera.open(client: client, camera: module, events: false)
        } catch {
            return nil
        }
        let json = json, count = count
        let failure = await Interrupt.running(onInterrupt: nil) { () async throws(CameraError) in
            try await ShotReport.series(of: count, on: camera) { shot in
                StandardStream.output.line(json ? CommandJSON.text(ShotReport.json(shot)) : ShotReport.text(shot))
            }
        }
        await camera.close()
        guard let failure else { return 0 }
        let reported = CameraFailure(failure)
        reported.report(json: json)
        return reported.status.rawValue
    }
}

/// The full `unleashed` program, installed beside the small one as `unleashed-full`.
public enum FullProgram {
    public static let name = "unleashed-full"

    /// Where the full program is: beside `executable`, the small program's own file.
    public static func path(beside executable: String) -> String {
        URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Replaces this process with the full program, run with `arguments` (the whole command
    /// line, the program's name first, as it was given). Returns only to report that it could
    /// not be started, and exits.
    public static func exec(_ arguments: [String]) -> Never {
        // The file this process runs, symbolic links resolved: the full program is beside it
        // wherever the command was found.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? arguments.first ?? "unleashed"
        let path = path(beside: executable)
        var pointers = arguments.map { strdup($0) } + [nil]
        execv(path, &pointers)
        let reason = String(cString: strerror(errno))
        for pointer in pointers { free(pointer) }
        let failure = CameraFailure(
            code: "fullProgramMissing",
            "cannot start \(path) (\(reason)): `unleashed` hands every command but a quick shoot to \(name), "
                + "which must be installed beside it (docs/install.md)",
            status: .software)
        failure.report(json: arguments.dropFirst().prefix { $0 != "--" }.contains("--json"))
        exit(failure.status.rawValue)
    }
}
