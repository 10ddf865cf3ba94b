import Foundation

/// The process that runs a journalled run: what keeps a second process (a CLI `--resume`
/// while the daemon runs the job, a daemon starting while a CLI resumed its job) from shooting
/// the same run and writing the same frame numbers.
///
/// A pid alone outlives its process (pids are reused, and a reboot starts them again), so the
/// owner is the pid with the boot it ran in and the moment it started: an owner that crashed
/// or was killed is recognised as gone and blocks nothing.
public struct RunOwner: Codable, Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    /// `/proc/sys/kernel/random/boot_id`: a new one every boot.
    public var bootID: String
    /// When the process started, in clock ticks after boot (`/proc/PID/stat`, field 22).
    public var startTicks: Int64
    /// What the process is, for the message that refuses a second owner.
    public var program: String

    public init(pid: Int32, bootID: String, startTicks: Int64, program: String) {
        self.pid = pid
        self.bootID = bootID
        self.startTicks = startTicks
        self.program = program
    }

    /// This process.
    public static let current = RunOwner(
        pid: getpid(), bootID: currentBootID, startTicks: startTicks(of: getpid()) ?? 0, program: currentProgram)

    /// Whether the process still runs: same boot, a live pid, and the same start time.
    public var isAlive: Bool {
        guard bootID == Self.currentBootID else { return false }
        if pid == getpid() { return startTicks == Self.current.startTicks }
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        return Self.startTicks(of: pid) == startTicks
    }

    public var description: String { "\(program) (pid \(pid))" }

    private static let currentBootID: String = {
        let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }()

    private static let currentProgram: String = {
        let arguments = CommandLine.arguments
        let name = arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "unleashed"
        return arguments.count > 1 && arguments[1] == "daemon" ? "\(name) daemon" : name
    }()

    /// Field 22 of `/proc/PID/stat`, or nil for a process that is gone or a zombie (it has
    /// ended; only its parent has not collected it yet). The command name in field 2 may hold
    /// spaces and parentheses, so fields are counted from its closing parenthesis.
    public static func startTicks(of pid: Int32) -> Int64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Field 3 (state) is the first after the parenthesis, so field 22 is at index 19.
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return nil }
        return Int64(fields[19])
    }
}
