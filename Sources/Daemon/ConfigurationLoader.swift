import Foundation

extension DaemonConfiguration {
    /// The environment variables that override the files, and the key each one sets.
    public static let environmentOverrides: [(variable: String, key: [String])] = [
        ("UNLEASHED_BACKEND", ["backend"]),
        ("UNLEASHED_ADAPTER", ["adapter"]),
        ("UNLEASHED_PORT", ["port"]),
        ("UNLEASHED_CAMERA_MODEL", ["camera_model"]),
        ("UNLEASHED_SOCKET", ["daemon", "socket"]),
        ("UNLEASHED_LISTEN", ["daemon", "listen"]),
        ("UNLEASHED_JOURNAL", ["daemon", "journal"]),
        ("UNLEASHED_WEB", ["web", "listen"]),
    ]

    /// The files a daemon of `scope` reads, earliest first: the system file, then for a user
    /// `$XDG_CONFIG_HOME/unleashed/config.toml` (else `~/.config/unleashed/config.toml`).
    public static func files(scope: Scope, environment: [String: String]) -> [String] {
        let system = "/etc/unleashed/unleashed.toml"
        guard scope == .user else { return [system] }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return [system, config + "/unleashed/config.toml"] }
        guard let home = environment["HOME"], !home.isEmpty else { return [system] }
        return [system, home + "/.config/unleashed/config.toml"]
    }

    /// Loads the configuration: defaults for `scope`, then each of `files` that exists (later
    /// ones overriding earlier ones key by key), then the variables of ``environmentOverrides``.
    ///
    /// A missing file is skipped, unless `requireFiles` (a file named on the command line,
    /// which a typo must not turn into the defaults); one that exists but cannot be read or
    /// parsed is an error, as is any unknown key, since a daemon that ignores a mistyped key
    /// runs with a setting its owner did not choose.
    public static func load(files: [String], environment: [String: String], scope: Scope,
                            requireFiles: Bool = false) throws(ConfigurationError) -> DaemonConfiguration {
        var root = ConfigurationNode(value: .table([]), origin: ValueOrigin(name: files.last ?? "configuration", line: nil))
        for file in files {
            guard let text = try readFile(file) else {
                if requireFiles { throw ConfigurationError(origin: file, problem: .unreadable("no such file")) }
                continue
            }
            root = root.merged(with: try ConfigurationNode.parse(text, file: file))
        }
        for (variable, key) in environmentOverrides {
            guard let value = environment[variable], !value.isEmpty else { continue }
            let origin = ValueOrigin(name: "environment variable \(variable)", line: nil)
            root = root.merged(with: .override(key, with: value, origin: origin))
        }
        return try decode(root, defaults: defaults(scope: scope, environment: environment))
    }

    /// The text of `file`, or nil when there is no such file.
    static func readFile(_ file: String) throws(ConfigurationError) -> String? {
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &folder) else { return nil }
        // Foundation's own words for a folder read as a file name no cause ("error 256").
        guard !folder.boolValue else { throw ConfigurationError(origin: file, problem: .unreadable("it is a folder, not a file")) }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ConfigurationError(origin: file, problem: .unreadable(readFailure(error)))
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigurationError(origin: file, problem: .unreadable("it is not UTF-8 text"))
        }
        return text
    }

    private static func readFailure(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain, let code = POSIXErrorCode(rawValue: Int32(underlying.code)) {
            return String(cString: strerror(code.rawValue))
        }
        // Foundation on Linux reports a refusal without the errno: say it as the system does.
        if (error as? CocoaError)?.code == .fileReadNoPermission { return String(cString: strerror(EACCES)) }
        return error.localizedDescription
    }
}
