import Foundation
import Testing
import UnleashedTestSupport

@Suite("Processes a test starts die with it", .timeLimit(.minutes(2)))
struct ChildProcessesTests {
    static let probe = Built.childProbe

    @Test("a bus and a simulator die when the process that started them is killed with SIGKILL, and not before")
    func dieWithTheirParent() async throws {
        let probe = try BackgroundRun(Self.probe, [], environment: ProcessInfo.processInfo.environment)
        try await probe.waitFor("the probe's children") { !$0.objects.isEmpty }
        let pids = try #require(probe.objects.first as? [String: Int])
        try #require(pids.keys.sorted() == ["bus", "simulator"])
        let found = pids.sorted { $0.key < $1.key }.map { ($0.key, RunningProcess(pid: Int32($0.value))) }
        let children = found.compactMap(\.1)
        // Whatever happens, nothing outlives the test.
        defer { for child in children where child.isAlive { kill(child.pid, SIGKILL) } }

        // The simulator was started from a thread that has since ended: the kernel counts that
        // thread as its parent, so a child spawned there would already be gone.
        let diedEarly = found.filter { $0.1?.isAlive != true }.map(\.0)
        #expect(diedEarly.isEmpty, "\(diedEarly) died before their parent")

        probe.signal(SIGKILL)
        #expect(try await probe.exitStatus() == 128 + SIGKILL)
        _ = await eventually(every: .milliseconds(20)) { !children.contains(where: \.isAlive) }
        let outlived = children.filter(\.isAlive).map(\.name)
        #expect(outlived.isEmpty, "\(outlived) outlived their parent")
    }
}

/// One process, told apart from a later one given the same pid by its start time.
private struct RunningProcess {
    let pid: Int32
    let name: String
    private let started: String

    init?(pid: Int32) {
        guard let stat = Self.stat(pid) else { return nil }
        self.pid = pid
        name = stat.name
        started = stat.started
    }

    /// Running: not gone, not a zombie waiting to be reaped, and not another process since.
    var isAlive: Bool {
        guard let stat = Self.stat(pid) else { return false }
        return stat.started == started && !["Z", "X"].contains(stat.state)
    }

    /// The name, state and start time fields of /proc/PID/stat (the name may hold spaces).
    private static func stat(_ pid: Int32) -> (name: String, state: String, started: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return (String(text[text.index(after: open)..<close]), String(fields[0]), String(fields[19]))
    }
}
