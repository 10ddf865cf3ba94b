import Foundation
import JSON
import MQTT
import UnleashedAPI
import UnleashedKit

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
    /// Reads the merged tree over `defaults`: a key that is not written keeps its default.
    ///
    /// ``StrictJSONDecoder``, the one reader of what comes from outside, reads the tables
    /// (``ConfigurationFile``): each value's type and grammar, and keys nobody reads. The rules
    /// between keys and between tables are checked here. Either way the error names the file,
    /// line and dotted key that need fixing.
    static func decode(_ root: ConfigurationNode, defaults: DaemonConfiguration) throws(ConfigurationError) -> DaemonConfiguration {
        let file: ConfigurationFile
        do throws(JSONDecodingFailure) {
            file = try StrictJSONDecoder().decodeLocatingFailure(ConfigurationFile.self, from: root.json)
        } catch {
            throw ConfigurationError(error, in: root)
        }
        let top = TablePlace(root: root, path: [])
        var configuration = defaults
        configuration.backend = file.backend?.value ?? defaults.backend
        configuration.adapter = file.adapter ?? defaults.adapter
        configuration.port = file.port ?? defaults.port
        configuration.cameraModel = file.cameraModel ?? defaults.cameraModel
        if let table = file.daemon {
            configuration.service = service(table, over: defaults.service)
        }
        if let table = file.web {
            configuration.web = try web(table, over: defaults.web, at: top.table("web"))
        }
        if let table = file.mqtt {
            configuration.mqtt = try mqtt(table, over: defaults.mqtt, at: top.table("mqtt"))
        }
        if let table = file.downloads {
            configuration.downloads = try downloads(table, over: defaults.downloads, at: top.table("downloads"))
        }
        if let table = file.reconnect {
            configuration.reconnect = try reconnect(table, over: defaults.reconnect, at: top.table("reconnect"))
        }
        let moduleTables = file.modules?.tables ?? []
        let modulePlaces = top.tables("modules", count: moduleTables.count)
        configuration.modules = try zip(moduleTables, modulePlaces).map { table, place throws(ConfigurationError) in try module(table, at: place) }
        try requireUniqueNames(modulePlaces, configuration.modules.map(\.name), what: "module")
        let groupTables = file.groups?.tables ?? []
        let groupPlaces = top.tables("groups", count: groupTables.count)
        let moduleNames = configuration.modules.map(\.name)
        configuration.groups = try zip(groupTables, groupPlaces).map { table, place throws(ConfigurationError) in
            try group(table, at: place, modules: moduleNames)
        }
        try requireUniqueNames(groupPlaces, configuration.groups.map(\.name), what: "group")
        let tokenTables = file.tokens?.tables ?? []
        let tokenPlaces = top.tables("tokens", count: tokenTables.count)
        configuration.tokens = try zip(tokenTables, tokenPlaces).map { table, place throws(ConfigurationError) in try token(table, at: place) }
        try requireUniqueNames(tokenPlaces, configuration.tokens.map(\.name), what: "token")
        try requireUniqueSecrets(tokenPlaces, configuration.tokens)
        if configuration.mqtt.broker != nil {
            // On the broker a camera's name is one topic level: two names that map to one level
            // would be one camera to MQTT and Home Assistant.
            try requireUniqueNames(modulePlaces, configuration.modules.map(\.name), what: "module", by: MQTTTopics.level) { name, earlier, level in
                "'\(name)' is the same MQTT topic level as module '\(earlier)', '\(level)' (letters, digits, - and _ are kept, "
                    + "anything else becomes _); rename one, or the broker and Home Assistant would see one camera"
            }
        }
        return configuration
    }

    private static func service(_ table: ConfigurationFile.DaemonTable, over defaults: Service) -> Service {
        var service = defaults
        service.socket = table.socket ?? defaults.socket
        service.socketMode = table.socketMode?.bits ?? defaults.socketMode
        service.listen = table.listen?.value ?? defaults.listen
        service.resumeRuns = table.resumeRuns ?? defaults.resumeRuns
        service.journal = table.journal ?? defaults.journal
        service.locked = table.locked ?? defaults.locked
        service.peerRole = table.peerRole?.value ?? defaults.peerRole
        return service
    }

    private static func web(_ table: ConfigurationFile.WebTable, over defaults: Web, at place: TablePlace) throws(ConfigurationError) -> Web {
        var web = defaults
        web.listen = table.listen?.value ?? defaults.listen
        web.certificate = table.certificate ?? defaults.certificate
        web.key = table.key ?? defaults.key
        web.clients = table.clients ?? defaults.clients
        web.hosts = table.hosts?.strings ?? defaults.hosts
        switch (web.certificate, web.key) {
        case (.some, nil):
            throw place.error("key", .missingKey("a certificate needs its private key: key = \"/path/key.pem\""))
        case (nil, .some):
            throw place.error("certificate", .missingKey("a key needs its certificate: certificate = \"/path/cert.pem\""))
        default:
            break
        }
        return web
    }

    private static func mqtt(_ table: ConfigurationFile.MQTTTable, over defaults: MQTTSettings,
                             at place: TablePlace) throws(ConfigurationError) -> MQTTSettings {
        var mqtt = defaults
        mqtt.broker = table.broker?.value ?? defaults.broker
        guard mqtt.broker != nil else {
            throw place.error("broker", .missingKey("[mqtt] needs its broker: broker = \"mqtt://broker.local:1883\""))
        }
        mqtt.clientID = table.clientID?.value ?? defaults.clientID
        mqtt.username = table.username ?? defaults.username
        switch (table.password, table.passwordFile) {
        case (let password?, nil): mqtt.password = password
        case (nil, let file?): mqtt.password = try readSecretFile(file, what: "password", key: "password_file", carrier: "an MQTT login", in: place)
        case (.some, .some): throw place.error("password_file", .invalidValue("give password or password_file, not both"))
        case (nil, nil): break
        }
        if mqtt.password != nil, mqtt.username == nil {
            throw place.error("username", .missingKey("a password needs its username: username = \"camera-host\""))
        }
        mqtt.caFile = table.caFile ?? defaults.caFile
        if mqtt.caFile != nil, mqtt.broker?.tls == false {
            throw place.error("ca_file", .invalidValue("a CA file is for TLS: write the broker as mqtts://"))
        }
        mqtt.topicPrefix = table.topicPrefix?.value ?? defaults.topicPrefix
        mqtt.node = table.node?.value ?? defaults.node
        mqtt.discovery = table.discovery ?? defaults.discovery
        mqtt.discoveryPrefix = table.discoveryPrefix?.value ?? defaults.discoveryPrefix
        return mqtt
    }

    private static func downloads(_ table: ConfigurationFile.DownloadsTable, over defaults: Downloads,
                                  at place: TablePlace) throws(ConfigurationError) -> Downloads {
        var downloads = defaults
        downloads.folder = table.folder ?? defaults.folder
        downloads.template = table.template?.template ?? defaults.template
        downloads.deleteFromCamera = table.deleteFromCamera ?? defaults.deleteFromCamera
        if downloads.folder == nil, table.template != nil || table.deleteFromCamera != nil {
            throw place.error("folder", .missingKey("the pictures need a folder: folder = \"/var/lib/unleashed/pictures\""))
        }
        return downloads
    }

    private static func reconnect(_ table: ConfigurationFile.ReconnectTable, over defaults: ReconnectPolicy,
                                  at place: TablePlace) throws(ConfigurationError) -> ReconnectPolicy {
        var policy = defaults
        policy.initialDelay = table.initialDelay?.value ?? defaults.initialDelay
        policy.maximumDelay = table.maxDelay?.value ?? defaults.maximumDelay
        policy.giveUpAfter = table.giveUpAfter?.value ?? defaults.giveUpAfter
        guard policy.initialDelay > .zero else {
            throw place.error("initial_delay", .invalidValue("must be longer than 0"))
        }
        guard policy.maximumDelay >= policy.initialDelay else {
            // Without a max_delay of its own, the initial_delay that outgrew the default is the one to change.
            throw place.error("max_delay", .invalidValue(
                "\(policy.maximumDelay.compactText) is shorter than initial_delay (\(policy.initialDelay.compactText))"),
                              placedAt: ["max_delay", "initial_delay"])
        }
        return policy
    }

    private static func module(_ table: ConfigurationFile.ModuleTable, at place: TablePlace) throws(ConfigurationError) -> Module {
        guard let name = table.name, !name.isEmpty else {
            throw place.error("name", .missingKey("every module needs a name"))
        }
        guard let address = table.address?.value else {
            throw place.error("address", .missingKey("every module needs its Bluetooth address"))
        }
        return Module(name: name, address: address, adapter: table.adapter, brand: table.brand?.value)
    }

    /// A group names configured modules, each once: a rig with a typo in it would fire fewer
    /// cameras than its owner expects.
    private static func group(_ table: ConfigurationFile.GroupTable, at place: TablePlace, modules: [String]) throws(ConfigurationError) -> Group {
        guard let name = table.name, !name.isEmpty else {
            throw place.error("name", .missingKey("every group needs a name"))
        }
        guard let cameras = table.cameras?.strings, !cameras.isEmpty else {
            throw place.error("cameras", .missingKey("a group lists its modules' names, like cameras = [\"left\", \"right\"]"))
        }
        for camera in cameras where !modules.contains(camera) {
            let known = modules.isEmpty ? "no [[modules]] are configured" : "configured: " + modules.joined(separator: ", ")
            throw place.error("cameras", .invalidValue("'\(camera)' is not a configured module (\(known))"))
        }
        if let repeated = cameras.first(where: { name in cameras.count { $0 == name } > 1 }) {
            throw place.error("cameras", .invalidValue("'\(repeated)' is listed twice"))
        }
        return Group(name: name, cameras: cameras)
    }

    private static func token(_ table: ConfigurationFile.TokenTable, at place: TablePlace) throws(ConfigurationError) -> AccessToken {
        guard let name = table.name, !name.isEmpty else {
            throw place.error("name", .missingKey("every token needs a name"))
        }
        let role = table.role?.value ?? .viewer
        let secret: String
        switch (table.token, table.tokenFile) {
        case (let token?, nil):
            guard !hasSurroundingWhitespace(token) else {
                throw place.error("token", .invalidValue(
                    "the token starts or ends with white space, which a client's Authorization header cannot carry; remove it"))
            }
            secret = token
        case (nil, let file?):
            secret = try readSecretFile(file, what: "token", key: "token_file", carrier: "a client's Authorization header", in: place)
        case (.some, .some):
            throw place.error("token_file", .invalidValue("give token or token_file, not both"))
        case (nil, nil):
            throw place.error("token", .missingKey("give the secret as token or token_file"))
        }
        guard secret.count >= 16 else {
            throw place.error(table.token == nil ? "token_file" : "token", .invalidValue("a token needs at least 16 characters to be hard to guess"))
        }
        return AccessToken(name: name, secret: secret, role: role)
    }

    /// A secret (`what`: a token, a password) kept in a file of its own (`key` names it): the
    /// file holds the secret and at most one line ending, dropped. A relative path is taken from
    /// the folder of the configuration file that names it, however that file was named: a
    /// relative path, or a symbolic link (the folder of the file it points to). `carrier` says
    /// what carries the secret, and so why white space cannot be part of it.
    private static func readSecretFile(_ file: String, what: String, key: String, carrier: String,
                                       in place: TablePlace) throws(ConfigurationError) -> String {
        var path = file
        if !path.hasPrefix("/"), let origin = place.node(key)?.origin.name {
            path = folder(of: origin).appendingPathComponent(file).path
        }
        let text: String?
        do throws(ConfigurationError) {
            text = try readFile(path)
        } catch {
            throw place.error(key, .invalidValue("\(path): \(error.message)"))
        }
        guard var secret = text else { throw place.error(key, .invalidValue("\(path): no such file")) }
        // "\r\n" is one Character, removed whole.
        if secret.hasSuffix("\n") || secret.hasSuffix("\r\n") { secret.removeLast() }
        guard !hasSurroundingWhitespace(secret) else {
            throw place.error(key, .invalidValue(
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
    private static func requireUniqueSecrets(_ places: [TablePlace], _ tokens: [AccessToken]) throws(ConfigurationError) {
        for (index, token) in tokens.enumerated() {
            guard let earlier = tokens[..<index].first(where: { $0.secret == token.secret }) else { continue }
            let key = places[index].node("token") == nil ? "token_file" : "token"
            throw places[index].error(key, .invalidValue("token '\(token.name)' has the same secret as token '\(earlier.name)'; "
                + "give each token a secret of its own"))
        }
    }

    /// Fails on the second of two entries (`places`) with the same name, since a name is how
    /// clients pick a module or how logs name a token.
    /// `key` compares names as something else sees them (an MQTT topic level); `problem` says
    /// what is wrong with a name whose key is taken.
    private static func requireUniqueNames(_ places: [TablePlace], _ names: [String],
                                           what: String, by key: (String) -> String = { $0 },
                                           problem: ((_ name: String, _ earlier: String, _ key: String) -> String)? = nil) throws(ConfigurationError) {
        var seen: [String: String] = [:]
        for (place, name) in zip(places, names) {
            guard let earlier = seen[key(name)] else {
                seen[key(name)] = name
                continue
            }
            throw place.error("name", .invalidValue(problem?(name, earlier, key(name)) ?? "another \(what) is already named '\(name)'"))
        }
    }
}

/// A table of the configuration by its path, to place an error that the decoder cannot see (a
/// rule between keys, a file a key names) at the file and line that wrote the key.
struct TablePlace {
    let root: ConfigurationNode
    let path: [JSONPathStep]

    /// The table `key` of this one.
    func table(_ key: String) -> TablePlace {
        TablePlace(root: root, path: path + [.member(key)])
    }

    /// The `count` tables of the array of tables `key` (`[[modules]]`) of this one.
    func tables(_ key: String, count: Int) -> [TablePlace] {
        (0..<count).map { TablePlace(root: root, path: path + [.member(key), .element($0)]) }
    }

    /// The node of `key`, when it is written.
    func node(_ key: String) -> ConfigurationNode? {
        root.node(at: path + [.member(key)])
    }

    /// An error about `key`, placed at the first of `writers` that is written (the key itself
    /// unless told otherwise), else at this table: a missing key is to be written there.
    func error(_ key: String, _ problem: ConfigurationError.Problem, placedAt writers: [String]? = nil) -> ConfigurationError {
        let origin = (writers ?? [key]).lazy.compactMap(node).first?.origin ?? root.nearestNode(to: path).origin
        return ConfigurationError(origin: origin.name, line: origin.line, key: JSONPathStep.text(path + [.member(key)]), problem: problem)
    }
}

extension ConfigurationError {
    /// The decoder's `failure` as the configuration words it, at the file and line of the key it
    /// is about: TOML's names for types, and for an unknown key the first its table holds (files
    /// merged, the earlier file's keys first), with the known key it most likely misspells.
    init(_ failure: JSONDecodingFailure, in root: ConfigurationNode) {
        var path = failure.path
        let problem: Problem
        switch failure.problem {
        case .missing:
            problem = .missingKey("it has no default")
        case .unknownMember(let known, let meant):
            if meant == nil, !path.isEmpty, case .table(let entries)? = root.node(at: path.dropLast())?.value,
               let first = entries.first(where: { !known.contains($0.key) }) {
                path[path.count - 1] = .member(first.key)
            }
            var key = ""
            if case .member(let name)? = path.last { key = name }
            problem = .unknownKey(suggestion: meant ?? closestKey(to: key, among: known))
        case .wrongType(let expected):
            problem = .wrongType(expected: expected == "an object" ? "a table" : expected, found: root.nearestNode(to: path).typeName)
        case .invalidValue(let reason):
            problem = .invalidValue(reason)
        }
        let origin = root.nearestNode(to: path).origin
        self.init(origin: origin.name, line: origin.line, key: path.isEmpty ? nil : JSONPathStep.text(path), problem: problem)
    }
}

/// The known key within two edits of `key` (a typo, a swapped letter), if there is one.
func closestKey(to key: String, among known: [String]) -> String? {
    closestName(to: key, among: known, within: max(1, min(2, key.count / 3)))
}
