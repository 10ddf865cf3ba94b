public import JSON

/// What one check of `unleashed doctor` found: a status, what it saw in plain words, and what
/// to do about it. Plain values, so that every rule is tested on its own without the system it
/// reads.
public struct Finding: Sendable, Equatable {
    /// How much a finding matters, in rising order.
    public enum Status: String, Sendable, Comparable, CaseIterable {
        /// Nothing to check here: the feature is not set up (no MQTT broker, no web certificate).
        case skipped
        /// As it should be.
        case ok
        /// Works today, but worth a look: it may fail later, or only some uses need it.
        case warning
        /// Something the tool needs is wrong: a command that relies on it will fail.
        case problem

        public static func < (lhs: Status, rhs: Status) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    public var check: Check
    public var status: Status
    /// What the check saw, in a sentence.
    public var summary: String
    /// What to do about it; nil when nothing needs doing.
    public var remedy: String?

    public init(_ check: Check, _ status: Status, _ summary: String, remedy: String? = nil) {
        self.check = check
        self.status = status
        self.summary = summary
        self.remedy = remedy
    }

    /// The finding as `--json` prints it.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["check": .string(check.rawValue), "status": .string(status.rawValue),
                                           "summary": .string(summary)]
        if let remedy { object["remedy"] = .string(remedy) }
        return .object(object)
    }
}

/// The checks, in the order they are made and printed: each name is stable, for scripts that
/// read `--json`.
public enum Check: String, Sendable, CaseIterable {
    case configuration
    case bluez
    case bluetoothAccess = "bluetooth-access"
    case adapter
    case modules
    case usbCameras = "usb-cameras"
    case daemon
    case journal
    case clock
    case webCertificate = "web-certificate"
    case mqtt
}

/// All the findings of one `unleashed doctor`, and the exit status they make.
public struct DoctorReport: Sendable, Equatable {
    public var findings: [Finding]

    public init(findings: [Finding]) {
        self.findings = findings
    }

    /// The worst status found; ``Finding/Status/ok`` when nothing was checked.
    public var worst: Finding.Status { findings.map(\.status).max().map { max($0, .ok) } ?? .ok }

    /// 0 when nothing is wrong, 1 when something is worth a look (warnings only), 2 when
    /// something is wrong. Documented in `unleashed doctor --help` and docs/user-guide.md.
    public var exitStatus: Int32 {
        switch worst {
        case .skipped, .ok: 0
        case .warning: 1
        case .problem: 2
        }
    }

    public var json: JSONValue {
        .object(["status": .string(worst.rawValue), "checks": .array(findings.map(\.json))])
    }
}
