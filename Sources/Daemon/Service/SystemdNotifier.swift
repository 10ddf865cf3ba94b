public import Foundation
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the daemon is doing (sd_notify(3)): that it is ready, reloading or
/// stopping, what it does now, and that it is still alive for the watchdog.
///
/// Under `Type=notify` systemd starts the units that need the daemon only once it says
/// `READY=1`, so clients never find a missing socket; with `WatchdogSec=` it restarts a daemon
/// that stops saying `WATCHDOG=1`, a hung one included. Without `NOTIFY_SOCKET` (not started by
/// systemd) every call does nothing, so the daemon calls it unconditionally.
public struct SystemdNotifier: Sendable {
    /// Where the datagrams go: a path, or an abstract socket name (`@name`).
    public let socketPath: String?
    /// How often to send `WATCHDOG=1`: half the `WATCHDOG_USEC` systemd asked for, so that one
    /// late beat does not get the daemon killed. Nil when no watchdog is set, or it is meant
    /// for another process (`WATCHDOG_PID`).
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, pid: pid_t = getpid()) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == pid } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let micros = Int64(text), micros > 0 {
            watchdogInterval = .microseconds(micros / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether systemd listens; without it the calls do nothing.
    public var isActive: Bool { socketPath != nil }

    /// The daemon has started: its socket is in place and it answers.
    public func ready(status: String? = nil) throws(SystemdNotifierError) {
        try send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// A line for `systemctl status`.
    public func status(_ text: String) throws(SystemdNotifierError) {
        try send(["STATUS=\(text)"])
    }

    /// Still alive, for `WatchdogSec=`.
    public func watchdog() throws(SystemdNotifierError) {
        try send(["WATCHDOG=1"])
    }

    /// The daemon is shutting down; systemd will not count the time as a hang.
    public func stopping() throws(SystemdNotifierError) {
        try send(["STOPPING=1"])
    }

    /// The daemon rereads its configuration; `READY=1` follows when it is done. The
    /// monotonic time lets systemd tell this reload from an earlier one (`Type=notify-reload`).
    public func reloading() throws(SystemdNotifierError) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let micros = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        try send(["RELOADING=1", "MONOTONIC_USEC=\(micros)"])
    }

    /// Sends `fields` (`KEY=value`) as one datagram; does nothing without `NOTIFY_SOCKET`.
    public func send(_ fields: [String]) throws(SystemdNotifierError) {
        guard let socketPath else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        // An abstract socket's name starts with a NUL where systemd writes '@'.
        let abstract = pathBytes.first == UInt8(ascii: "@")
        if abstract { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { throw .badAddress(socketPath) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        // An abstract name is exactly its bytes; a path is NUL-terminated.
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count + (abstract ? 0 : 1)

        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .couldNotSend(socketPath, String(cString: strerror(errno))) }
        defer { close(descriptor) }
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, socklen_t(length)) }
            }
        }
        guard sent == message.count else { throw .couldNotSend(socketPath, String(cString: strerror(errno))) }
    }
}

/// Why a notification did not reach systemd.
public enum SystemdNotifierError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `NOTIFY_SOCKET` is too long for a socket address.
    case badAddress(String)
    /// The datagram could not be sent.
    case couldNotSend(String, String)

    public var description: String {
        switch self {
        case .badAddress(let path): "NOTIFY_SOCKET '\(path)' is too long for a socket address"
        case .couldNotSend(let path, let why): "cannot notify systemd at \(path): \(why)"
        }
    }
}

/// Sends `WATCHDOG=1` every ``SystemdNotifier/watchdogInterval`` until the service group shuts
/// down; returns at once when systemd set no watchdog. It runs on Swift's shared executor, so
/// it stops beating when the process is wedged (a blocked pool, a deadlock), not when a camera
/// stops answering: the cameras' own time limits handle that.
public struct SystemdWatchdog<C: Clock>: Service where C.Duration == Duration {
    let notifier: SystemdNotifier
    let clock: C

    public init(notifier: SystemdNotifier, clock: C) {
        self.notifier = notifier
        self.clock = clock
    }

    public func run() async throws {
        guard notifier.isActive, let interval = notifier.watchdogInterval else { return }
        // Shutting down is the normal end: the sleep's cancellation is not an error.
        try? await cancelWhenGracefulShutdown { [notifier, clock] in
            var deadline = clock.now
            while !Task.isCancelled {
                try? notifier.watchdog()
                // Absolute deadlines: a slow send does not stretch the interval.
                deadline = deadline.advanced(by: interval)
                try await clock.sleep(until: deadline, tolerance: nil)
            }
        }
    }
}

extension SystemdWatchdog where C == ContinuousClock {
    public init(notifier: SystemdNotifier) {
        self.init(notifier: notifier, clock: ContinuousClock())
    }
}
