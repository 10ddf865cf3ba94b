import CameraKit
public import DaemonClient
import Foundation

/// `unleashed shoot` through the daemon, answered before the command line is parsed.
///
/// Why: swift-argument-parser builds every command's options before it parses one, and the
/// runtime scans the program's 11,000 protocol conformances for each new option type. That took
/// longer than the daemon takes to fire the camera. A picture through the daemon is the command
/// that most wants to be quick, so it is recognised here, from a narrow grammar, and taken with
/// one request per picture (``DaemonClient/shoot(camera:)``; with no name, the daemon's only
/// camera, without listing the cameras first).
///
/// The grammar is a subset of what the parser accepts, with the same meaning there: `shoot` with
/// any of `--json`, `--count N` and `--module NAME` (or `--option=value`), each at most once, in
/// any order. Anything else (help, a rig, direct or demo mode, an option or value it does not
/// know, a count out of range) is left to the parser. So is a first picture the daemon refused
/// before asking any camera (no camera of that name, several and none named, a role that may not
/// shoot), and a socket nobody listens on: nothing has been fired then, and the parser's way
/// opens the camera, reports or falls back to driving the camera directly, as it always does.
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

    /// The command line recognised, or nil when it is the parser's.
    public init?(arguments: [String], environment: [String: String]) {
        // Demo mode never goes through the daemon; the parser reads the variable.
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

    /// Takes the pictures through `client`, writing each to `output`, and returns the exit
    /// status; nil when the command line is the parser's after all (see above).
    public func run(_ client: DaemonClient, output: StandardStream = .output) async -> Int32? {
        guard client.isListening() else { return nil }
        let (json, count, module) = (json, count, module)
        let failure = await Interrupt.running(onInterrupt: nil) { () async throws(Failure) in
            try await ShotReport.series(of: count, cancelled: .camera(.cancelled)) { index throws(Failure) in
                do throws(DaemonClientError) {
                    return try await client.shoot(camera: module)
                } catch {
                    if index == 0, case .http(_, _, _, nil) = error { throw .notFired }
                    throw .camera(RemoteCamera.cameraError(error, camera: module))
                }
            } report: { shot in
                output.line(json ? CommandJSON.text(ShotReport.json(shot)) : ShotReport.text(shot))
            }
        }
        switch failure {
        case nil:
            return 0
        case .notFired?:
            return nil
        case .camera(let error)?:
            let reported = CameraFailure(error)
            reported.report(json: json, output: output)
            return reported.status.rawValue
        }
    }

    private enum Failure: Error {
        /// The daemon refused the first picture before asking a camera.
        case notFired
        case camera(CameraError)
    }
}
