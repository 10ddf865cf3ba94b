/// Who the checks are for: the daemon's user (the system service's `unleashed`) or the person
/// running the command.
public struct Identity: Sendable, Equatable {
    public var name: String
    public var uid: UInt32
    /// Every group the user is in, the primary one too.
    public var groups: Set<UInt32>

    public init(name: String, uid: UInt32, groups: Set<UInt32>) {
        self.name = name
        self.uid = uid
        self.groups = groups
    }

    /// Whether `mode`'s bits let this user `read` and `write` a file of `owner` and `group`,
    /// as the kernel decides for a process without capabilities, root aside.
    /// `search`: a folder's execute bit, which making a file in it needs.
    public func may(read: Bool, write: Bool, owner: UInt32, group: UInt32, mode: UInt32, search: Bool = false) -> Bool {
        guard uid != 0 else { return true }
        let bits: UInt32 = owner == uid ? (mode >> 6) & 7 : groups.contains(group) ? (mode >> 3) & 7 : mode & 7
        return (!read || bits & 4 != 0) && (!write || bits & 2 != 0) && (!search || bits & 1 != 0)
    }
}

/// A file's owner, group and mode.
public struct FileOwnership: Sendable, Equatable {
    public var owner: UInt32
    public var group: UInt32
    /// Its group's name, for the words.
    public var groupName: String
    public var mode: UInt32

    public init(owner: UInt32, group: UInt32, groupName: String, mode: UInt32) {
        self.owner = owner
        self.group = group
        self.groupName = groupName
        self.mode = mode
    }
}

/// A file and its ownership.
public struct OwnedFile: Sendable, Equatable {
    public var path: String
    public var ownership: FileOwnership

    public init(path: String, ownership: FileOwnership) {
        self.path = path
        self.ownership = ownership
    }

    /// The file's name, without its folder.
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
}

/// A camera libgphoto2 finds on USB, and its device node.
public struct USBCameraObservation: Sendable, Equatable {
    public var model: String
    /// `usb:001,004`.
    public var port: String
    /// `/dev/bus/usb/001/004`.
    public var device: String
    /// The node's ownership; nil when it could not be read.
    public var ownership: FileOwnership?
    /// The kernel's own verdict (`access(2)`, which counts ACLs such as udev's `uaccess`) when
    /// the user checked is the one running the check; nil to judge by the mode bits.
    public var openable: Bool?

    public init(model: String, port: String, device: String, ownership: FileOwnership?, openable: Bool? = nil) {
        self.model = model
        self.port = port
        self.device = device
        self.ownership = ownership
        self.openable = openable
    }
}

/// The daemon's control socket, as one status request found it.
public enum DaemonObservation: Sendable, Equatable {
    /// No socket at the path: no daemon runs (or another socket is configured).
    case noSocket(String)
    /// The socket is there, but nobody listens: a daemon that did not stop cleanly left it.
    case notListening(String)
    /// The socket's permissions keep this user out.
    case denied(String)
    /// It took the connection but did not answer the status request.
    case failed(String, String)
    /// It answered, with this version.
    case answered(String, version: String)
}

/// Where the run journal lives, and what its disk has room for.
public struct JournalObservation: Sendable, Equatable {
    /// The journal's file.
    public var file: String
    /// The folder it is in.
    public var folder: String
    public var folderExists: Bool
    /// The folder's ownership (or its nearest existing parent's, which systemd makes it under).
    public var ownership: FileOwnership?
    /// The file system is mounted read-only.
    public var readOnly: Bool
    /// Free bytes for an unprivileged user (`f_bavail`), and the disk's size.
    public var freeBytes: UInt64
    public var totalBytes: UInt64
    /// The journal's files that exist (the database, `-wal`, `-shm`), each with its ownership: one
    /// of root's, left by a daemon run with sudo, keeps the service out.
    public var files: [OwnedFile]

    public init(file: String, folder: String, folderExists: Bool, ownership: FileOwnership?, readOnly: Bool,
                freeBytes: UInt64, totalBytes: UInt64, files: [OwnedFile] = []) {
        self.files = files
        self.file = file
        self.folder = folder
        self.folderExists = folderExists
        self.ownership = ownership
        self.readOnly = readOnly
        self.freeBytes = freeBytes
        self.totalBytes = totalBytes
    }
}

/// The run the user means to make, for the disk check: its frames, and what each needs on disk.
public struct PlannedFrames: Sendable, Equatable {
    public var frames: Int
    /// Each frame's journal row and its pages' share (``journalBytesPerFrame``), plus the
    /// picture when the daemon downloads each one.
    public var bytesPerFrame: UInt64

    public init(frames: Int, bytesPerFrame: UInt64 = PlannedFrames.journalBytesPerFrame) {
        self.frames = frames
        self.bytesPerFrame = bytesPerFrame
    }

    /// What the journal grows by per frame, rounded up from the measured growth of a journal
    /// (119 bytes a frame over 1,000 demo frames; docs/user-guide.md, `doctor`).
    public static let journalBytesPerFrame: UInt64 = 512

    /// Saturates rather than overflows: a count past any disk still reads as too big.
    public var bytes: UInt64 {
        let (product, overflow) = UInt64(max(frames, 0)).multipliedReportingOverflow(by: bytesPerFrame)
        return overflow ? .max : product
    }
}

/// Host checks: the camera's USB permissions, the daemon, the journal's disk, the clock.
public enum HostRules {
    /// Whether libgphoto2's udev rules are installed, and whether `user` may open each USB camera.
    /// `service`: `user` is the system service's, whose groups take effect at its restart.
    public static func usbCameras(rules: String?, cameras: [USBCameraObservation], user: Identity, service: Bool = false,
                                  needed: Bool) -> Finding {
        guard let rules else {
            return Finding(.usbCameras, needed ? .problem : .warning,
                           "libgphoto2's udev rules are not installed: a camera plugged in stays root's",
                           remedy: "sudo apt-get install libgphoto2-6 (it brings /usr/lib/udev/rules.d/60-libgphoto2-6.rules)")
        }
        var closed: [String] = []
        var groups: [String] = []
        for camera in cameras {
            guard let node = camera.ownership else { closed.append("\(camera.model) at \(camera.device) (its node cannot be read)"); continue }
            let allowed = camera.openable ?? user.may(read: true, write: true, owner: node.owner, group: node.group, mode: node.mode)
            if !allowed {
                closed.append("\(camera.model) at \(camera.device) (group \(node.groupName), mode \(String(node.mode & 0o777, radix: 8)))")
                if !groups.contains(node.groupName) { groups.append(node.groupName) }
            }
        }
        if !closed.isEmpty {
            let join = groups.map { "sudo adduser \(user.name) \($0)" }.joined(separator: "; ")
            let after = service ? "then sudo systemctl restart unleashed" : "then log out and in again"
            return Finding(.usbCameras, needed ? .problem : .warning, "user \(user.name) may not open \(closed.joined(separator: ", "))",
                           remedy: (join.isEmpty ? "" : join + ", " + after + "; ") + "`udevadm info \(cameras[0].device)` says which rule gave the node its group")
        }
        let found = cameras.isEmpty ? "no camera on USB now" : cameras.map { "\($0.model) (\($0.port))" }.joined(separator: ", ")
        return Finding(.usbCameras, .ok, "udev rules in \(rules); \(found)")
    }

    /// Whether the daemon runs and answers this user.
    /// `system`: the daemon is the system service (else this user's own, under `systemctl --user`).
    public static func daemon(_ observation: DaemonObservation, user: String, system: Bool = true) -> Finding {
        let systemctl = system ? "sudo systemctl" : "systemctl --user"
        let journal = system ? "journalctl -u unleashed -e" : "journalctl --user -u unleashed -e"
        switch observation {
        case .noSocket(let path):
            return Finding(.daemon, .warning, "no daemon runs (no socket at \(path)); commands work without it, by themselves",
                           remedy: "for runs that outlive the shell, the web app and MQTT: \(systemctl) enable --now unleashed")
        case .notListening(let path):
            return Finding(.daemon, .problem, "a socket is at \(path), but no daemon listens on it (one stopped uncleanly)",
                           remedy: "\(systemctl) restart unleashed; `\(journal)` says why it stopped")
        case .denied(let path):
            return Finding(.daemon, .problem, "user \(user) may not use the daemon's socket \(path)",
                           remedy: "sudo adduser \(user) unleashed, then log out and in again")
        case .failed(let path, let reason):
            return Finding(.daemon, .problem, "the daemon at \(path) did not answer: \(reason)",
                           remedy: journal)
        case .answered(let path, let version):
            return Finding(.daemon, .ok, "the daemon \(version) answers at \(path)")
        }
    }

    /// Whether the daemon's user can write the journal, and whether its disk has room for
    /// `plan` (when given) and a margin of ``minimumFreeBytes`` besides.
    public static func journal(_ observation: JournalObservation, writer: Identity, plan: PlannedFrames?) -> Finding {
        let folder = observation.folder
        if observation.readOnly {
            return Finding(.journal, .problem, "the journal's folder \(folder) is on a read-only file system: no run can be recorded",
                           remedy: "remount it read-write (`mount -o remount,rw`), or set daemon.journal to a writable disk")
        }
        if let node = observation.ownership,
           !writer.may(read: true, write: true, owner: node.owner, group: node.group, mode: node.mode, search: true) {
            let which = observation.folderExists ? folder : "\(folder)'s parent"
            return Finding(.journal, .problem, "user \(writer.name) may not write in \(which) (group \(node.groupName), mode \(String(node.mode & 0o777, radix: 8)))",
                           remedy: observation.folderExists ? "sudo chown \(writer.name) \(folder)" : "sudo install -d -o \(writer.name) \(folder)")
        }
        let closed = observation.files.filter {
            !writer.may(read: true, write: true, owner: $0.ownership.owner, group: $0.ownership.group, mode: $0.ownership.mode)
        }
        if let first = closed.first {
            let names = closed.map(\.name).joined(separator: ", ")
            return Finding(.journal, .problem,
                           "user \(writer.name) may not write the journal's \(names) (group \(first.ownership.groupName), mode \(String(first.ownership.mode & 0o777, radix: 8))): a daemon run as another user left them",
                           remedy: "sudo chown \(writer.name): \(observation.file)*")
        }
        let (needed, overflow) = (plan?.bytes ?? 0).addingReportingOverflow(minimumFreeBytes)
        let free = "\(bytes(observation.freeBytes)) free of \(bytes(observation.totalBytes))"
        if overflow || observation.freeBytes < needed {
            let size = { (plan: PlannedFrames) in plan.bytes == .max ? "more than any disk holds" : "about \(bytes(plan.bytes))" }
            let why = plan.map { "a run of \($0.frames) frames needs \(size($0)), and \(bytes(minimumFreeBytes)) besides" }
                ?? "under the \(bytes(minimumFreeBytes)) kept as a margin"
            return Finding(.journal, .problem, "the journal's disk has \(free): \(why)",
                           remedy: "free space on that disk, or set daemon.journal to another one")
        }
        let room = plan.map { "; room for the \($0.frames) frames (\(bytes($0.bytes)))" } ?? ""
        return Finding(.journal, .ok, "\(folder) is writable" + (observation.folderExists ? "" : " once made (systemd makes it when the service starts)")
                       + ", \(free)\(room)")
    }

    /// What the journal check keeps free when no run is planned: SQLite needs room for its
    /// write-ahead log and a checkpoint.
    public static let minimumFreeBytes: UInt64 = 64 << 20

    /// Whether a time service keeps the clock synchronised, and whether a battery-backed clock
    /// (an RTC) keeps time while the machine is off: without one and off the network, a Pi
    /// starts at the time it was last shut down.
    public static func clock(synchronised: Bool, maximumError: Duration, realTimeClock: String?) -> Finding {
        // An RTC's presence says nothing of its battery: a Pi 5 has one, which keeps time only
        // with a battery on its connector.
        let rtc = realTimeClock.map { "a real-time clock (\($0)) keeps time while the machine is off, if it has a battery" }
            ?? "no real-time clock: while off the network, the time after a start is wrong until something sets it"
        guard synchronised else {
            return Finding(.clock, .warning, "the clock is not synchronised; \(rtc)",
                           remedy: "`timedatectl` says whether a time service runs and has reached a server (none: sudo apt-get install systemd-timesyncd); in the field, the web app's phone sets the daemon's clock (docs/web-app.md)")
        }
        if realTimeClock == nil {
            return Finding(.clock, .warning, "synchronised now (error at most \(milliseconds(maximumError))); \(rtc)",
                           remedy: "before a run away from the network, check the time; a Pi 5 keeps time with a battery on its RTC connector")
        }
        return Finding(.clock, .ok, "synchronised (error at most \(milliseconds(maximumError))); \(rtc)")
    }

    static func milliseconds(_ duration: Duration) -> String {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return ms < 10 ? "\((ms * 10).rounded() / 10) ms" : "\(Int(ms.rounded())) ms"
    }

    /// A byte count as people read it: 512 B, 12.4 MiB, 3.1 GiB.
    public static func bytes(_ count: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\((value * 10).rounded() / 10) \(units[unit])"
    }
}
