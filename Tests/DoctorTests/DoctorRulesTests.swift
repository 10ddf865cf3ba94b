import Doctor
import Testing

/// The rules of `unleashed doctor`, each on the observations that make it say something else.
/// The probes that make those observations are tested against real components in
/// UnleashedAppTests (SystemInspectionTests).
@Suite struct DoctorRulesTests {
    let adapter = AdapterObservation(name: "hci0", address: "00:1A:7D:DA:71:13", powered: true, powerState: "on")
    let pi = Identity(name: "pi", uid: 1000, groups: [1000, 27])

    @Test func bluezRunningNotRunningAndNotInstalled() {
        #expect(BluetoothRules.bluez(.answered([adapter]), version: "5.66", needed: true) == Finding(.bluez, .ok, "BlueZ 5.66 is running (org.bluez on the system bus)"))
        let stopped = BluetoothRules.bluez(.notRunning, version: "5.66", needed: true)
        #expect(stopped.status == .problem)
        #expect(stopped.remedy == "sudo systemctl enable --now bluetooth")
        #expect(BluetoothRules.bluez(.notRunning, version: nil, needed: true).remedy == "sudo apt-get install bluez")
        // A camera on USB needs no Bluetooth: the same is only worth a look.
        #expect(BluetoothRules.bluez(.notRunning, version: nil, needed: false).status == .warning)
        #expect(BluetoothRules.bluez(.noSystemBus("no socket"), version: nil, needed: true).status == .problem)
    }

    @Test func accessDeniedNamesTheGroup() {
        let denied = BluetoothRules.access(.denied("Rejected send message"), user: "pi", needed: true)
        #expect(denied.status == .problem)
        #expect(denied.summary.contains("user pi is not allowed"))
        #expect(denied.remedy?.hasPrefix("sudo adduser pi bluetooth") == true)
        #expect(BluetoothRules.access(.answered([]), user: "pi", needed: true).status == .ok)
        #expect(BluetoothRules.access(.notRunning, user: "pi", needed: true).status == .skipped)
    }

    @Test func adapterMissingOffBlockedAndPowered() {
        #expect(BluetoothRules.adapter(.answered([adapter]), rfkill: [], wanted: nil, needed: true).status == .ok)
        let none = BluetoothRules.adapter(.answered([]), rfkill: [], wanted: nil, needed: true)
        #expect(none.status == .problem && none.summary == "BlueZ has no Bluetooth adapter")
        var off = adapter
        off.powered = false
        off.powerState = "off"
        let powered = BluetoothRules.adapter(.answered([off]), rfkill: [], wanted: nil, needed: true)
        #expect(powered.status == .problem && powered.summary.hasSuffix("is powered off"))
        #expect(powered.remedy?.hasPrefix("bluetoothctl power on") == true)
        // BlueZ 5.66 and later say rfkill themselves; older ones, the kernel's switch does.
        off.powerState = "off-blocked"
        #expect(BluetoothRules.adapter(.answered([off]), rfkill: [], wanted: nil, needed: true).summary.contains("blocked by rfkill"))
        off.powerState = nil
        let hard = BluetoothRules.adapter(.answered([off]), rfkill: [RfkillSwitch(name: "hci0", soft: false, hard: true)], wanted: nil, needed: true)
        #expect(hard.summary.contains("blocked by rfkill (a hard block)"))
        #expect(hard.remedy?.contains("switch") == true)
        // With BlueZ down, the kernel's switch is still told.
        let down = BluetoothRules.adapter(.notRunning, rfkill: [RfkillSwitch(name: "hci0", soft: true, hard: false)], wanted: nil, needed: true)
        #expect(down.status == .problem && down.remedy == "sudo rfkill unblock bluetooth")
        #expect(BluetoothRules.adapter(.notRunning, rfkill: [], wanted: nil, needed: true).status == .skipped)
        // A configured adapter that is not there.
        let named = BluetoothRules.adapter(.answered([adapter]), rfkill: [], wanted: "hci1", needed: true)
        #expect(named.summary == "no adapter named hci1; BlueZ has hci0")
        // As the daemon chooses: the first, not another that is on; a name or an address.
        var second = adapter
        second.name = "hci1"
        second.address = "00:1A:7D:DA:71:14"
        var first = adapter
        first.powered = false
        let firstOff = BluetoothRules.adapter(.answered([first, second]), rfkill: [], wanted: nil, needed: true)
        #expect(firstOff.status == .problem && firstOff.summary.hasPrefix("adapter hci0"), "\(firstOff.summary)")
        #expect(BluetoothRules.adapter(.answered([first, second]), rfkill: [], wanted: "00:1a:7d:da:71:14", needed: true)
            == Finding(.adapter, .ok, "adapter hci1 (00:1A:7D:DA:71:14) is powered; 2 adapters in all"))
        // A bus or a bluetoothd that never answers.
        #expect(BluetoothRules.bluez(.noAnswer("5 seconds"), version: "5.66", needed: true).summary == "the system bus or bluetoothd did not answer in 5 seconds")
    }

    @Test func modulesPairedOrNot() {
        #expect(BluetoothRules.modules(.answered([adapter]), modules: [], needed: true).status == .skipped)
        let paired = ModuleObservation(name: "left", address: "AA:BB:CC:DD:EE:01", known: true, paired: true)
        #expect(BluetoothRules.modules(.answered([adapter]), modules: [paired], needed: true) == Finding(.modules, .ok, "paired: left"))
        let lost = ModuleObservation(name: "right", address: "AA:BB:CC:DD:EE:02", known: false, paired: false)
        let finding = BluetoothRules.modules(.answered([adapter]), modules: [paired, lost], needed: true)
        #expect(finding.status == .warning)
        #expect(finding.summary.hasPrefix("not paired: right (AA:BB:CC:DD:EE:02), unknown to BlueZ"))
        #expect(finding.remedy?.hasPrefix("with the module on and in range: unleashed pair AA:BB:CC:DD:EE:02") == true)
    }

    @Test func usbCameraPermissionsFollowTheModeBits() {
        let plugdev = FileOwnership(owner: 0, group: 46, groupName: "plugdev", mode: 0o20664)
        let camera = USBCameraObservation(model: "Canon EOS 80D", port: "usb:001,004", device: "/dev/bus/usb/001/004", ownership: plugdev)
        let rules = "/usr/lib/udev/rules.d/60-libgphoto2-6.rules"
        let closed = HostRules.usbCameras(rules: rules, cameras: [camera], user: pi, needed: true)
        #expect(closed.status == .problem)
        #expect(closed.summary == "user pi may not open Canon EOS 80D at /dev/bus/usb/001/004 (group plugdev, mode 664)")
        #expect(closed.remedy?.hasPrefix("sudo adduser pi plugdev, then log out and in again") == true)
        // The node's own group, and for the service a restart.
        var video = camera
        video.ownership = FileOwnership(owner: 0, group: 44, groupName: "video", mode: 0o20660)
        #expect(HostRules.usbCameras(rules: rules, cameras: [video], user: pi, service: true, needed: true).remedy?
            .hasPrefix("sudo adduser pi video, then sudo systemctl restart unleashed") == true)
        // The kernel's verdict (ACLs) over the mode bits.
        var acl = camera
        acl.openable = true
        #expect(HostRules.usbCameras(rules: rules, cameras: [acl], user: pi, needed: true).status == .ok)
        var member = pi
        member.groups.insert(46)
        #expect(HostRules.usbCameras(rules: rules, cameras: [camera], user: member, needed: true).status == .ok)
        #expect(HostRules.usbCameras(rules: nil, cameras: [], user: member, needed: true).status == .problem)
        #expect(HostRules.usbCameras(rules: nil, cameras: [], user: member, needed: false).status == .warning)
        #expect(HostRules.usbCameras(rules: rules, cameras: [], user: pi, needed: true).summary.hasSuffix("no camera on USB now"))
    }

    @Test func daemonStates() {
        #expect(HostRules.daemon(.noSocket("/run/unleashed/control.sock"), user: "pi").status == .warning)
        #expect(HostRules.daemon(.notListening("/s"), user: "pi").status == .problem)
        let denied = HostRules.daemon(.denied("/run/unleashed/control.sock"), user: "pi")
        #expect(denied.status == .problem && denied.remedy?.hasPrefix("sudo adduser pi unleashed") == true)
        #expect(HostRules.daemon(.answered("/s", version: "0.7.0"), user: "pi") == Finding(.daemon, .ok, "the daemon 0.7.0 answers at /s"))
    }

    @Test func journalReadOnlyClosedFullAndRoomy() {
        let owned = FileOwnership(owner: 999, group: 999, groupName: "unleashed", mode: 0o40750)
        let service = Identity(name: "unleashed", uid: 999, groups: [999])
        let gib: UInt64 = 1 << 30
        let folder = JournalObservation(file: "/var/lib/unleashed/journal.sqlite", folder: "/var/lib/unleashed", folderExists: true,
                                        ownership: owned, readOnly: false, freeBytes: 4 * gib, totalBytes: 16 * gib)
        #expect(HostRules.journal(folder, writer: service, plan: nil).status == .ok)
        var readOnly = folder
        readOnly.readOnly = true
        #expect(HostRules.journal(readOnly, writer: service, plan: nil).summary.contains("read-only file system"))
        #expect(HostRules.journal(folder, writer: pi, plan: nil).summary == "user pi may not write in /var/lib/unleashed (group unleashed, mode 750)")
        var full = folder
        full.freeBytes = 10 << 20
        #expect(HostRules.journal(full, writer: service, plan: nil).summary.hasSuffix("under the 64.0 MiB kept as a margin"))
        // A planned run that needs more than the disk has.
        let plan = PlannedFrames(frames: 100_000, bytesPerFrame: 50 << 20)
        let planned = HostRules.journal(folder, writer: service, plan: plan)
        #expect(planned.status == .problem && planned.summary.contains("a run of 100000 frames needs about 4.8 TiB"))
        #expect(HostRules.journal(folder, writer: service, plan: PlannedFrames(frames: .max)).summary.contains("needs more than any disk holds"))
        // The plan and the margin together: 4 GiB free is not room for 4 GiB of frames.
        #expect(HostRules.journal(folder, writer: service, plan: PlannedFrames(frames: 8, bytesPerFrame: gib / 2)).status == .problem)
        // A journal of root's, left by a daemon run with sudo.
        var left = folder
        left.files = [OwnedFile(path: "/var/lib/unleashed/journal.sqlite", ownership: owned),
                      OwnedFile(path: "/var/lib/unleashed/journal.sqlite-wal", ownership: FileOwnership(owner: 0, group: 0, groupName: "root", mode: 0o100644))]
        let rootOwned = HostRules.journal(left, writer: service, plan: nil)
        #expect(rootOwned.summary.hasPrefix("user unleashed may not write the journal's journal.sqlite-wal (group root, mode 644)"), "\(rootOwned.summary)")
        #expect(rootOwned.remedy == "sudo chown unleashed: /var/lib/unleashed/journal.sqlite*")
        #expect(HostRules.journal(folder, writer: service, plan: PlannedFrames(frames: 1000)).summary.hasSuffix("room for the 1000 frames (500.0 KiB)"))
    }

    @Test func clockSynchronisedAndTheRealTimeClock() {
        #expect(HostRules.clock(synchronised: true, maximumError: .milliseconds(12), realTimeClock: "rtc0, rtc_cmos").status == .ok)
        let noRTC = HostRules.clock(synchronised: true, maximumError: .milliseconds(12), realTimeClock: nil)
        #expect(noRTC.status == .warning && noRTC.summary.contains("no real-time clock"))
        let unsynchronised = HostRules.clock(synchronised: false, maximumError: .seconds(16), realTimeClock: "rtc0")
        #expect(unsynchronised.status == .warning && unsynchronised.summary.hasPrefix("the clock is not synchronised"))
        #expect(unsynchronised.remedy?.hasPrefix("`timedatectl` says whether a time service runs") == true)
        // An RTC's presence says nothing of its battery.
        #expect(HostRules.clock(synchronised: true, maximumError: .milliseconds(12), realTimeClock: "rtc0, rtc-rpi").summary
            .hasSuffix("a real-time clock (rtc0, rtc-rpi) keeps time while the machine is off, if it has a battery"))
    }

    @Test func certificateValidExpiringExpiredAndPlain() {
        let day: Int64 = 86_400
        let now: Int64 = 1_800_000_000
        let certificate = { (before: Int64, after: Int64) in
            CertificateObservation.valid("/etc/unleashed/web.pem", subject: "phone.test", notBefore: before, notAfter: after)
        }
        #expect(ServiceRules.webCertificate(certificate(now - day, now + 90 * day), now: now).summary.hasSuffix("is valid for 90 more days"))
        #expect(ServiceRules.webCertificate(certificate(now - day, now + 10 * day), now: now).status == .warning)
        let expired = ServiceRules.webCertificate(certificate(now - 90 * day, now - 2 * day), now: now)
        #expect(expired.status == .problem && expired.summary.contains("expired 2 days ago"))
        #expect(ServiceRules.webCertificate(certificate(now + day, now + 90 * day), now: now).summary.contains("not valid yet"))
        #expect(ServiceRules.webCertificate(.notConfigured(plainWeb: true), now: now).status == .warning)
        #expect(ServiceRules.webCertificate(.notConfigured(plainWeb: false), now: now).status == .skipped)
        #expect(ServiceRules.webCertificate(.unreadable("/x.pem", "it cannot be read"), now: now).status == .problem)
        #expect(ServiceRules.webCertificate(certificate(now - day, now + 3600), now: now).summary.hasSuffix("expires within a day"))
        #expect(ServiceRules.webCertificate(certificate(now - day, now - 3600), now: now).summary.contains("expired less than a day ago"))
        #expect(ServiceRules.webCertificate(.notReadableHere("/etc/unleashed/web.pem", user: "pi"), now: now).summary
            == "not checked: user pi may not read the web certificate /etc/unleashed/web.pem")
    }

    @Test func brokerStates() {
        #expect(ServiceRules.mqtt(.notConfigured).status == .skipped)
        #expect(ServiceRules.mqtt(.reached("mqtt://b:1883")).status == .ok)
        #expect(ServiceRules.mqtt(.unreachable("mqtt://b:1883", "connection refused")).summary == "the broker mqtt://b:1883 cannot be reached: connection refused")
        #expect(ServiceRules.mqtt(.refused("mqtt://b:1883", "not authorised", credentials: true)).remedy?.contains("mqtt.username") == true)
        #expect(ServiceRules.mqtt(.refused("mqtt://b:1883", "it is unavailable", credentials: false)).remedy == "the broker's log says why")
    }

    @Test func exitStatusIsTheWorstFinding() {
        let ok = Finding(.clock, .ok, "fine")
        #expect(DoctorReport(findings: [ok, Finding(.mqtt, .skipped, "none")]).exitStatus == 0)
        #expect(DoctorReport(findings: [ok, Finding(.daemon, .warning, "none runs")]).exitStatus == 1)
        #expect(DoctorReport(findings: [Finding(.daemon, .warning, "w"), Finding(.bluez, .problem, "p")]).exitStatus == 2)
        #expect(DoctorReport(findings: [Finding(.bluez, .problem, "p")]).json
            == .object(["status": .string("problem"), "checks": .array([.object(["check": .string("bluez"), "status": .string("problem"), "summary": .string("p")])])]))
    }
}
