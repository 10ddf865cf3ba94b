import Foundation
import Synchronization
public import UnleashedKit

/// Calls a user's program at the moments of a run, gphoto2 style: `ACTION` is `init`, `start`,
/// `frame`, `download` or `stop`, `ARGUMENT` says more (the run id at start, the frame number,
/// the saved file, the reason at stop), and `UNLEASHED_*` variables describe the frame. A
/// non-zero exit at `init` aborts the run; frame and download calls run alongside the schedule
/// and never delay it.
public struct HookRunner: Sendable {
    public enum Action: String, Sendable {
        case initialize = "init", start, frame, download, stop
    }

    /// The program, as given on the command line.
    public let program: String

    public init(program: String) {
        self.program = program
    }

    /// Runs the hook for `action` and waits for it; returns its exit status, or nil when it
    /// could not be started (which is reported on standard error).
    @discardableResult
    public func run(_ action: Action, frame: FrameRecord?, environment: [String: String]) async -> Int32? {
        let process = makeProcess(action, environment)
        return await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                Self.report("could not run hook \(program): \(error.localizedDescription)")
                continuation.resume(returning: nil)
            }
        }
    }

    /// Starts the `frame` hook for `entry` without waiting for it.
    public func frame(_ entry: FrameRecord, t0UnixMs: Int64) {
        var environment = [
            "ARGUMENT": "\(entry.frame)",
            "UNLEASHED_FRAME": "\(entry.frame)",
            "UNLEASHED_PART": "\(entry.part)",
            "UNLEASHED_OUTCOME": entry.outcome.rawValue,
            "UNLEASHED_SCHEDULED": Self.isoTime(t0UnixMs + entry.scheduledMs),
            "UNLEASHED_SCHEDULED_MS": "\(entry.scheduledMs)",
        ]
        environment["UNLEASHED_LATENESS_MS"] = entry.latenessMicros.map { String(format: "%.3f", Double($0) / 1000) }
        environment["UNLEASHED_EXPOSURE"] = entry.exposure
        environment["UNLEASHED_EV"] = entry.meteredEV
        environment["UNLEASHED_SHOT_COUNTER"] = entry.shotCounter.map(String.init)
        environment["UNLEASHED_ERROR"] = entry.error
        let process = makeProcess(.frame, environment)
        do {
            try process.run()
        } catch {
            Self.report("could not run hook \(program): \(error.localizedDescription)")
        }
    }

    /// Runs the `download` hook for a picture copied to this computer and waits for it.
    public func download(_ file: SavedFile) async {
        var environment = [
            "ARGUMENT": file.path,
            "UNLEASHED_FILE": file.path,
            "UNLEASHED_BYTES": "\(file.bytes)",
            "UNLEASHED_CAMERA_PATH": file.cameraPath,
            "UNLEASHED_SHOT_COUNTER": "\(file.shotCounter)",
        ]
        environment["UNLEASHED_FRAME"] = file.frame.map(String.init)
        await run(.download, frame: nil, environment: environment)
    }

    private func makeProcess(_ action: Action, _ extra: [String: String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        var environment = ProcessInfo.processInfo.environment
        environment["ACTION"] = action.rawValue
        environment.merge(extra) { _, new in new }
        process.environment = environment
        return process
    }

    static func isoTime(_ unixMilliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(unixMilliseconds) / 1000))
    }

    private static func report(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }
}

/// Runs the `download` hook for each picture a camera saves, one after another in the order they
/// were saved, and tells when it has seen a given number of them, so that a run's `stop` hook
/// comes after the last `download`.
final class DownloadHookRelay: Sendable {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    private let seen = Count()
    private let relay: Task<Void, Never>

    init(hooks: HookRunner, events: AsyncStream<CameraEvent>) {
        let seen = seen
        relay = Task {
            for await event in events {
                switch event {
                case .fileSaved(let file):
                    await hooks.download(file)
                case .fileNotSaved:
                    break
                default:
                    continue
                }
                seen.value.withLock { $0 += 1 }
            }
        }
    }

    /// Returns once `count` pictures have been handled, or after `limit` (a hook that hangs
    /// must not keep the run from ending), and stops relaying.
    func finish(after count: Int, limit: Duration = .seconds(60)) async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while seen.value.withLock({ $0 }) < count, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        relay.cancel()
    }
}
