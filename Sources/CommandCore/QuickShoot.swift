import CameraKit
public import DaemonClient

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
/// any of `--json` and `--module NAME` before or after it and `--count N` after it (or
/// `--option=value`), each at most once. Anything else (help, a rig, direct or demo mode, an
/// option or value it does not know, a count out of range) is left to the parser. So is a first
/// picture the daemon refused before asking any camera (its own refusal, with no camera error:
/// no camera of that name, several and none named, none at all, a role that may not shoot, a
/// daemon without `POST /v1/shoot`), and a socket nobody listens on: nothing has been fired then,
/// and the parser's way opens the camera, reports or falls back to driving the camera directly,
/// as it always does. An answer it cannot read is reported, never handed on: the camera may have
/// fired.
///
/// Where the two ways still differ, on purpose: a daemon that goes away after answering the
/// probe fails the shot (69) here, where the parser's way, had it not yet asked for anything,
/// would drive the camera directly; that message names the camera as it was typed, not by the
/// daemon's name for it. With `--module`, the parser's way reads the camera's status first and
/// stops if that fails; here the shot is asked for at once.
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
        // Demo mode never goes through the daemon.
        if DemoMode.requested(by: environment) { return nil }
        var seen: Set<String> = []
        var index = arguments.startIndex
        func value(inline: Substring?) -> String? {
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
                // The command's own option: the parser takes it only after `shoot`.
                guard seen.contains("shoot"), let text = value(inline: inline), !text.isEmpty, text.allSatisfy(\.isASCII),
                      text.allSatisfy(\.isNumber), let count = Int(text), ShotReport.counts.contains(count) else { return nil }
                self.count = count
            case "--module":
                guard let text = value(inline: inline), !text.isEmpty, !text.hasPrefix("-") else { return nil }
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
                    if index == 0, !Task.isCancelled, case .http(let status, _, _, nil) = error,
                       Self.refusalsBeforeAnyCamera.contains(status) {
                        throw .notFired
                    }
                    throw .camera(RemoteCamera.cameraError(error, camera: module))
                }
            } report: { shot in
                output.line(json ? CommandJSON.text(ShotReport.json(shot)) : ShotReport.text(shot))
            }
        }
        switch failure {
        case nil:
            return 0
        case .notFired? where Interrupt.signal == nil:
            return nil
        case .notFired?:
            // Ctrl-C came as the refusal did: stop, as the parser's way would have.
            let reported = CameraFailure(CameraError.cancelled)
            reported.report(json: json, output: output)
            return reported.status.rawValue
        case .camera(let error)?:
            let reported = CameraFailure(error)
            reported.report(json: json, output: output)
            return reported.status.rawValue
        }
    }

    /// The statuses of the daemon's own refusals that come before any camera is asked: a token
    /// or role (401, 403), no camera of that name or a daemon without the route (404, 405),
    /// several cameras and none named or a job in the way (409), no camera at all (503). With no
    /// camera error in the answer, as a camera's refusal always has one.
    private static let refusalsBeforeAnyCamera: Set<Int> = [401, 403, 404, 405, 409, 503]

    private enum Failure: Error {
        /// The daemon refused the first picture before asking a camera.
        case notFired
        case camera(CameraError)
    }
}
