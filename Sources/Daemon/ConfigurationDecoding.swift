import CameraKit
import CameraProtocols
import Foundation
import UnleashedAPI
import MQTT
import UnleashedKit

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
    /// Reads the merged tree over `defaults`: a key that is not written keeps its default.
    static func decode(_ root: ConfigurationNode, defaults: DaemonConfiguration) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = defaults
        let top = try TableReader(root, path: "", known: ["backend", "adapter", "port", "daemon", "modules", "groups", "reconnect", "tokens", "web", "downloads", "mqtt"])
        configuration.backend = try top.value("backend", hint: { "'\($0)' is not a backend; use unleashed or gphoto2" },
                                              Backend.init(rawValue:)) ?? defaults.backend
        configuration.adapter = try top.string("adapter") ?? defaults.adapter
        configuration.port = try top.string("port") ?? defaults.port
        if let node = top.node("daemon") {
            configuration.service = try decodeService(node, over: defaults.service)
        }
        if let node = top.node("web") {
            configuration.web = try decodeWeb(node, over: defaults.web)
        }
        if let node = top.node("mqtt") {
            configuration.mqtt = try decodeMQTT(node, over: defaults.mqtt)
        }
        if let node = top.node("downloads") {
            configuration.downloads = try decodeDownloads(node, over: defaults.downloads)
        }
        if let node = top.node("reconnect") {
            configuration.reconnect = try decodeReconnect(node, over: defaults.reconnect)
        }
        let modules = try top.tables("modules")
        configuration.modules = try modules.map { item throws(ConfigurationError) in try decodeModule(item.node, path: item.path) }
        try requireUniqueNames(modules, configuration.modules.map(\.name), what: "module")
        let groups = try top.tables("groups")
        let moduleNames = configuration.modules.map(\.name)
        configuration.groups = try groups.map { item throws(ConfigurationError) in
            try decodeGroup(item.node, path: item.path, modules: moduleNames)
        }
        try requireUniqueNames(groups, configuration.groups.map(\.name), what: "group")
        let tokens = try top.tables("tokens")
        configuration.tokens = try tokens.map { item throws(ConfigurationError) in try decodeToken(item.node, path: item.path) }
        try requireUniqueNames(tokens, configuration.tokens.map(\.name), what: "token")
        try requireUniqueSecrets(tokens, configuration.tokens)
        if configuration.mqtt.broker != nil {
            // On the broker a camera's name is one topic level: two names that map to one level
            // would be one camera to MQTT and Home Assistant.
            try requireUniqueNames(modules, configuration.modules.map(\.name), what: "module", by: MQTTTopics.level) { name, earlier, level in
                "'\(name)' is the same MQTT topic level as module '\(earlier)', '\(level)' (letters, digits, - and _ are kept, "
                    + "anything else becomes _); rename one, or the broker and Home Assistant would see one camera"
            }
        }
        return configuration
    }

    private static func decodeService(_ node: ConfigurationNode, over defaults: Service) throws(ConfigurationError) -> Service {
        let table = try TableReader(node, path: "daemon", known: ["socket", "socket_mode", "listen", "resume_runs", "journal", "locked", "peer_role"])
        var service = defaults
        service.socket = try table.string("socket") ?? defaults.socket
        service.journal = try table.string("journal") ?? defaults.journal
        service.resumeRuns = try table.bool("resume_runs") ?? defaults.resumeRuns
        service.locked = try table.bool("locked") ?? defaults.locked
        service.peerRole = try table.value("peer_role", hint: { "'\($0)' is not a role; use operator or viewer" },
                                           AccessToken.Role.init(rawValue:)) ?? defaults.peerRole
        service.listen = try table.value("listen", hint: { "'\($0)' is not a listening address; write it like 127.0.0.1:8080" },
                                         { ListenAddress($0) }) ?? defaults.listen
        if let node = table.node("socket_mode") {
            service.socketMode = try fileMode(node, table: table)
        }
        return service
    }

    private static func decodeWeb(_ node: ConfigurationNode, over defaults: Web) throws(ConfigurationError) -> Web {
        let table = try TableReader(node, path: "web", known: ["listen", "certificate", "key", "clients", "hosts"])
        var web = defaults
        web.listen = try table.value("listen", hint: { "'\($0)' is not a listening address; write it like 0.0.0.0:8080" },
                                     { ListenAddress($0, allowingAnyPort: true) }) ?? defaults.listen
        web.certificate = try table.string("certificate") ?? defaults.certificate
        web.key = try table.string("key") ?? defaults.key
        web.clients = try table.string("clients") ?? defaults.clients
        web.hosts = try table.strings("hosts") ?? defaults.hosts
        switch (web.certificate, web.key) {
        case (.some, nil):
            throw table.error("key", nil, .missingKey("a certificate needs its private key: key = \"/path/key.pem\""))
        case (nil, .some):
            throw table.error("certificate", nil, .missingKey("a key needs its certificate: certificate = \"/path/cert.pem\""))
        default:
            break
        }
        return web
    }

    private static func decodeMQTT(_ node: ConfigurationNode, over defaults: MQTTSettings) throws(ConfigurationError) -> MQTTSettings {
        let table = try TableReader(node, path: "mqtt", known: [
            "broker", "client_id", "username", "password", "password_file", "ca_file", "topic_prefix", "node",
            "discovery", "discovery_prefix",
        ])
        var mqtt = defaults
        mqtt.broker = try table.value("broker", hint: {
            "'\($0)' is not a broker address; write it like mqtt://broker.local:1883 or mqtts://broker.local:8883"
        }, BrokerAddress.init) ?? defaults.broker
        guard mqtt.broker != nil else {
            throw table.error("broker", nil, .missingKey("[mqtt] needs its broker: broker = \"mqtt://broker.local:1883\""))
        }
        if let id = try table.string("client_id") {
            guard !id.isEmpty, id.utf8.count <= 65535 else { throw table.error("client_id", table.node("client_id"), .invalidValue("the client id is empty")) }
            mqtt.clientID = id
        }
        mqtt.username = try table.string("username") ?? defaults.username
        switch (try table.string("password"), try table.string("password_file")) {
        case (let password?, nil): mqtt.password = password
        case (nil, let file?): mqtt.password = try readSecretFile(file, what: "password", key: "password_file", carrier: "an MQTT login", table: table)
        case (.some, .some): throw table.error("password_file", table.node("password_file"), .invalidValue("give password or password_file, not both"))
        case (nil, nil): break
        }
        if mqtt.password != nil, mqtt.username == nil {
            throw table.error("username", nil, .missingKey("a password needs its username: username = \"camera-host\""))
        }
        mqtt.caFile = try table.string("ca_file") ?? defaults.caFile
        if mqtt.caFile != nil, mqtt.broker?.tls == false {
            throw table.error("ca_file", table.node("ca_file"), .invalidValue("a CA file is for TLS: write the broker as mqtts://"))
        }
        for (key, hint) in [("topic_prefix", "like unleashed or studio/cameras"), ("discovery_prefix", "like homeassistant")] {
            guard let prefix = try table.string(key) else { continue }
            guard MQTTSettings.isTopicPrefix(prefix) else {
                throw table.error(key, table.node(key), .invalidValue("'\(prefix)' is not a topic prefix: no +, # or empty levels, \(hint)"))
            }
            if key == "topic_prefix" { mqtt.topicPrefix = prefix } else { mqtt.discoveryPrefix = prefix }
        }
        if let name = try table.string("node") {
            guard MQTTSettings.isNodeName(name) else {
                throw table.error("node", table.node("node"), .invalidValue(
                    "'\(name)' is not a node name: letters, digits, - and _ only (it is one topic level and part of Home Assistant's ids)"))
            }
            mqtt.node = name
        }
        mqtt.discovery = try table.bool("discovery") ?? defaults.discovery
        return mqtt
    }

    private static func decodeDownloads(_ node: ConfigurationNode, over defaults: Downloads) throws(ConfigurationError) -> Downloads {
        let table = try TableReader(node, path: "downloads", known: ["folder", "template", "delete_from_camera"])
        var downloads = defaults
        downloads.folder = try table.string("folder") ?? defaults.folder
        if let text = try table.string("template") {
            do throws(FilenameTemplateError) {
                downloads.template = try FilenameTemplate(parsing: text)
            } catch {
                throw table.error("template", table.node("template"), .invalidValue(error.description))
            }
        }
        downloads.deleteFromCamera = try table.bool("delete_from_camera") ?? defaults.deleteFromCamera
        if downloads.folder == nil, table.node("template") != nil || table.node("delete_from_camera") != nil {
            throw table.error("folder", nil, .missingKey("the pictures need a folder: folder = \"/var/lib/unleashed/pictures\""))
        }
        return downloads
    }

    /// A mode written as a TOML octal integer (`0o660`) or as octal digits in a string (`"0660"`).
    private static func fileMode(_ node: ConfigurationNode, table: TableReader) throws(ConfigurationError) -> Int {
        let mode: Int?
        let written: String
        switch node.value {
        case .integer(let number):
            mode = number
            written = String(number)
        case .string(let text):
            mode = text.allSatisfy { ("0"..."7").contains($0) } ? Int(text, radix: 8) : nil
            written = text
        default:
            throw table.error("socket_mode", node, .wrongType(expected: "an octal mode like 0o660", found: node.typeName))
        }
        guard let mode, (0...0o777).contains(mode) else {
            throw table.error("socket_mode", node, .invalidValue(
                "'\(written)' is not a file mode; write it in octal like 0o660 or \"0660\""))
        }
        return mode
    }

    private static func decodeReconnect(_ node: ConfigurationNode, over defaults: ReconnectPolicy) throws(ConfigurationError) -> ReconnectPolicy {
        let table = try TableReader(node, path: "reconnect", known: ["initial_delay", "max_delay", "give_up_after"])
        var policy = defaults
        policy.initialDelay = try table.duration("initial_delay") ?? defaults.initialDelay
        policy.maximumDelay = try table.duration("max_delay") ?? defaults.maximumDelay
        policy.giveUpAfter = try table.duration("give_up_after") ?? defaults.giveUpAfter
        guard policy.initialDelay > .zero else {
            throw table.error("initial_delay", table.node("initial_delay"), .invalidValue("must be longer than 0"))
        }
        guard policy.maximumDelay >= policy.initialDelay else {
            throw table.error("max_delay", table.node("max_delay") ?? table.node("initial_delay"), .invalidValue(
                "\(policy.maximumDelay.compactText) is shorter than initial_delay (\(policy.initialDelay.compactText))"))
        }
        return policy
    }

    private static func decodeModule(_ node: ConfigurationNode, path: String) throws(ConfigurationError) -> Module {
        let table = try TableReader(node, path: path, known: ["name", "address", "adapter", "brand"])
        guard let name = try table.string("name"), !name.isEmpty else {
            throw table.error("name", table.node("name"), .missingKey("every module needs a name"))
        }
        guard let address = try table.value("address", hint: {
            "'\($0)' is not a Bluetooth address; write it like AA:BB:CC:DD:EE:FF"
        }, bluetoothAddress) else {
            throw table.error("address", nil, .missingKey("every module needs its Bluetooth address"))
        }
        let brand = try table.value("brand", hint: {
            "'\($0)' is not a brand this daemon drives; use " + CameraBrand.allCases.map(\.rawValue).joined(separator: ", ")
        }, { CameraBrand(rawValue: $0.lowercased()) })
        return Module(name: name, address: address, adapter: try table.string("adapter"), brand: brand)
    }

    /// A group names configured modules, each once: a rig with a typo in it would fire fewer
    /// cameras than its owner expects.
    private static func decodeGroup(_ node: ConfigurationNode, path: String, modules: [String]) throws(ConfigurationError) -> Group {
        let table = try TableReader(node, path: path, known: ["name", "cameras"])
        guard let name = try table.string("name"), !name.isEmpty else {
            throw table.error("name", table.node("name"), .missingKey("every group needs a name"))
        }
        guard let cameras = try table.strings("cameras"), !cameras.isEmpty else {
            throw table.error("cameras", table.node("cameras"), .missingKey("a group lists its modules' names, like cameras = [\"left\", \"right\"]"))
        }
        for camera in cameras where !modules.contains(camera) {
            let known = modules.isEmpty ? "no [[modules]] are configured" : "configured: " + modules.joined(separator: ", ")
            throw table.error("cameras", table.node("cameras"), .invalidValue("'\(camera)' is not a configured module (\(known))"))
        }
        if let repeated = cameras.first(where: { name in cameras.count { $0 == name } > 1 }) {
            throw table.error("cameras", table.node("cameras"), .invalidValue("'\(repeated)' is listed twice"))
        }
        return Group(name: name, cameras: cameras)
    }

    private static func decodeToken(_ node: ConfigurationNode, path: String) throws(ConfigurationError) -> AccessToken {
        let table = try TableReader(node, path: path, known: ["name", "token", "token_file", "role"])
        guard let name = try table.string("name"), !name.isEmpty else {
            throw table.error("name", table.node("name"), .missingKey("every token needs a name"))
        }
        let role = try table.value("role", hint: { "'\($0)' is not a role; use operator or viewer" },
                                   AccessToken.Role.init(rawValue:)) ?? .viewer
        let secret: String
        switch (try table.string("token"), try table.string("token_file")) {
        case (let token?, nil):
            guard !hasSurroundingWhitespace(token) else {
                throw table.error("token", table.node("token"), .invalidValue(
                    "the token starts or ends with white space, which a client's Authorization header cannot carry; remove it"))
            }
            secret = token
        case (nil, let file?):
            secret = try readSecretFile(file, what: "token", key: "token_file", carrier: "a client's Authorization header", table: table)
        case (.some, .some):
            throw table.error("token_file", table.node("token_file"), .invalidValue("give token or token_file, not both"))
        case (nil, nil):
            throw table.error("token", nil, .missingKey("give the secret as token or token_file"))
        }
        guard secret.count >= 16 else {
            throw table.error(table.node("token") == nil ? "token_file" : "token", table.node("token") ?? table.node("token_file"),
                              .invalidValue("a token needs at least 16 characters to be hard to guess"))
        }
        return AccessToken(name: name, secret: secret, role: role)
    }

    /// The secret in a token file, its one line ending dropped. A relative path is taken from
    /// the folder of the configuration file that names it, however that file was named: a
    /// relative path, or a symbolic link (the folder of the file it points to).
    /// A secret (`what`: a token, a password) kept in a file of its own (`key` names it): the
    /// file holds the secret and at most one line ending; a relative path is taken from the
    /// configuration file's folder. `carrier` says what carries the secret, and so why white
    /// space cannot be part of it.
    private static func readSecretFile(_ file: String, what: String, key: String, carrier: String,
                                       table: TableReader) throws(ConfigurationError) -> String {
        let node = table.node(key)
        var path = file
        if !path.hasPrefix("/"), let origin = node?.origin.name {
            path = folder(of: origin).appendingPathComponent(file).path
        }
        let text: String?
        do throws(ConfigurationError) {
            text = try readFile(path)
        } catch {
            throw table.error(key, node, .invalidValue("\(path): \(error.message)"))
        }
        guard var secret = text else { throw table.error(key, node, .invalidValue("\(path): no such file")) }
        // "\r\n" is one Character, removed whole.
        if secret.hasSuffix("\n") || secret.hasSuffix("\r\n") { secret.removeLast() }
        guard !hasSurroundingWhitespace(secret) else {
            throw table.error(key, node, .invalidValue(
                "\(path): the \(what) starts or ends with white space (or has more than one line), which \(carrier) "
                    + "cannot carry; the file holds the \(what) and at most one line ending"))
        }
        return secret
    }

    /// The folder `file` is in, as an absolute path with symbolic links resolved; a relative
    /// `file` is taken from the working directory, as it was when the file was read.
    private static func folder(of file: String) -> URL {
        guard let resolved = realpath(file, nil) else { return URL(fileURLWithPath: file).deletingLastPathComponent() }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved)).deletingLastPathComponent()
    }

    /// Whether `text` starts or ends with white space or a line break: HTTP drops it around a
    /// header's value, so a client could not present the secret.
    private static func hasSurroundingWhitespace(_ text: String) -> Bool {
        guard let first = text.first, let last = text.last else { return false }
        return first.isWhitespace || last.isWhitespace
    }

    /// Fails on the second of two tokens with the same secret: a client is known by its secret,
    /// so the two could not be told apart, and revoking one would leave the other's holder in.
    private static func requireUniqueSecrets(_ items: [(path: String, node: ConfigurationNode)],
                                             _ tokens: [AccessToken]) throws(ConfigurationError) {
        for (index, token) in tokens.enumerated() {
            guard let earlier = tokens[..<index].first(where: { $0.secret == token.secret }) else { continue }
            guard case .table(let entries) = items[index].node.value,
                  let entry = entries.first(where: { $0.key == "token" || $0.key == "token_file" }) else { continue }
            throw ConfigurationError(origin: entry.node.origin.name, line: entry.node.origin.line, key: "\(items[index].path).\(entry.key)",
                                     problem: .invalidValue("token '\(token.name)' has the same secret as token '\(earlier.name)'; "
                                         + "give each token a secret of its own"))
        }
    }

    /// Fails on the second of two entries of `items` with the same name, since a name is how
    /// clients pick a module or how logs name a token.
    /// `key` compares names as something else sees them (an MQTT topic level); `problem` says
    /// what is wrong with a name whose key is taken.
    private static func requireUniqueNames(_ items: [(path: String, node: ConfigurationNode)], _ names: [String],
                                           what: String, by key: (String) -> String = { $0 },
                                           problem: ((_ name: String, _ earlier: String, _ key: String) -> String)? = nil) throws(ConfigurationError) {
        var seen: [String: String] = [:]
        for (item, name) in zip(items, names) {
            guard let earlier = seen[key(name)] else {
                seen[key(name)] = name
                continue
            }
            guard case .table(let entries) = item.node.value, let node = entries.first(where: { $0.key == "name" })?.node else { continue }
            throw ConfigurationError(origin: node.origin.name, line: node.origin.line, key: "\(item.path).name",
                                     problem: .invalidValue(problem?(name, earlier, key(name)) ?? "another \(what) is already named '\(name)'"))
        }
    }
}

/// `text` as a Bluetooth address in upper case (`AA:BB:CC:DD:EE:FF`), or nil when it is not one.
func bluetoothAddress(_ text: String) -> String? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
    return text.uppercased()
}
