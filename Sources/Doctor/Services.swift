/// The web listener's certificate, as read from its file.
public enum CertificateObservation: Sendable, Equatable {
    /// No `[web]` listener, or one without a certificate (`plainWeb`: it listens over plain HTTP).
    case notConfigured(plainWeb: Bool)
    /// The file could not be read or is not a PEM certificate.
    case unreadable(String, String)
    /// This user may not read it (the daemon's user may): its validity is not known here.
    case notReadableHere(String, user: String)
    /// The first certificate of the chain: its validity, in seconds since 1970.
    case valid(String, subject: String, notBefore: Int64, notAfter: Int64)
}

/// The MQTT broker, as one connection attempt found it.
public enum BrokerObservation: Sendable, Equatable {
    case notConfigured
    /// It took the connection and accepted the session.
    case reached(String)
    /// No connection, or no answer in time.
    case unreachable(String, String)
    /// It answered, and refused the session: `credentials` when the user name and password
    /// (or what they may do) are the cause.
    case refused(String, String, credentials: Bool)
}

/// Checks of what the daemon serves or reaches: its configuration, the web certificate, MQTT.
public enum ServiceRules {
    /// Whether the configuration files parse: every later check reads them. `deniedTo`: the
    /// user running the check may not read a file (or a secret it names) that the daemon may.
    public static func configuration(files: [String], error: String?, deniedTo user: String? = nil) -> Finding {
        if let error, let user {
            return Finding(.configuration, .warning, "not checked, nor what depends on it: user \(user) may not read the configuration or a file it names (\(error))",
                           remedy: "sudo unleashed doctor; or sudo adduser \(user) unleashed, then log out and in again")
        }
        if let error {
            return Finding(.configuration, .problem, error, remedy: "fix the file (docs/configuration.md lists every key); the daemon will not start until then")
        }
        guard !files.isEmpty else {
            return Finding(.configuration, .ok, "no configuration file: the defaults apply")
        }
        return Finding(.configuration, .ok, "read " + files.joined(separator: ", "))
    }

    /// Browsers refuse an expired certificate outright; a warning a month before leaves time to
    /// renew one that is not renewed by itself.
    public static let expiryWarning: Int64 = 30 * 86_400

    /// Whether the web listener's certificate is valid at `now` (seconds since 1970), and for how long.
    public static func webCertificate(_ observation: CertificateObservation, now: Int64) -> Finding {
        switch observation {
        case .notConfigured(let plainWeb):
            return plainWeb
                ? Finding(.webCertificate, .warning, "the web app listens over plain HTTP: a phone's wake lock, notifications and its clock need HTTPS",
                          remedy: "set web.certificate and web.key (docs/web-app.md, \"HTTPS\")")
                : Finding(.webCertificate, .skipped, "no web listener is configured")
        case .unreadable(let path, let reason):
            return Finding(.webCertificate, .problem, "the web certificate \(path) cannot be used: \(reason); the daemon will not start",
                           remedy: "point web.certificate at a PEM certificate the daemon's user can read")
        case .notReadableHere(let path, let user):
            return Finding(.webCertificate, .warning, "not checked: user \(user) may not read the web certificate \(path)",
                           remedy: "sudo unleashed doctor")
        case .valid(let path, let subject, let notBefore, let notAfter):
            let days = (notAfter - now) / 86_400
            if now > notAfter {
                let ago = (now - notAfter) / 86_400
                let when = ago == 0 ? "less than a day ago" : "\(ago) day\(ago == 1 ? "" : "s") ago"
                return Finding(.webCertificate, .problem, "the web certificate \(path) (\(subject)) expired \(when): browsers refuse it",
                               remedy: "renew it and `sudo systemctl reload unleashed`")
            }
            if now < notBefore {
                return Finding(.webCertificate, .problem, "the web certificate \(path) (\(subject)) is not valid yet: is the clock right?",
                               remedy: "check `date`; see the clock check")
            }
            if notAfter - now < expiryWarning {
                let within = days == 0 ? "within a day" : "in \(days) day\(days == 1 ? "" : "s")"
                return Finding(.webCertificate, .warning, "the web certificate \(path) (\(subject)) expires \(within)",
                               remedy: "renew it and `sudo systemctl reload unleashed`")
            }
            return Finding(.webCertificate, .ok, "the web certificate \(path) (\(subject)) is valid for \(days) more days")
        }
    }

    /// What the checks that read the configuration say when it did not load.
    public static func notLoaded(_ check: Check) -> Finding {
        Finding(check, .skipped, "not checked: the configuration did not load")
    }

    public static func mqtt(_ observation: BrokerObservation) -> Finding {
        switch observation {
        case .notConfigured:
            return Finding(.mqtt, .skipped, "no MQTT broker is configured")
        case .reached(let broker):
            return Finding(.mqtt, .ok, "the broker \(broker) accepts the daemon's session")
        case .unreachable(let broker, let reason):
            return Finding(.mqtt, .problem, "the broker \(broker) cannot be reached: \(reason)",
                           remedy: "check that the broker runs and that this host reaches it (`mosquitto_sub -h HOST -p PORT -t '#' -C 1`)")
        case .refused(let broker, let reason, let credentials):
            return Finding(.mqtt, .problem, "the broker \(broker) refused the session: \(reason)",
                           remedy: credentials ? "check mqtt.username and mqtt.password_file against the broker's users and its ACL"
                                               : "the broker's log says why")
        }
    }
}
