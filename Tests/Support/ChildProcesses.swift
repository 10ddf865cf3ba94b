public import Foundation
import Synchronization

/// Every process a test or benchmark starts (a bus, the fake bluetoothd, a simulator, the daemon,
/// a command) starts here, so that it dies with the process that started it however that one
/// ends: a crash or a SIGKILL runs no deinit, and a bus left behind lives until the machine stops.
///
/// The child runs as `setpriv --pdeathsig KILL -- sh -c CHECK OUR-PID program arguments...`:
/// - the kernel kills a process whose parent dies once it has asked for it, with no cleanup code
///   of ours having to run; setpriv (util-linux) asks, since Swift cannot call the variadic
///   `prctl` and dbus-daemon or python cannot be made to;
/// - each step execs the next, so the pid is the program's own: signals and `waitpid` reach the
///   program, and no wrapper process sits between that could die alone and orphan it;
/// - `sh` checks, once the signal is armed, that its parent is still us: a parent that died
///   before that point would leave the child running;
/// - the kernel takes the *thread* that spawned as the parent, so every spawn happens on one
///   thread that lives as long as the process: a child spawned from a pool thread would be
///   killed when the pool retires that thread.
///
/// Children carry `UNLEASHED_TEST_RUN` from this process's environment (`make test` sets it), by
/// which scripts/check-leftovers finds any that outlived the run.
public enum ChildProcesses {
    /// The environment variable that marks the processes of one test run.
    static let runMarker = "UNLEASHED_TEST_RUN"

    static let setpriv = "/usr/bin/setpriv"

    /// Starts `process`, whose executable and arguments are the program's, tied to this process.
    public static func run(_ process: Process) throws {
        let path = process.executableURL?.path ?? ""
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        let command = try command(path, process.arguments ?? [])
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if var environment = process.environment, environment[runMarker] == nil,
           let run = ProcessInfo.processInfo.environment[runMarker] {
            environment[runMarker] = run
            process.environment = environment
        }
        try SpawningThread.shared.perform { try process.run() }
        noteLaunch(of: path)
    }

    /// With `UNLEASHED_TEST_LAUNCH_LOG` set to a file, each launch appends the program's name
    /// there: how many processes a test run starts, by program (`sort | uniq -c` on the file).
    private static func noteLaunch(of path: String) {
        guard let log = ProcessInfo.processInfo.environment["UNLEASHED_TEST_LAUNCH_LOG"] else { return }
        let descriptor = open(log, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let line = Array((URL(fileURLWithPath: path).lastPathComponent + "\n").utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// For a spawn of one's own (posix_spawn where Foundation's Process cannot run, as under
    /// valgrind): `start` gets the argument vector to exec, and runs on the spawning thread.
    public static func spawn<T: Sendable>(_ path: String, _ arguments: [String],
                                          _ start: @escaping @Sendable ([String]) throws -> T) throws -> T {
        let command = try command(path, arguments)
        defer { noteLaunch(of: path) }
        return try SpawningThread.shared.perform { try start(command) }
    }

    /// Runs `path` to its end without the wrapper, its output to /dev/null and its errors to the
    /// file `errors`, and returns its exit status and the monotonic time (``monotonicNanoseconds()``)
    /// taken just before it was spawned.
    ///
    /// Why: the wrapper (setpriv, then sh) takes 2 to 3 ms to reach the program, and Foundation's
    /// `Process` more before it; a benchmark timing a command's own start would count both as the
    /// command's. Only for a short command that talks to processes started here, through
    /// ``run(_:)``: those die with this process, and then the command fails and ends by itself.
    public static func runUntied(_ path: String, _ arguments: [String], environment: [String: String],
                                 errors: String) throws -> (status: Int32, spawned: UInt64) {
        var environment = environment
        if environment[runMarker] == nil, let run = ProcessInfo.processInfo.environment[runMarker] { environment[runMarker] = run }
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var pid: pid_t = 0
        let spawned = monotonicNanoseconds()
        let failed = posix_spawn(&pid, path, &actions, nil, &argv, &envp)
        guard failed == 0 else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(failed))])
        }
        noteLaunch(of: path)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // Exited: its status; killed by a signal: 128 plus the signal, as a shell reports it.
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, spawned)
    }

    private static func command(_ path: String, _ arguments: [String]) throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: setpriv) else {
            throw FixtureError("\(setpriv) is missing: scripts/setup installs util-linux")
        }
        let check = #"[ "$PPID" = "$0" ] || exit 125; exec "$@""#
        return [setpriv, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", check, String(getpid()), path] + arguments
    }
}

/// The one thread that spawns, alive as long as the process.
private final class SpawningThread: Sendable {
    static let shared = SpawningThread()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "child-spawner"
        thread.start()
    }

    private func serve() -> Never {
        while true {
            pending.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job()
        }
    }

    /// Runs `body` on the thread and waits for it.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Outcome<T>()
        jobs.withLock { $0.append { outcome.finish(Result { try body() }) } }
        pending.signal()
        return try outcome.wait()
    }

    private final class Outcome<T: Sendable>: Sendable {
        private let result = Mutex<Result<T, any Error>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func finish(_ value: Result<T, any Error>) {
            result.withLock { $0 = value }
            done.signal()
        }

        func wait() throws -> T {
            done.wait()
            return try result.withLock { $0! }.get()
        }
    }
}

extension Process {
    /// Waits for the process to end, killing it after `limit`, without holding a thread of the
    /// cooperative pool: on two cores a `waitUntilExit` there, for a daemon's shutdown of a few
    /// seconds, would leave the in-process parts of other tests (a fake bluetoothd) unanswered.
    public func exited(within limit: Duration) async {
        _ = await eventually(every: .milliseconds(20), giveUpAfter: limit) { !isRunning }
        if isRunning { kill(processIdentifier, SIGKILL) }
        // Ended, or killed just now: this returns at once.
        waitUntilExit()
    }
}
