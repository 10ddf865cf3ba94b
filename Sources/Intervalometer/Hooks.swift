import Foundation

/// Calls a user's program at the moments of a run, gphoto2 style: `ACTION` is `init`, `start`,
/// `frame` or `stop`, `ARGUMENT` says more (the run id at start, the frame number, the reason at
/// stop), and `UNLEASHED_*` variables describe the frame. A non-zero exit at `init` aborts the
/// run; frame calls run alongside the schedule and never delay it.
public struct HookRunner: Sendable {
    public enum Action: String, Sendable {
        case initialize = "init", start, frame, stop
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
