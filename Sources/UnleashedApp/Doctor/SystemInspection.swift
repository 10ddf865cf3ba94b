import BlueZ
public import DBus
import Daemon
import DaemonClient
public import Doctor
public import Foundation
import GPhoto2
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
    /// system service's user `unleashed`, or the user running the command.
    public var serviceUser: Identity?
    /// The cameras libgphoto2 finds on USB.
    public var detectCameras: @Sendable () async -> [DetectedUSBCamera]

    /// A camera on USB: libgphoto2's model name and port (`usb:001,004`).
    public struct DetectedUSBCamera: Sendable {
        public var model: String
        public var port: String
        public init(model: String, port: String) {
            self.model = model
            self.port = port
        }
    }

    public init(system: Bool, environment: [String: String], configurationFiles: [String]? = nil,
                bus: DBusConnection.Bus = .system, systemRoot: String = "/", plan: PlannedFrames? = nil,
                rememberedFile: URL = RememberedModule.file, hostClock: HostClockSource = .system,
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                answerLimit: Duration = .seconds(5), serviceUser: Identity? = nil,
                detectCameras: @escaping @Sendable () async -> [DetectedUSBCamera] = SystemInspection.libgphoto2Cameras) {
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
        self.detectCameras = detectCameras
    }

    /// Whether `unleashed doctor` without --system or --user checks the system service: when
    /// its configuration is installed and this user has none of their own.
    public static func systemServiceIsTheSetup(environment: [String: String]) -> Bool {
        let files = DaemonConfiguration.files(scope: .user, environment: environment)
        return FileManager.default.fileExists(atPath: files[0]) && !files.dropFirst().contains { FileManager.default.fileExists(atPath: $0) }
    }

    private var scope: DaemonConfiguration.Scope { system ? .system : .user }

    /// Every check, in ``Check``'s order.
    public func examine() async -> DoctorReport {
        var findings: [Finding] = []
        let files = (configurationFiles ?? DaemonConfiguration.files(scope: scope, environment: environment))
        let configuration: DaemonConfiguration
        do throws(ConfigurationError) {
            // A file named on the command line must be there: a typo is not the defaults.
            configuration = try DaemonConfiguration.load(files: files, environment: environment, scope: scope,
                                                         requireFiles: configurationFiles != nil)
            findings.append(ServiceRules.configuration(files: files.filter { FileManager.default.fileExists(atPath: $0) }, error: nil))
        } catch {
            findings.append(ServiceRules.configuration(files: files, error: error.description))
            // The rest still says what it can, on the defaults.
            configuration = (try? DaemonConfiguration.load(files: [], environment: [:], scope: scope))!
        }
        let bluetoothNeeded = configuration.backend == .unleashed
        let usbNeeded = configuration.backend == .gphoto2
        let me = Self.currentUser()
        let daemonUser = serviceUser ?? (scope == .system ? Self.user(named: "unleashed") : me)

        let bluez = await lookAtBlueZ()
        let version = Self.bluezVersion()
        findings.append(BluetoothRules.bluez(bluez.observation, version: version, needed: bluetoothNeeded))
        findings.append(BluetoothRules.access(bluez.observation, user: me.name, needed: bluetoothNeeded))
        findings.append(BluetoothRules.adapter(bluez.observation, rfkill: rfkillSwitches(), wanted: configuration.adapter,
                                               needed: bluetoothNeeded))
        findings.append(BluetoothRules.modules(bluez.observation, modules: modules(configuration, devices: bluez.devices),
                                               needed: bluetoothNeeded))
        findings.append(HostRules.usbCameras(rules: udevRules(), cameras: await usbCameras(), user: daemonUser ?? me, needed: usbNeeded))
        findings.append(HostRules.daemon(await lookAtDaemon(configuration.service.socket), user: me.name, system: system))
        if let daemonUser {
            findings.append(HostRules.journal(journal(configuration.service.journal), writer: daemonUser, plan: plan))
        } else {
            findings.append(Finding(.journal, .problem, "the system service's user `unleashed` does not exist",
                                    remedy: "install the package (it makes the user), or see docs/install.md"))
        }
        let discipline = hostClock.discipline()
        findings.append(HostRules.clock(synchronised: discipline.synchronised, maximumError: discipline.maximumError,
                                        realTimeClock: realTimeClock()))
        findings.append(ServiceRules.webCertificate(certificate(configuration.web), now: now()))
        findings.append(ServiceRules.mqtt(await lookAtBroker(configuration.mqtt)))
        return DoctorReport(findings: findings)
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

    private func usbCameras() async -> [USBCameraObservation] {
        await detectCameras().filter { $0.port.hasPrefix("usb:") }.map { camera in
            // usb:001,004 is /dev/bus/usb/001/004.
            let numbers = camera.port.dropFirst(4).split(separator: ",")
            let device = numbers.count == 2 ? "/dev/bus/usb/\(numbers[0])/\(numbers[1])" : camera.port
            return USBCameraObservation(model: camera.model, port: camera.port, device: device,
                                        ownership: Self.ownership(systemRoot + device))
        }
    }

    /// libgphoto2's autodetection; none when it fails.
    public static let libgphoto2Cameras: @Sendable () async -> [DetectedUSBCamera] = {
        ((try? await GPhoto2Detection.detect()) ?? []).map { DetectedUSBCamera(model: $0.model, port: $0.port) }
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
        return JournalObservation(
            file: file, folder: folder, folderExists: made,
            // systemd makes the system service's folder (StateDirectory=) for its user.
            ownership: made || !system ? Self.ownership(existing) : nil,
            readOnly: measured && disk.f_flag & UInt(ST_RDONLY) != 0,
            freeBytes: measured ? UInt64(disk.f_bavail) * UInt64(disk.f_frsize) : 0,
            totalBytes: measured ? UInt64(disk.f_blocks) * UInt64(disk.f_frsize) : 0)
    }

    // MARK: The clock

    /// The first real-time clock's name (`rtc0`, from its driver), or nil when there is none.
    func realTimeClock() -> String? {
        let folder = systemRoot + "/sys/class/rtc"
        guard let first = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().first else { return nil }
        return Self.firstLine(folder + "/" + first + "/name").map { "\(first), \($0)" } ?? first
    }

    // MARK: The web certificate and the broker

    func certificate(_ web: DaemonConfiguration.Web) -> CertificateObservation {
        guard let path = web.certificate else { return .notConfigured(plainWeb: web.listen != nil) }
        do {
            guard let first = try NIOSSLCertificate.fromPEMFile(path).first else {
                return .unreadable(path, "it holds no certificate")
            }
            return .valid(path, subject: Self.commonName(first) ?? "no common name",
                          notBefore: Int64(first.notValidBefore), notAfter: Int64(first.notValidAfter))
        } catch {
            let reason = FileManager.default.isReadableFile(atPath: path) ? "it is not a PEM certificate" : "it cannot be read"
            return .unreadable(path, reason)
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
    /// the session, within ``answerLimit``.
    private func lookAtBroker(_ settings: DaemonConfiguration.MQTTSettings) async -> BrokerObservation {
        guard let broker = settings.broker else { return .notConfigured }
        let name = "\(broker)"
        let client: MQTTClient
        do {
            var configuration = MQTTClient.Configuration(host: broker.host, port: broker.port, clientID: "unleashed-doctor-\(getpid())")
            configuration.username = settings.username
            configuration.password = settings.password
            configuration.tls = broker.tls
            configuration.caFile = settings.caFile
            client = try MQTTClient(configuration)
            try client.start()
        } catch {
            return .unreachable(name, error.description)
        }
        defer { client.stop() }
        let limit = answerLimit
        let first = await withTaskGroup(of: MQTTClient.Event?.self) { group in
            group.addTask {
                for await event in client.events {
                    if case .message = event { continue }
                    return event
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch first {
        case .connected: return .reached(name)
        case .disconnected(let reason) where reason.hasPrefix("cannot reach"): return .unreachable(name, reason)
        case .disconnected(let reason): return .refused(name, reason)
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

    /// A user of the password database, with the groups it is in (as it would have them at its
    /// next login: the service's groups, not this process's).
    static func user(named name: String) -> Identity? {
        guard let entry = getpwnam(name) else { return nil }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(name, gid, &groups, &count)
        }
        return Identity(name: name, uid: uid, groups: Set(groups.prefix(Int(max(count, 0)))))
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
