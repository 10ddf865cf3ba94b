import Doctor
import Foundation
import GPhoto2
import Testing
import UnleashedApp
import UnleashedKit
import UnleashedTestSupport

/// `unleashed doctor`'s probes against real components, one test or more a check: the project's
/// fake bluetoothd on a private dbus-daemon (no adapter, an adapter off, one blocked by rfkill,
/// a bus policy that shuts this user out, a pairing refused), a real tmpfs mounted read-only
/// or full, a stale socket and a live control server, a certificate made by openssl, and a
/// folder that stands for `/` (rfkill, the RTC, udev's rules, a USB camera's node).
/// The broker's check is in DoctorBrokerTests (libmosquitto runs apart; see the Makefile).
@Suite("unleashed doctor's probes", .timeLimit(.minutes(2)))
struct SystemInspectionTests {
    /// A configuration, a folder standing for `/`, and an inspection of them.
    final class Machine {
        let path = "/tmp/udoctor-\(UUID().uuidString.prefix(8))"
        var root: String { path + "/root" }
        var config: String { path + "/unleashed.toml" }

        init(_ toml: String = "", journal: String? = nil) throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: path + "/state", withIntermediateDirectories: true)
            let table = "[daemon]\nsocket = \"\(path)/control.sock\"\njournal = \"\(journal ?? path + "/state/journal.sqlite")\"\n"
            // Top-level keys first: after a table's header they would be the table's.
            try (toml + "\n" + table).write(toFile: config, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes `text` at `file` under the stand-in root.
        func write(_ file: String, _ text: String) throws {
            let url = URL(fileURLWithPath: root + file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }

        func inspection(bus: String? = nil, synchronised: Bool = true, now: Int64? = nil, plan: PlannedFrames? = nil,
                        serviceUser: Identity? = nil, cameras: [DetectedCamera] = []) -> SystemInspection {
            let discipline = ClockDiscipline(synchronised: synchronised, estimatedError: .milliseconds(2), maximumError: .milliseconds(40))
            let clock = HostClockSource(wallClockMs: { 0 }, monotonic: { .zero }, discipline: { discipline })
            return SystemInspection(
                system: false, environment: ["HOME": path], configurationFiles: [config],
                bus: .address(bus ?? "unix:path=\(path)/no-bus.sock"), systemRoot: root, plan: plan,
                rememberedFile: URL(fileURLWithPath: path + "/module.json"), hostClock: clock,
                // The limit guards against a probe that never ends; these tests are not about it
                // (those that are set it to 1 s), and on a loaded machine 5 s was once too short.
                now: { now ?? Int64(Date().timeIntervalSince1970) }, answerLimit: .seconds(60), serviceUser: serviceUser,
                detectCameras: { cameras })
        }
    }

    static func finding(_ check: Check, _ inspection: SystemInspection) async -> Finding {
        let report = await inspection.examine()
        return report.findings.first { $0.check == check } ?? Finding(check, .skipped, "no finding for \(check) at all")
    }

    static let nobody = Identity(name: "nobody", uid: 65534, groups: [65534])

    // MARK: configuration

    @Test func aConfigurationThatDoesNotParseIsAProblem() async throws {
        let machine = try Machine("[web]\nlisten = 8080\n")
        let finding = await Self.finding(.configuration, machine.inspection())
        #expect(finding.status == .problem)
        #expect(finding.summary.contains("unleashed.toml"), "\(finding.summary)")
        let sound = try Machine()
        #expect(await Self.finding(.configuration, sound.inspection()).status == .ok)
    }

    // MARK: BlueZ, access, adapter, modules (the fake bluetoothd)

    @Test func bluezAbsentFromTheBusIsAProblem() async throws {
        let bus = try await PrivateBus()
        let machine = try Machine()
        let finding = await Self.finding(.bluez, machine.inspection(bus: bus.address))
        #expect(finding.status == .problem)
        #expect(finding.summary.contains("org.bluez is not on the system bus"), "\(finding.summary)")
        #expect(await Self.finding(.bluez, machine.inspection()).summary.contains("the D-Bus system bus cannot be reached"))
    }

    @Test func bluezRunningIsOk() async throws {
        let fake = try await SimulatedBluetooth()
        let machine = try Machine()
        let finding = await Self.finding(.bluez, machine.inspection(bus: fake.bus.address))
        #expect(finding.status == .ok && finding.summary.contains("is running"), "\(finding.summary)")
    }

    @Test func aBusPolicyThatShutsThisUserOutOfBlueZIsAProblem() async throws {
        let fake = try await SimulatedBluetooth(busRules: #"<deny send_destination="org.bluez" send_interface="org.freedesktop.DBus.ObjectManager"/>"#)
        let machine = try Machine()
        let finding = await Self.finding(.bluetoothAccess, machine.inspection(bus: fake.bus.address))
        #expect(finding.status == .problem)
        #expect(finding.summary.contains("is not allowed to use BlueZ"), "\(finding.summary)")
        #expect(finding.remedy?.contains("bluetooth") == true)
    }

    @Test func noAdapterIsAProblem() async throws {
        let fake = try await SimulatedBluetooth(["--adapters", "0"])
        let machine = try Machine()
        let finding = await Self.finding(.adapter, machine.inspection(bus: fake.bus.address))
        #expect(finding == Finding(.adapter, .problem, "BlueZ has no Bluetooth adapter", remedy: finding.remedy))
    }

    @Test func anAdapterPoweredOffIsAProblemAndOnIsOk() async throws {
        let off = try await SimulatedBluetooth(["--powered", "off"])
        let machine = try Machine()
        let finding = await Self.finding(.adapter, machine.inspection(bus: off.bus.address))
        #expect(finding.status == .problem && finding.summary.hasSuffix("is powered off"), "\(finding.summary)")
        let on = try await SimulatedBluetooth()
        #expect(await Self.finding(.adapter, machine.inspection(bus: on.bus.address)).status == .ok)
    }

    @Test func rfkillIsNamedWhenItBlocksTheAdapter() async throws {
        let fake = try await SimulatedBluetooth(["--powered", "off"])
        let machine = try Machine()
        try machine.write("/sys/class/rfkill/rfkill0/type", "bluetooth\n")
        try machine.write("/sys/class/rfkill/rfkill0/name", "hci0\n")
        try machine.write("/sys/class/rfkill/rfkill0/soft", "1\n")
        try machine.write("/sys/class/rfkill/rfkill0/hard", "0\n")
        // A Wi-Fi switch is not Bluetooth's business.
        try machine.write("/sys/class/rfkill/rfkill1/type", "wlan\n")
        try machine.write("/sys/class/rfkill/rfkill1/soft", "1\n")
        let finding = await Self.finding(.adapter, machine.inspection(bus: fake.bus.address))
        #expect(finding.status == .problem && finding.summary.contains("blocked by rfkill"), "\(finding.summary)")
        #expect(finding.remedy == "sudo rfkill unblock bluetooth")
    }

    @Test func aModuleWhosePairingWasRefusedIsNotPaired() async throws {
        let fake = try await SimulatedBluetooth(["--faults", "refuse-pairing"])
        let machine = try Machine("[[modules]]\nname = \"left\"\naddress = \"\(SimulatedBluetooth.first)\"\n")
        await #expect(throws: ModuleCommandError.self) {
            try await ModuleOperations(adapter: nil, bus: .address(fake.bus.address), rememberedFile: URL(fileURLWithPath: machine.path + "/module.json"))
                .pair(SimulatedBluetooth.first, answers: ModuleOperationsTests.answers())
        }
        let finding = await Self.finding(.modules, machine.inspection(bus: fake.bus.address))
        #expect(finding.status == .warning)
        #expect(finding.summary.hasPrefix("not paired: left (\(SimulatedBluetooth.first))"), "\(finding.summary)")
        // BlueZ knows it (the attempt found it): refused, not merely never tried.
        #expect(!finding.summary.contains("unknown to BlueZ"), "\(finding.summary)")
    }

    @Test func aPairedModuleIsOk() async throws {
        let fake = try await SimulatedBluetooth()
        let machine = try Machine("[[modules]]\nname = \"left\"\naddress = \"\(SimulatedBluetooth.first)\"\n")
        _ = try await ModuleOperations(adapter: nil, bus: .address(fake.bus.address), rememberedFile: URL(fileURLWithPath: machine.path + "/module.json"))
            .pair(SimulatedBluetooth.first, answers: ModuleOperationsTests.answers())
        #expect(await Self.finding(.modules, machine.inspection(bus: fake.bus.address)) == Finding(.modules, .ok, "paired: left"))
    }

    // MARK: USB cameras

    @Test func aCameraNodeOfAnotherGroupIsAProblemForTheServiceUser() async throws {
        try #require(getuid() == 0, "this test gives a file to root's group plugdev: it runs as root, as make test does")
        let machine = try Machine("backend = \"gphoto2\"\n")
        let camera = [DetectedCamera(model: "Canon EOS 80D", port: "usb:001,004")]
        #expect(await Self.finding(.usbCameras, machine.inspection(serviceUser: Self.nobody, cameras: camera)).summary
            .hasPrefix("libgphoto2's udev rules are not installed"))
        try machine.write("/usr/lib/udev/rules.d/60-libgphoto2-6.rules", "# rules\n")
        try machine.write("/dev/bus/usb/001/004", "")
        let node = machine.root + "/dev/bus/usb/001/004"
        #expect(chown(node, 0, 46) == 0 && chmod(node, 0o660) == 0)
        let closed = await Self.finding(.usbCameras, machine.inspection(serviceUser: Self.nobody, cameras: camera))
        #expect(closed.status == .problem)
        #expect(closed.summary.contains("may not open Canon EOS 80D at /dev/bus/usb/001/004"), "\(closed.summary)")
        #expect(closed.summary.contains("mode 660"), "\(closed.summary)")
        var member = Self.nobody
        member.groups.insert(46)
        #expect(await Self.finding(.usbCameras, machine.inspection(serviceUser: member, cameras: camera)).status == .ok)
    }

    @Test func aBusThatNeverAnswersIsAProblemAfterTheLimit() async throws {
        let machine = try Machine()
        // A socket that takes connections into its backlog and never says a word.
        let listener = UnixSocketFile.bind(machine.path + "/silent-bus.sock")
        defer { close(listener) }
        #expect(listener >= 0 && listen(listener, 8) == 0)
        var inspection = machine.inspection(bus: "unix:path=\(machine.path)/silent-bus.sock")
        inspection.answerLimit = .seconds(1)
        let finding = await Self.finding(.bluez, inspection)
        #expect(finding.status == .problem && finding.summary.hasPrefix("the system bus or bluetoothd did not answer in"), "\(finding.summary)")
    }

    // MARK: the daemon

    @Test func noDaemonIsAWarningAndAStaleSocketAProblem() async throws {
        let machine = try Machine()
        #expect(await Self.finding(.daemon, machine.inspection()).status == .warning)
        // A socket bound and closed, as a daemon killed with SIGKILL leaves it.
        #expect(UnixSocketFile.leaveStale(machine.path + "/control.sock"))
        let stale = await Self.finding(.daemon, machine.inspection())
        #expect(stale.status == .problem && stale.summary.contains("no daemon listens"), "\(stale.summary)")
    }

    @Test func aDaemonThatAnswersIsOk() async throws {
        try await JobRunTests.withDaemon { client in
            let machine = try Machine()
            try "[daemon]\nsocket = \"\(client.socketPath)\"\n".write(toFile: machine.config, atomically: true, encoding: .utf8)
            let finding = await Self.finding(.daemon, machine.inspection())
            #expect(finding == Finding(.daemon, .ok, "the daemon 0.0.0-jobrun answers at \(client.socketPath)"))
        }
    }

    // MARK: the journal

    @Test func aReadOnlyJournalFolderIsAProblem() async throws {
        let disk = try SmallDisk(megabytes: 1)
        defer { disk.remove() }
        #expect(try await runCommand("/bin/mount", ["-o", "remount,ro", disk.directory]) == 0)
        let machine = try Machine(journal: disk.directory + "/journal.sqlite")
        let finding = await Self.finding(.journal, machine.inspection())
        #expect(finding.status == .problem && finding.summary.contains("read-only file system"), "\(finding.summary)")
    }

    @Test func aFullDiskAndAPlanTooBigAreProblems() async throws {
        let disk = try SmallDisk(megabytes: 128)
        defer { disk.remove() }
        let machine = try Machine(journal: disk.directory + "/journal.sqlite")
        let roomy = await Self.finding(.journal, machine.inspection(plan: PlannedFrames(frames: 1000)))
        #expect(roomy.status == .ok && roomy.summary.hasSuffix("room for the 1000 frames (500.0 KiB)"), "\(roomy.summary)")
        let big = await Self.finding(.journal, machine.inspection(plan: PlannedFrames(frames: 1_000_000)))
        #expect(big.status == .problem && big.summary.contains("a run of 1000000 frames needs about 488.3 MiB"), "\(big.summary)")
        _ = disk.fill()
        let full = await Self.finding(.journal, machine.inspection())
        #expect(full.status == .problem && full.summary.contains("0 B free of 128.0 MiB"), "\(full.summary)")
    }

    @Test func aJournalFolderTheServiceUserCannotWriteIsAProblem() async throws {
        let machine = try Machine()
        #expect(chmod(machine.path + "/state", 0o755) == 0)
        let finding = await Self.finding(.journal, machine.inspection(serviceUser: Self.nobody))
        #expect(finding.status == .problem && finding.summary.hasPrefix("user nobody may not write in \(machine.path)/state"), "\(finding.summary)")
    }

    @Test func aJournalOfRootsInTheServicesFolderIsAProblem() async throws {
        try #require(getuid() == 0, "this test makes files of root's beside a folder of nobody's: it runs as root, as make test does")
        let machine = try Machine()
        #expect(chown(machine.path + "/state", 65534, 65534) == 0 && chmod(machine.path + "/state", 0o750) == 0)
        #expect(await Self.finding(.journal, machine.inspection(serviceUser: Self.nobody)).status == .ok)
        // As `sudo unleashed daemon` leaves it.
        #expect(FileManager.default.createFile(atPath: machine.path + "/state/journal.sqlite", contents: Data(), attributes: [.posixPermissions: 0o644]))
        let finding = await Self.finding(.journal, machine.inspection(serviceUser: Self.nobody))
        #expect(finding.status == .problem && finding.summary.hasPrefix("user nobody may not write the journal's journal.sqlite"), "\(finding.summary)")
    }

    // MARK: the clock

    @Test func anUnsynchronisedClockAndNoRealTimeClockAreWarnings() async throws {
        let machine = try Machine()
        let unsynchronised = await Self.finding(.clock, machine.inspection(synchronised: false))
        #expect(unsynchronised.status == .warning && unsynchronised.summary.hasPrefix("the clock is not synchronised"))
        #expect(unsynchronised.summary.contains("no real-time clock"))
        try machine.write("/sys/class/rtc/rtc0/name", "rtc-rpi\n")
        let kept = await Self.finding(.clock, machine.inspection(synchronised: true))
        #expect(kept == Finding(.clock, .ok, "synchronised (error at most 40 ms); a real-time clock (rtc0, rtc-rpi) keeps time while the machine is off, if it has a battery"))
    }

    // MARK: the web certificate

    @Test func anExpiredCertificateIsAProblem() async throws {
        let machine = try Machine()
        let certificate = machine.path + "/web.pem", key = machine.path + "/web-key.pem"
        #expect(try await runCommand("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                    "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=phone.test"]) == 0)
        try "[web]\nlisten = \"127.0.0.1:0\"\ncertificate = \"\(certificate)\"\nkey = \"\(key)\"\n"
            .write(toFile: machine.config, atomically: true, encoding: .utf8)
        let now = Int64(Date().timeIntervalSince1970)
        let fresh = await Self.finding(.webCertificate, machine.inspection(now: now))
        #expect(fresh.status == .warning && fresh.summary.contains("(phone.test) expires in"), "\(fresh.summary)")
        // Three days on, it has expired.
        let expired = await Self.finding(.webCertificate, machine.inspection(now: now + 3 * 86_400))
        #expect(expired.status == .problem, "\(expired.summary)")
        #expect(expired.summary.contains("expired 1 day ago") || expired.summary.contains("expired 2 days ago"), "\(expired.summary)")
        try "not a certificate".write(toFile: certificate, atomically: true, encoding: .utf8)
        #expect(await Self.finding(.webCertificate, machine.inspection()).summary.contains("it is not a PEM certificate"))
        // A FIFO would block a reader for ever: it is refused, not read.
        try FileManager.default.removeItem(atPath: certificate)
        #expect(mkfifo(certificate, 0o644) == 0)
        #expect(await Self.finding(.webCertificate, machine.inspection()).summary.contains("it is not a regular file"))
    }
}

/// Runs a program to its end; its exit status.
func runCommand(_ program: String, _ arguments: [String]) async throws -> Int32 {
    try await runProgram(URL(fileURLWithPath: program), arguments, environment: ProcessInfo.processInfo.environment).status
}
