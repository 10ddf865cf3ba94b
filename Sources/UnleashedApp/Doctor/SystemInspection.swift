import BlueZ
public import DBus
import Daemon
import DaemonClient
public import Doctor
public import Foundation
import Synchronization
public import GPhoto2
import MQTT
import NIOSSL
import UnleashedAPI
public import UnleashedKit

/// `unleashed doctor`'s look at this machine: each probe reads one part of the system and hands
/// what it saw to the rules in ``Doctor``, which decide and word the finding. Everything a test
/// must vary is here: the bus, the folder that stands for `/` (rfkill, the RTC, udev's rules),
/// the clock's discipline and the time.
public struct SystemInspection: Sendable {
    /// Whether the daemon whose setup is checked is the system service (`/etc/unleashed`, user
    /// `unleashed`) rather than this user's own.
    public var system: Bool
    public var environment: [String: String]
    /// The configuration files; nil for those of ``scope``.
    public var configurationFiles: [String]?
    public var bus: DBusConnection.Bus
    /// Where `sys/class/rfkill`, `sys/class/rtc` and the udev rules are looked for: `/` on a
    /// real machine.
    public var systemRoot: String
    /// The run being planned, for the journal's disk.
    public var plan: PlannedFrames?
    /// The module `unleashed connect` remembered.
    public var rememberedFile: URL
    public var hostClock: HostClockSource
    /// Seconds since 1970, for the certificate's validity.
    public var now: @Sendable () -> Int64
    /// How long the broker and the daemon have to answer.
    public var answerLimit: Duration
    /// Who the daemon runs as, for the USB and journal permissions; nil to look it up: the
    /// system service's user `unleashed` (with the unit's `SupplementaryGroups=`), or the user
    /// running the command.
    public var serviceUser: Identity?
    /// The command line's `--adapter` and `--backend`, over the configuration's.
    public var adapter: String?
    public var backend: String?
    /// The cameras libgphoto2 finds on USB.
    public var detectCameras: @Sendable () async -> [DetectedCamera]

    public init(system: Bool, environment: [String: String], configurationFiles: [String]? = nil,
                bus: DBusConnection.Bus = .system, systemRoot: String = "/", plan: PlannedFrames? = nil,
                rememberedFile: URL = RememberedModule.file, hostClock: HostClockSource = .system,
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                answerLimit: Duration = .seconds(5), serviceUser: Identity? = nil, adapter: String? = nil, backend: String? = nil,
                detectCameras: @escaping @Sendable () async -> [DetectedCamera] = SystemInspection.libgphoto2Cameras) {
        self.system = system
        self.environment = environment
        self.configurationFiles = configurationFiles
        self.bus = bus
        self.systemRoot = systemRoot
        self.plan = plan
        self.rememberedFile = rememberedFile
        self.hostClock = hostClock
        self.now = now
        self.answerLimit = answerLimit
        self.serviceUser = serviceUser
        self.adapter = adapter
        self.backend = backend
        self.detectCameras = detectCameras
    }

    /// Whether `unleashed doctor` without --system or --user checks the system service: unless
    /// this user has a configuration or a daemon's socket of their own, the daemon the other
    /// commands find (DaemonClient.defaultSocketPath) is the system service's.
    public static func systemServiceIsTheSetup(environment: [String: String]) -> Bool {
        let own = DaemonConfiguration.files(scope: .user, environment: environment).dropFirst()
        return !own.contains { FileManager.default.fileExists(atPath: $0) }
            && !FileManager.default.fileExists(atPath: unleashedUserSocketPath(environment: environment))
    }

    private var scope: DaemonConfiguration.Scope { system ? .system : .user }

    /// Every check, in ``Check``'s order. Whatever may block (a bus, a broker or a file that
    /// never answers) is given ``answerLimit``.
    public func examine() async -> DoctorReport {
        var findings: [Finding] = []
        let me = Self.currentUser()
        let files = (configurationFiles ?? DaemonConfiguration.files(scope: scope, environment: environment))
        var configuration: DaemonConfiguration?
        do throws(ConfigurationError) {
            // A file named on the command line must be there: a typo is not the defaults.
            configuration = try DaemonConfiguration.load(files: files, environment: environment, scope: scope,
                                                         requireFiles: configurationFiles != nil)
            findings.append(ServiceRules.configuration(files: files.filter { FileManager.default.fileExists(atPath: $0) }, error: nil))
        } catch {
            // A file (or a secret it names) that this user may not read, as with the package's
            // 0640 root:unleashed, is not a broken configuration: the daemon may read it. The
            // loader words a refusal as the system does (strerror).
            let closed = files.contains { FileManager.default.fileExists(atPath: $0) && access($0, R_OK) != 0 }
            let denied = me.uid != 0 && (closed || error.description.contains(String(cString: strerror(EACCES))))
            findings.append(ServiceRules.configuration(files: files, error: error.description, deniedTo: denied ? me.name : nil))
        }
        // The checks that do not read the configuration go by its defaults when it did not load.
        let settings = configuration
            ?? (try? DaemonConfiguration.load(files: [], environment: environment, scope: scope))
            ?? (try? DaemonConfiguration.load(files: [], environment: [:], scope: scope))!
        let backend = backend.flatMap(DaemonConfiguration.Backend.init(rawValue:)) ?? settings.backend
        let bluetoothNeeded = backend == .unleashed
        let daemonUser = serviceUser ?? (scope == .system ? Self.user(named: "unleashed", unit: serviceUnit()) : me)

        let bluez = await Self.within(answerLimit) { await lookAtBlueZ() }
            ?? (.noAnswer("\(answerLimit)"), [])
        let version = await Self.offThePool(answerLimit) { Self.bluezVersion() } ?? nil
        findings.append(BluetoothRules.bluez(bluez.observation, version: version, needed: bluetoothNeeded))
        findings.append(BluetoothRules.access(bluez.observation, user: me.name, needed: bluetoothNeeded))
        findings.append(BluetoothRules.adapter(bluez.observation, rfkill: rfkillSwitches(), wanted: adapter ?? settings.adapter,
                                               needed: bluetoothNeeded))
        findings.append(configuration.map {
            BluetoothRules.modules(bluez.observation, modules: modules($0, devices: bluez.devices), needed: bluetoothNeeded)
        } ?? ServiceRules.notLoaded(.modules))
        findings.append(HostRules.usbCameras(rules: udevRules(), cameras: await usbCameras(for: daemonUser ?? me, me: me),
                                             user: daemonUser ?? me, service: scope == .system && serviceUser == nil,
                                             needed: backend == .gphoto2))
        guard let configuration else {
            findings.append(ServiceRules.notLoaded(.daemon))
            findings.append(ServiceRules.notLoaded(.journal))
            findings.append(clock())
            findings.append(ServiceRules.notLoaded(.webCertificate))
            findings.append(ServiceRules.notLoaded(.mqtt))
            return DoctorReport(findings: findings)
        }
        findings.append(HostRules.daemon(await lookAtDaemon(configuration.service.socket), user: me.name, system: system))
        if let daemonUser {
            findings.append(HostRules.journal(journal(configuration.service.journal), writer: daemonUser, plan: plan))
        } else {
            findings.append(Finding(.journal, .problem, "the system service's user `unleashed` does not exist",
                                    remedy: "install the package (it makes the user), or see docs/install.md"))
        }
        findings.append(clock())
        let web = configuration.web
        let readCertificate: CertificateObservation = await Self.offThePool(answerLimit) { certificate(web, me: me) }
            ?? .unreadable(web.certificate ?? "", "reading it did not end in \(answerLimit)")
        findings.append(ServiceRules.webCertificate(readCertificate, now: now()))
        findings.append(ServiceRules.mqtt(await lookAtBroker(configuration.mqtt)))
        return DoctorReport(findings: findings)
    }

    private func clock() -> Finding {
        let discipline = hostClock.discipline()
        return HostRules.clock(synchronised: discipline.synchronised, maximumError: discipline.maximumError,
                               realTimeClock: realTimeClock())
    }

    /// `body`'s result, or nil when it takes longer than `limit`; what it was doing is left to
    /// end by itself (the command exits soon after).
    static func within<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> Value) async -> Value? {
        await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            Task { answer.give(await body()) }
            Task {
                try? await Task.sleep(for: limit)
                answer.give(nil)
            }
        }
    }

    /// A continuation resumed by whichever answers first.
    private final class FirstAnswer<Value: Sendable>: Sendable {
        private let continuation: Mutex<CheckedContinuation<Value?, Never>?>
        init(_ continuation: CheckedContinuation<Value?, Never>) { self.continuation = Mutex(continuation) }
        func give(_ value: Value?) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }

    /// Runs `body`, which blocks (a program, a file, libmosquitto), on a thread of its own, so
    /// that Swift's few cooperative threads are never held by it; nil after `limit`.
    static func offThePool<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () -> Value) async -> Value? {
        await within(limit) {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: body()) }
            }
        }
    }

    // MARK: Bluetooth

    private func lookAtBlueZ() async -> (observation: BlueZObservation, devices: [BlueZDevice]) {
        let client: BlueZClient
        do {
            client = try await BlueZClient.open(bus: bus)
        } catch {
            switch error {
            case .noSystemBus(let reason): return (.noSystemBus(reason), [])
            case .bluezNotRunning: return (.notRunning, [])
            case .permissionDenied(let reason): return (.denied(reason), [])
            default: return (.failed(error.description), [])
            }
        }
        let tree = await client.tree
        await client.close()
        let adapters = tree.adapters.map {
            AdapterObservation(name: $0.name, address: $0.address, powered: $0.powered, powerState: $0.powerState)
        }
        return (.answered(adapters), tree.adapters.flatMap { tree.devices(on: $0.path) })
    }

    /// The BlueZ that `bluetoothctl --version` names (`5.66`); nil when it is not installed.
    static func bluezVersion() -> String? {
        guard let output = Self.run("bluetoothctl", ["--version"]) else { return nil }
        // "bluetoothctl: 5.66"
        return output.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The kernel's Bluetooth switches.
    func rfkillSwitches() -> [RfkillSwitch] {
        let folder = systemRoot + "/sys/class/rfkill"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.sorted().compactMap { entry in
            let read = { (name: String) in Self.firstLine(folder + "/" + entry + "/" + name) }
            guard read("type") == "bluetooth" else { return nil }
            return RfkillSwitch(name: read("name") ?? entry, soft: read("soft") == "1", hard: read("hard") == "1")
        }
    }

    /// The configured modules (not the cameras reached through their own remotes) and the
    /// remembered one, each with what BlueZ knows of it.
    private func modules(_ configuration: DaemonConfiguration, devices: [BlueZDevice]) -> [ModuleObservation] {
        var wanted = configuration.modules.map { (name: $0.name, address: $0.address.uppercased()) }
        if let remembered = RememberedModule.load(from: rememberedFile),
           !wanted.contains(where: { $0.address == remembered.address.uppercased() }) {
            wanted.append((remembered.name ?? remembered.address, remembered.address.uppercased()))
        }
        return wanted.map { module in
            let device = devices.first { $0.address.uppercased() == module.address }
            return ModuleObservation(name: module.name, address: module.address, known: device != nil, paired: device?.paired ?? false)
        }
    }

    // MARK: USB cameras

    /// Where Debian's libgphoto2 puts its rules, and where an administrator would.
    func udevRules() -> String? {
        for folder in ["/usr/lib/udev/rules.d", "/lib/udev/rules.d", "/etc/udev/rules.d"] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: systemRoot + folder)) ?? []
            if let rules = entries.sorted().first(where: { $0.contains("libgphoto2") && $0.hasSuffix(".rules") }) {
                return folder + "/" + rules
            }
        }
        return nil
    }

    /// Each camera on USB, its node, and whether `user` may open it: the kernel's own verdict
    /// when `user` is the one running this (ACLs count), else by the node's mode bits.
    private func usbCameras(for user: Identity, me: Identity) async -> [USBCameraObservation] {
        await detectCameras().filter { $0.port.hasPrefix("usb:") }.map { camera in
            // usb:001,004 is /dev/bus/usb/001/004.
            let numbers = camera.port.dropFirst(4).split(separator: ",")
            let device = numbers.count == 2 ? "/dev/bus/usb/\(numbers[0])/\(numbers[1])" : camera.port
            let node = systemRoot + device
            return USBCameraObservation(model: camera.model, port: camera.port, device: device, ownership: Self.ownership(node),
                                        openable: user.uid == me.uid ? access(node, R_OK | W_OK) == 0 : nil)
        }
    }

    /// libgphoto2's autodetection; none when it fails.
    public static let libgphoto2Cameras: @Sendable () async -> [DetectedCamera] = {
        (try? await GPhoto2Detection.detect()) ?? []
    }

    // MARK: The daemon

    private func lookAtDaemon(_ path: String) async -> DaemonObservation {
        let client = DaemonClient(socketPath: path, token: environment["UNLEASHED_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        switch client.reach() {
        case .absent: return .noSocket(path)
        case .notListening: return .notListening(path)
        case .denied: return .denied(path)
        case .failed(let reason): return .failed(path, reason)
        case .listening: break
        }
        do throws(DaemonClientError) {
            let status = try await client.send(API.status, timeout: answerLimit)
            return .answered(path, version: status.version)
        } catch {
            return .failed(path, error.description)
        }
    }

    // MARK: The journal

    func journal(_ file: String) -> JournalObservation {
        let folder = (file as NSString).deletingLastPathComponent
        // The nearest folder that exists: systemd makes /var/lib/unleashed when the service starts.
        var existing = folder.isEmpty ? "." : folder
        let made = FileManager.default.fileExists(atPath: existing)
        while !FileManager.default.fileExists(atPath: existing), existing != "/" {
            existing = (existing as NSString).deletingLastPathComponent
            if existing.isEmpty { existing = "/" }
        }
        var disk = statvfs()
        let measured = statvfs(existing, &disk) == 0
        let files = [file, file + "-wal", file + "-shm"].compactMap { path in Self.ownership(path).map { OwnedFile(path: path, ownership: $0) } }
        return JournalObservation(
            file: file, folder: folder, folderExists: made,
            // systemd makes the system service's folder (StateDirectory=) for its user.
            ownership: made || !system ? Self.ownership(existing) : nil,
            readOnly: measured && disk.f_flag & UInt(ST_RDONLY) != 0,
            freeBytes: measured ? UInt64(disk.f_bavail) * UInt64(disk.f_frsize) : 0,
            totalBytes: measured ? UInt64(disk.f_blocks) * UInt64(disk.f_frsize) : 0,
            files: files)
    }

    // MARK: The clock

    /// The first real-time clock's name (`rtc0`, from its driver), or nil when there is none.
    func realTimeClock() -> String? {
        let folder = systemRoot + "/sys/class/rtc"
        guard let first = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().first else { return nil }
        return Self.firstLine(folder + "/" + first + "/name").map { "\(first), \($0)" } ?? first
    }

    // MARK: The web certificate and the broker

    /// Reads the certificate's validity. It blocks on a file that never ends (a FIFO), which is
    /// why it is refused unless it is a regular file, and run off the pool with a limit.
    func certificate(_ web: DaemonConfiguration.Web, me: Identity) -> CertificateObservation {
        guard let path = web.certificate else { return .notConfigured(plainWeb: web.listen != nil) }
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .unreadable(path, errno == EACCES && me.uid != 0 ? "user \(me.name) may not reach it" : String(cString: strerror(errno)).lowercased())
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .unreadable(path, info.st_mode & S_IFMT == S_IFDIR ? "it is a folder" : "it is not a regular file")
        }
        guard access(path, R_OK) == 0 else { return .notReadableHere(path, user: me.name) }
        do {
            guard let first = try NIOSSLCertificate.fromPEMFile(path).first else {
                return .unreadable(path, "it holds no certificate")
            }
            return .valid(path, subject: Self.commonName(first) ?? "no common name",
                          notBefore: Int64(first.notValidBefore), notAfter: Int64(first.notValidAfter))
        } catch {
            return .unreadable(path, "it is not a PEM certificate")
        }
    }

    /// The subject's common name, from the certificate's description
    /// (`<NIOSSLCertificate;serial_number=…;common_name=phone.test>`).
    private static func commonName(_ certificate: NIOSSLCertificate) -> String? {
        let text = certificate.description
        guard let start = text.range(of: "common_name=") else { return nil }
        let name = text[start.upperBound...].prefix { $0 != ";" && $0 != ">" }
        return name.isEmpty ? nil : String(name)
    }

    /// One connection to the broker, as the daemon makes it: reached when the broker accepts
    /// the session within ``answerLimit``. libmosquitto blocks (a name to resolve, a TLS
    /// handshake, a thread to join), so all of it runs off the pool, and the client is dropped,
    /// not stopped: a graceful stop waits on a connection that may never answer.
    private func lookAtBroker(_ settings: DaemonConfiguration.MQTTSettings) async -> BrokerObservation {
        guard let broker = settings.broker else { return .notConfigured }
        let name = "\(broker)"
        let configuration = settings.session(with: broker, clientID: "unleashed-doctor-\(getpid())")
        let limit = answerLimit
        let client = Mutex<MQTTClient?>(nil)
        let started = await Self.offThePool(limit) { () -> Result<MQTTClient, MQTTError> in
            Result { () throws(MQTTError) -> MQTTClient in
                let made = try MQTTClient(configuration)
                client.withLock { $0 = made }
                try made.start()
                return made
            }
        }
        defer { if let made = client.withLock({ $0 }) { Thread.detachNewThread { made.drop() } } }
        guard let started else { return .unreachable(name, "no answer in \(limit)") }
        let made: MQTTClient
        switch started {
        case .success(let value): made = value
        case .failure(let error): return .unreachable(name, error.description)
        }
        let first = await Self.within(limit) { () -> MQTTClient.Event? in
            for await event in made.events {
                if case .message = event { continue }
                return event
            }
            return nil
        }
        switch first ?? nil {
        case .connected: return .reached(name)
        case .refused(let refusal): return .refused(name, refusal.description, credentials: refusal.isCredentials)
        case .disconnected(let reason): return .unreachable(name, reason)
        case .message, nil: return .unreachable(name, "no answer in \(limit)")
        }
    }

    // MARK: Helpers

    static func firstLine(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    static func ownership(_ path: String) -> FileOwnership? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let groupName = getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(info.st_gid)
        return FileOwnership(owner: info.st_uid, group: info.st_gid, groupName: groupName, mode: UInt32(info.st_mode))
    }

    /// The user running the command, with its groups.
    static func currentUser() -> Identity {
        let uid = getuid()
        let name = getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? String(uid)
        var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        let count = getgroups(Int32(groups.count), &groups)
        return Identity(name: name, uid: uid, groups: Set(groups.prefix(Int(max(count, 0)))).union([getgid()]))
    }

    /// A user of the password database, with the groups it is in at its next login, and those
    /// `unit` gives it (`SupplementaryGroups=`, as the system unit does bluetooth and plugdev).
    static func user(named name: String, unit: String? = nil) -> Identity? {
        guard let entry = getpwnam(name) else { return nil }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(name, gid, &groups, &count)
        }
        var all = Set(groups.prefix(Int(max(count, 0))))
        for line in (unit ?? "").split(separator: "\n") where line.hasPrefix("SupplementaryGroups=") {
            for group in line.dropFirst("SupplementaryGroups=".count).split(separator: " ") {
                if let entry = getgrnam(String(group)) { all.insert(entry.pointee.gr_gid) }
            }
        }
        return Identity(name: name, uid: uid, groups: all)
    }

    /// The system unit's text: an administrator's copy in /etc first, else the package's.
    func serviceUnit() -> String? {
        ["/etc/systemd/system/unleashed.service", "/usr/lib/systemd/system/unleashed.service", "/lib/systemd/system/unleashed.service"]
            .lazy.compactMap { try? String(contentsOfFile: systemRoot + $0, encoding: .utf8) }.first
    }

    /// A program's standard output, or nil when it is not installed or fails.
    static func run(_ program: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
