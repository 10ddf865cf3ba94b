import Foundation
import Logging
import Testing
import UnleashedTestSupport
@testable import Daemon

#if canImport(Glibc)
import Glibc
#endif

@Suite("systemd notifications and journald logging")
struct NotifyTests {
    @Test("each notification reaches a path socket and an abstract one as one datagram", arguments: [false, true])
    func notifications(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.isActive)
        try notifier.ready(status: "listening on /run/unleashed/control.sock")
        #expect(socket.receive() == "READY=1\nSTATUS=listening on /run/unleashed/control.sock")
        try notifier.status("2 cameras")
        #expect(socket.receive() == "STATUS=2 cameras")
        try notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
        try notifier.stopping()
        #expect(socket.receive() == "STOPPING=1")
        try notifier.reloading()
        let reload = try #require(socket.receive())
        let lines = reload.split(separator: "\n")
        #expect(lines.first == "RELOADING=1")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("MONOTONIC_USEC=") == true)
        #expect((lines.last?.split(separator: "=").last).flatMap { UInt64($0) }.map { $0 > 0 } == true)
    }

    @Test("without NOTIFY_SOCKET nothing is sent and nothing fails")
    func inactive() throws {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isActive)
        try notifier.ready()
        try notifier.watchdog()
        #expect(notifier.watchdogInterval == nil)
    }

    @Test("a socket nobody bound is an error that names it")
    func unreachable() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/tmp/unleashed-no-such-notify-socket"])
        #expect(throws: SystemdNotifierError.self) { try notifier.ready() }
    }

    @Test("the watchdog beats at half WATCHDOG_USEC, only for the process it names")
    func watchdogInterval() {
        let environment = ["NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "30000000"]
        #expect(SystemdNotifier(environment: environment).watchdogInterval == .seconds(15))
        #expect(SystemdNotifier(environment: environment.merging(["WATCHDOG_PID": "\(getpid())"]) { $1 }).watchdogInterval == .seconds(15))
        #expect(SystemdNotifier(environment: environment.merging(["WATCHDOG_PID": "1"]) { $1 }, pid: 2).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
    }

    @Test("the watchdog service sends WATCHDOG=1 repeatedly until cancelled")
    func watchdogService() async throws {
        let socket = try NotifySocket(abstract: true)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "40000"])
        #expect(notifier.watchdogInterval == .milliseconds(20))
        let task = Task { try await SystemdWatchdog(notifier: notifier).run() }
        let beats = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: (0..<3).map { _ in socket.receive() }) }
        }
        task.cancel()
        _ = await task.result
        #expect(beats == ["WATCHDOG=1", "WATCHDOG=1", "WATCHDOG=1"])
    }

    @Test("journal lines carry the syslog priority; terminal lines the level")
    func logFormat() {
        #expect(JournaldLogHandler.format(level: .error, label: "unleashed.control", message: "cannot listen",
                                          metadata: [:], journal: true) == "<3>unleashed.control: cannot listen")
        #expect(JournaldLogHandler.format(level: .info, label: "unleashed", message: "ready",
                                          metadata: ["camera": "left", "attempt": "2"], journal: true)
            == "<6>unleashed: ready attempt=2 camera=left")
        #expect(JournaldLogHandler.format(level: .warning, label: "unleashed", message: "two\nlines",
                                          metadata: [:], journal: false) == "WARNING unleashed: two\\nlines")
        // What came from outside (an MQTT topic, a camera's name) cannot drive the terminal
        // that reads the log: escape sequences and other control characters are written out.
        let hostile = "mqtt: cameras/\u{1B}]0;owned\u{07}\u{1B}[2J/shoot\r\u{9B}31m \u{7F}ö"
        let line = JournaldLogHandler.format(level: .warning, label: "unleashed", message: hostile,
                                             metadata: ["topic": "\u{1B}[31m"], journal: true)
        #expect(line == "<4>unleashed: mqtt: cameras/\\u{1B}]0;owned\\u{7}\\u{1B}[2J/shoot\\r\\u{9B}31m \\u{7F}ö topic=\\u{1B}[31m")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        let priorities = Logger.Level.allCases.map(JournaldLogHandler.priority)
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test("stderr is the journal only when JOURNAL_STREAM names its device and inode")
    func journalDetection() {
        var info = stat()
        fstat(STDERR_FILENO, &info)
        #expect(JournaldLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]))
        #expect(!JournaldLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]))
        #expect(!JournaldLogHandler.stderrIsJournal(environment: [:]))
        #expect(!JournaldLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "nonsense"]))
    }
}

/// The units in dist/ as systemd reads them.
@Suite("systemd units")
struct SystemdUnitTests {
    static let analyzer = "/usr/bin/systemd-analyze"
    static let dist = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dist")

    // scripts/setup installs systemd for its systemd-analyze; a machine without it fails here.
    @Test("systemd-analyze verify finds nothing to say about the units",
          arguments: ["unleashed.service", "unleashed-user.service"])
    func verify(unit: String) async throws {
        let text = try String(contentsOf: Self.dist.appendingPathComponent(unit), encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/local/bin/unleashed daemon"))
        // verify checks that ExecStart's binary exists; the daemon is not installed here.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-units-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(unit)
        try text.replacingOccurrences(of: "/usr/local/bin/unleashed", with: "/bin/true").write(to: copy, atomically: true, encoding: .utf8)
        // A user unit is checked as a system one: --user needs a running user manager.
        let output = try await AccessTests.run(["/bin/sh", "-c", "\(Self.analyzer) verify --man=no '\(copy.path)' 2>&1; echo \"exit $?\""])
        #expect(output == "exit 0\n")
    }
}
