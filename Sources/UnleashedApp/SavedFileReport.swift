public import CameraKit
public import CommandCore
public import DaemonClient
import Foundation
import UnleashedAPI

/// Prints the pictures a camera copies to this computer as they arrive, until its event stream
/// ends (the camera closed, every download done).
public struct SavedFileReport: Sendable {
    /// Whether each file gets a line of text; JSON always gets one line per file.
    public enum TextLines: Sendable {
        case eachFile
        /// One line at the end with the count (a time-lapse's live display owns the terminal).
        case summary
    }

    private let listening: Task<Void, Never>

    /// - Parameter json: a JSON line a file, for scripts, instead of text.
    public init(_ events: AsyncStream<CameraEvent>, json: Bool, text: TextLines) {
        listening = Task {
            var saved = 0
            var folder: String?
            for await event in events {
                switch event {
                case .fileSaved(let file):
                    saved += 1
                    folder = folder ?? URL(fileURLWithPath: file.path).deletingLastPathComponent().path
                    if json {
                        Output.line(Output.json(["saved": .object(file.json)]))
                    } else if text == .eachFile {
                        Output.line("Saved \(file.path) (\(file.bytes) bytes)")
                    }
                case .fileNotSaved(let cameraPath, let reason):
                    if json {
                        Output.line(Output.json(["notSaved": ["cameraPath": .string(cameraPath), "reason": .string(reason)]]))
                    } else {
                        Output.note("warning: could not save \(cameraPath) (\(reason)); it is still on the camera")
                    }
                default:
                    continue
                }
            }
            if !json, text == .summary, saved > 0, let folder {
                Output.line("\(saved) picture\(saved == 1 ? "" : "s") saved in \(folder)")
            }
        }
    }

    /// Returns once every file has been reported.
    public func done() async { await listening.value }
}

extension CameraRequest {
    /// Opens the camera, runs `body` with it, and closes it; the first failure is the one
    /// reported. Ctrl-C cancels `body` (which then ends what it started, e.g. closes a bulb
    /// exposure), or calls `onInterrupt` instead when given (a time-lapse stops on its own
    /// terms); a second Ctrl-C exits at once.
    ///
    /// - Parameters:
    ///   - events: `body` follows the camera's events from its start: a daemon's camera then
    ///     subscribes before `body` runs (a command that only makes requests saves that request).
    ///   - savedFiles: how pictures the camera copies to this computer are listed as they
    ///     arrive; nil when none are copied.
    ///   - json: list them as JSON lines.
    public func withCamera(daemon: DaemonClient?, events: Bool, onInterrupt: (@Sendable () -> Void)?,
                           savedFiles: SavedFileReport.TextLines?, json: Bool,
                           _ body: @escaping @Sendable (any Camera) async throws(CameraError) -> Void) async throws(CameraFailure) {
        let opened = try await open(daemon: daemon, events: events)
        let camera = opened.camera
        var report: SavedFileReport?
        if let savedFiles { report = SavedFileReport(await camera.events(), json: json, text: savedFiles) }
        let failure = await Interrupt.running(onInterrupt: onInterrupt) { () async throws(CameraError) in try await body(camera) }
        do throws(CameraOpenError) {
            try await opened.close()
        } catch {
            if failure == nil { throw CameraFailure(error) }
        }
        await report?.done()
        if let failure { throw CameraFailure(failure) }
    }
}
