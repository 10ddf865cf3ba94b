public import CameraKit
import Foundation
import Synchronization
import UnleashedKit

/// Calls a user's program at the moments of a run, gphoto2 style: `ACTION` is `init`, `start`,
/// `frame`, `download` or `stop`, `ARGUMENT` says more (the run id at start, the frame number,
/// the saved file, the reason at stop), and `UNLEASHED_*` variables describe the frame. A
/// non-zero exit at `init` aborts the run; frame and download calls run alongside the schedule
/// and never delay it.
///
/// A hook's standard output goes to standard error, so that it never mixes into a command's
/// results (`--json` lines). Every call has a time limit (``timeout``): a hook still running
/// then is killed (SIGTERM, then SIGKILL) and the run goes on. ``interrupt()`` kills the hooks
/// running now at once: a run stopped by Ctrl-C does not wait for them.
public struct HookRunner: Sendable {
    public enum Action: String, Sendable {
        case initialize = "init", start, frame, download, stop
    }

    /// How long a hook may run unless told otherwise.
    public static let defaultTimeout = Duration.seconds(30)

    /// The program, as given on the command line.
    public let program: String
    /// How long one call may run before it is killed.
    public let timeout: Duration
    private let running = RunningHooks()

    public init(program: String, timeout: Duration = HookRunner.defaultTimeout) {
        self.program = program
        self.timeout = timeout
    }

    /// Checks that `program` can be a hook: an absolute path (a resumed run, or the daemon,
    /// finds it from anywhere) to an executable file. Returns why not, or nil.
    public static func problem(with program: String) -> String? {
        guard program.hasPrefix("/") else { return "\(program) is not an absolute path; give the hook's full path" }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: program, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return "\(program) is not a file"
        }
        guard FileManager.default.isExecutableFile(atPath: program) else { return "\(program) is not an executable file" }
        return nil
    }

    /// Runs the hook for `action` and waits for it; returns its exit status, or nil when it
    /// could not be started, was killed at its time limit, or was interrupted (each reported
    /// on standard error).
    @discardableResult
    public func run(_ action: Action, frame: FrameRecord?, environment: [String: String]) async -> Int32? {
        await withCheckedContinuation { continuation in
            start(action, environment) { continuation.resume(returning: $0) }
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
        start(.frame, environment) { _ in }
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

    /// Kills every hook of this runner that is running now (a run stopped by Ctrl-C or
    /// SIGTERM): the run's end does not wait for them.
    public func interrupt() {
        for pid in running.interruptAll() { Self.kill(pid) }
    }

    /// Starts the hook and calls `done` once with its exit status (nil: not started, killed).
    private func start(_ action: Action, _ extra: [String: String], done: @escaping @Sendable (Int32?) -> Void) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        var environment = ProcessInfo.processInfo.environment
        environment["ACTION"] = action.rawValue
        environment.merge(extra) { _, new in new }
        process.environment = environment
        // A hook's output is a message to the person, never part of the command's results.
        process.standardOutput = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        let program = program
        let running = running
        let call = running.add()
        process.terminationHandler = { process in
            let ending = running.remove(call)
            switch ending {
            case .timedOut:
                Self.report("hook \(program) (\(action.rawValue)) ran longer than its time limit and was killed")
                done(nil)
            case .interrupted:
                done(nil)
            case .finished:
                done(process.terminationStatus)
            }
        }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            _ = running.remove(call)
            Self.report("could not run hook \(program): \(error.localizedDescription)")
            done(nil)
            return
        }
        let pid = process.processIdentifier
        guard running.started(call, pid: pid) else {
            // Interrupted while it was being started.
            Self.kill(pid)
            return
        }
        let timeout = timeout
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds) {
            if running.timeOut(call) { Self.kill(pid) }
        }
    }

    /// SIGTERM now, SIGKILL two seconds later for a hook that ignores it. Foundation starts each
    /// hook in a process group of its own, so the whole group is signalled: a shell script's own
    /// children (a `sleep`, a copy) end with it instead of running on as orphans.
    private static func kill(_ pid: Int32) {
        _ = Foundation.kill(-pid, SIGTERM)
        _ = Foundation.kill(pid, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
            if Foundation.kill(-pid, 0) == 0 { _ = Foundation.kill(-pid, SIGKILL) }
        }
    }

    static func isoTime(_ unixMilliseconds: Int64) -> String {
        LocalTime.timestamp(UInt64(max(unixMilliseconds, 0)))
    }

    private static func report(_ message: String) {
        try? FileHandle.standardError.write(contentsOf: Data("warning: \(message)\n".utf8))
    }
}

/// The hook calls under way, and how each is to end: what lets a time limit or an interrupt
/// kill exactly the calls still running.
private final class RunningHooks: Sendable {
    enum Ending { case finished, timedOut, interrupted }

    private struct Call {
        var pid: Int32?
        var ending = Ending.finished
    }

    private struct State {
        var calls: [Int: Call] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    func add() -> Int {
        state.withLock { state in
            state.next += 1
            state.calls[state.next] = Call()
            return state.next
        }
    }

    /// Records the call's pid; false when it was interrupted meanwhile (the caller kills it).
    func started(_ call: Int, pid: Int32) -> Bool {
        state.withLock { state in
            guard state.calls[call] != nil else { return true }
            state.calls[call]?.pid = pid
            return state.calls[call]?.ending != .interrupted
        }
    }

    /// Marks a call still running as timed out; true when it is to be killed.
    func timeOut(_ call: Int) -> Bool {
        state.withLock { state in
            guard let current = state.calls[call], current.ending == .finished, current.pid != nil else { return false }
            state.calls[call]?.ending = .timedOut
            return true
        }
    }

    /// Marks every call interrupted; returns the pids to kill.
    func interruptAll() -> [Int32] {
        state.withLock { state in
            var pids: [Int32] = []
            for key in state.calls.keys where state.calls[key]?.ending == .finished {
                state.calls[key]?.ending = .interrupted
                if let pid = state.calls[key]?.pid { pids.append(pid) }
            }
            return pids
        }
    }

    /// Forgets a call that ended; returns how it ended.
    func remove(_ call: Int) -> Ending {
        state.withLock { $0.calls.removeValue(forKey: call)?.ending ?? .finished }
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
