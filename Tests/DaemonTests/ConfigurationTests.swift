import Foundation
import MQTT
import Testing
@testable import Daemon

/// A scratch folder with configuration files, removed when the test ends.
final class ConfigurationFiles {
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Writes `text` to `name` in the folder and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let path = "\(folder)/\(name)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    var system: String { "\(folder)/unleashed.toml" }
    var user: String { "\(folder)/config.toml" }

    func load(environment: [String: String] = [:], scope: DaemonConfiguration.Scope = .user) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.load(files: [system, user], environment: environment, scope: scope)
    }

    /// The message loading gives, or nil when it loads.
    func failure(_ system: String, environment: [String: String] = [:]) throws -> String? {
        try write("unleashed.toml", system)
        do {
            _ = try load(environment: environment)
            return nil
        } catch {
            return error.description
        }
    }
}

@Suite struct DefaultsTests {
    @Test func noFilesGiveTheUserDefaults() throws {
        let files = try ConfigurationFiles()
        let configuration = try files.load(environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/home/pi/.state"])
        #expect(configuration.service.socket == "/run/user/1000/unleashed/control.sock")
        #expect(configuration.service.socketMode == 0o660)
        #expect(configuration.service.listen == nil)
        #expect(configuration.service.resumeRuns)
        #expect(!configuration.service.locked)
        #expect(configuration.service.journal == "/home/pi/.state/unleashed/journal.sqlite")
        #expect(configuration.backend == .unleashed)
        #expect(configuration.adapter == nil && configuration.port == nil && configuration.cameraModel == nil)
        #expect(configuration.modules.isEmpty && configuration.tokens.isEmpty)
        #expect(configuration.reconnect == .init(initialDelay: .milliseconds(500), maximumDelay: .seconds(30), giveUpAfter: nil))
    }

    @Test func theSystemServiceUsesRun() throws {
        let files = try ConfigurationFiles()
        let configuration = try files.load(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], scope: .system)
        #expect(configuration.service.socket == "/run/unleashed/control.sock")
        #expect(configuration.service.journal == "/var/lib/unleashed/journal.sqlite")
    }

    @Test func filesFollowTheXDGVariables() {
        #expect(DaemonConfiguration.files(scope: .user, environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"])
            == ["/etc/unleashed/unleashed.toml", "/c/unleashed/config.toml"])
        #expect(DaemonConfiguration.files(scope: .user, environment: ["HOME": "/h"])
            == ["/etc/unleashed/unleashed.toml", "/h/.config/unleashed/config.toml"])
        #expect(DaemonConfiguration.files(scope: .system, environment: ["HOME": "/h"]) == ["/etc/unleashed/unleashed.toml"])
    }
}

@Suite struct MergeTests {
    @Test func everyKeyIsRead() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", """
            backend = "gphoto2"
            adapter = "hci1"
            port = "ptpip:192.168.1.20"
            camera_model = "USB PTP Class Camera"

            [daemon]
            socket = "/tmp/u.sock"
            socket_mode = 0o600
            listen = "[::1]:8443"
            resume_runs = false
            journal = "/srv/journal.sqlite"
            locked = true

            [reconnect]
            initial_delay = "250ms"
            max_delay = "1m"
            give_up_after = "2h"

            [[modules]]
            name = "left"
            address = "aa:bb:cc:dd:ee:01"

            [[modules]]
            name = "right"
            address = "AA:BB:CC:DD:EE:02"
            adapter = "hci0"

            [[tokens]]
            name = "ci"
            token = "0123456789abcdef"
            role = "operator"
            """)
        let configuration = try files.load()
        #expect(configuration.backend == .gphoto2)
        #expect(configuration.adapter == "hci1")
        #expect(configuration.port == "ptpip:192.168.1.20")
        #expect(configuration.cameraModel == "USB PTP Class Camera")
        #expect(configuration.service == .init(socket: "/tmp/u.sock", socketMode: 0o600, listen: .init("[::1]:8443"),
                                                resumeRuns: false, journal: "/srv/journal.sqlite", locked: true))
        #expect(configuration.service.listen?.host == "::1" && configuration.service.listen?.port == 8443)
        #expect(configuration.reconnect == .init(initialDelay: .milliseconds(250), maximumDelay: .seconds(60), giveUpAfter: .seconds(7200)))
        #expect(configuration.modules == [.init(name: "left", address: "AA:BB:CC:DD:EE:01", adapter: nil),
                                          .init(name: "right", address: "AA:BB:CC:DD:EE:02", adapter: "hci0")])
        #expect(configuration.tokens == [.init(name: "ci", secret: "0123456789abcdef", role: .operator)])
        #expect(configuration.tokens[0].description == "ci (operator)")
    }

    @Test func theUserFileOverridesTheSystemFileKeyByKey() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", """
            adapter = "hci0"
            [daemon]
            socket = "/run/unleashed/control.sock"
            listen = "127.0.0.1:8080"
            [reconnect]
            max_delay = "10s"
            [[modules]]
            name = "system"
            address = "AA:BB:CC:DD:EE:01"
            """)
        try files.write("config.toml", """
            [daemon]
            listen = "127.0.0.1:9090"
            [reconnect]
            initial_delay = "1s"
            [[modules]]
            name = "mine"
            address = "AA:BB:CC:DD:EE:02"
            """)
        let configuration = try files.load()
        #expect(configuration.adapter == "hci0")
        #expect(configuration.service.socket == "/run/unleashed/control.sock")
        #expect(configuration.service.listen == .init("127.0.0.1:9090"))
        #expect(configuration.reconnect.initialDelay == .seconds(1))
        #expect(configuration.reconnect.maximumDelay == .seconds(10))
        #expect(configuration.modules.map(\.name) == ["mine"])
    }

    @Test func theEnvironmentOverridesTheFiles() throws {
        let files = try ConfigurationFiles()
        try files.write("config.toml", """
            backend = "unleashed"
            adapter = "hci0"
            [daemon]
            socket = "/from/file.sock"
            """)
        let configuration = try files.load(environment: [
            "UNLEASHED_BACKEND": "gphoto2", "UNLEASHED_SOCKET": "/from/env.sock", "UNLEASHED_JOURNAL": "/env/journal.sqlite",
            "UNLEASHED_ADAPTER": "hci2", "UNLEASHED_PORT": "usb:001,004", "UNLEASHED_LISTEN": "0.0.0.0:8080",
            "UNLEASHED_CAMERA_MODEL": "Nikon DSC D750",
        ])
        #expect(configuration.backend == .gphoto2)
        #expect(configuration.service.socket == "/from/env.sock")
        #expect(configuration.service.journal == "/env/journal.sqlite")
        #expect(configuration.adapter == "hci2")
        #expect(configuration.port == "usb:001,004")
        #expect(configuration.cameraModel == "Nikon DSC D750")
        #expect(configuration.service.listen == .init("0.0.0.0:8080"))
    }

    @Test func aBadEnvironmentValueNamesTheVariable() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("", environment: ["UNLEASHED_BACKEND": "usb"])
            == "environment variable UNLEASHED_BACKEND: backend: 'usb' is not a backend; use unleashed or gphoto2")
    }

    @Test func aTokenFileIsReadRelativeToItsConfigurationFile() throws {
        let files = try ConfigurationFiles()
        try files.write("ci.token", "s3cret-s3cret-s3cret\n")
        try files.write("unleashed.toml", """
            [[tokens]]
            name = "ci"
            token_file = "ci.token"
            """)
        let configuration = try files.load()
        #expect(configuration.tokens == [.init(name: "ci", secret: "s3cret-s3cret-s3cret", role: .viewer)])
        #expect(!String(describing: configuration.tokens).contains("s3cret"))
    }

    @Test func aTokenFileIsFoundFromARelativeOrLinkedConfigurationFile() throws {
        let files = try ConfigurationFiles()
        try FileManager.default.createDirectory(atPath: files.folder + "/real", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: files.folder + "/linked", withIntermediateDirectories: true)
        try files.write("real/ci.token", "s3cret-s3cret-s3cret\r\n")
        let file = try files.write("real/unleashed.toml", "[[tokens]]\nname = \"ci\"\ntoken_file = \"ci.token\"\n")
        try FileManager.default.createSymbolicLink(atPath: files.folder + "/linked/unleashed.toml", withDestinationPath: "../real/unleashed.toml")
        // The same file from the working directory, whatever that is: up to / and down again.
        let up = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let relative = String(repeating: "../", count: up) + file.dropFirst()
        for name in [file, relative, files.folder + "/linked/unleashed.toml"] {
            let configuration = try DaemonConfiguration.load(files: [name], environment: [:], scope: .user)
            #expect(configuration.tokens.map(\.secret) == ["s3cret-s3cret-s3cret"], "\(name)")
        }
    }
}

@Suite struct ErrorTests {
    @Test func aDurationWithoutAUnit() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("""
            [reconnect]
            initial_delay = "1s"
            max_delay = "30"
            """) == "\(files.system):3: reconnect.max_delay: '30' is not a duration; write it like 500ms, 30s or 1m")
    }

    @Test func anUnknownKeySuggestsTheClosestOne() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("""
            # comment

            [daemon]
            sokcet = "/tmp/x.sock"
            """) == "\(files.system):4: daemon.sokcet: unknown key; did you mean 'socket'?")
        #expect(try files.failure("colour = \"red\"\n") == "\(files.system):1: colour: unknown key")
        #expect(try files.failure("[deamon]\nsocket = \"/x\"\n") == "\(files.system):1: deamon: unknown key; did you mean 'daemon'?")
        #expect(try files.failure("camera-model = \"x\"\n") == "\(files.system):1: camera-model: unknown key; did you mean 'camera_model'?")
        #expect(try files.failure("camera_model = 750\n")?.contains("camera_model") == true)
    }

    @Test func aWrongType() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[daemon]\nresume_runs = \"yes\"\n")
            == "\(files.system):2: daemon.resume_runs: expected true or false, found a string")
        #expect(try files.failure("[reconnect]\nmax_delay = 30\n")
            == "\(files.system):2: reconnect.max_delay: expected a string, found an integer")
        #expect(try files.failure("daemon = 3\n") == "\(files.system):1: daemon: expected a table, found an integer")
        #expect(try files.failure("[daemon]\nsocket_mode = 660\n")
            == "\(files.system):2: daemon.socket_mode: '660' is not a file mode; write it in octal like 0o660 or \"0660\"")
    }

    @Test func aSyntaxErrorGivesTheParsersLineAndColumn() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("backend = \"unleashed\"\n[daemon\nsocket = 1\n")
            == "\(files.system):2:8: not valid TOML: Error while parsing table header: expected ']', saw '\\n'")
        #expect(try files.failure("\n[=x]\n") == "\(files.system):2:2: not valid TOML: a table name must start with a key")
    }

    /// A `[[modules]]` entry may name a brand (a camera reached through its own remote
    /// protocol); a brand this daemon does not drive is refused naming those it does.
    @Test func aBrandMakesAnEntryACameraOverItsOwnProtocol() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", """
            [[modules]]
            name = "hero"
            address = "C0:CA:4E:00:00:01"
            brand = "GoPro"

            [[modules]]
            name = "left"
            address = "AA:BB:CC:DD:EE:01"
            """)
        let configuration = try files.load()
        #expect(configuration.modules.map(\.brand) == [.gopro, nil])
        #expect(try files.failure("[[modules]]\nname = \"x\"\naddress = \"AA:BB:CC:DD:EE:01\"\nbrand = \"leica\"\n")
            == "\(files.system):4: modules[0].brand: 'leica' is not a brand this daemon drives; use gopro, sony, canon, fujifilm, nikon")
    }

    @Test func aBadModuleIsPlacedInItsTable() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("""
            [[modules]]
            name = "left"
            address = "AA:BB:CC:DD:EE:01"

            [[modules]]
            name = "right"
            address = "AA:BB:CC:DD:EE"
            """) == "\(files.system):7: modules[1].address: 'AA:BB:CC:DD:EE' is not a Bluetooth address; write it like AA:BB:CC:DD:EE:FF")
        #expect(try files.failure("[[modules]]\nname = \"left\"\n")
            == "\(files.system):1: modules[0].address: missing; every module needs its Bluetooth address")
        #expect(try files.failure("""
            [[modules]]
            name = "a"
            address = "AA:BB:CC:DD:EE:01"
            [[modules]]
            name = "a"
            address = "AA:BB:CC:DD:EE:02"
            """) == "\(files.system):5: modules[1].name: another module is already named 'a'")
        // With MQTT, names that are one topic level are one camera there: refused.
        let colliding = """
            [[modules]]
            name = "a b"
            address = "AA:BB:CC:DD:EE:01"
            [[modules]]
            name = "a_b"
            address = "AA:BB:CC:DD:EE:02"

            """
        #expect(try files.failure(colliding) == nil)
        #expect(try files.failure(colliding + "[mqtt]\nbroker = \"mqtt://127.0.0.1:1883\"\n")?
            .hasPrefix("\(files.system):5: modules[1].name: 'a_b' is the same MQTT topic level as module 'a b', 'a_b'") == true)
    }

    @Test func badTokens() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken = \"0123456789abcdef\"\nrole = \"admin\"\n")
            == "\(files.system):4: tokens[0].role: 'admin' is not a role; use operator or viewer")
        #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken = \"short\"\n")
            == "\(files.system):3: tokens[0].token: a token needs at least 16 characters to be hard to guess")
        #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken_file = \"absent.token\"\n")
            == "\(files.system):3: tokens[0].token_file: \(files.folder)/absent.token: no such file")
    }

    @Test func aTokenWithWhiteSpaceAroundItIsRefused() throws {
        let files = try ConfigurationFiles()
        for written in [" 0123456789abcdef", "0123456789abcdef ", "0123456789abcdef\\n", "\\t0123456789abcdef"] {
            #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken = \"\(written)\"\n")
                == "\(files.system):3: tokens[0].token: the token starts or ends with white space, "
                + "which a client's Authorization header cannot carry; remove it", "\(written)")
        }
        for content in [" 0123456789abcdef\n", "0123456789abcdef \n", "0123456789abcdef\n\n"] {
            try files.write("ci.token", content)
            #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken_file = \"ci.token\"\n")
                == "\(files.system):3: tokens[0].token_file: \(files.folder)/ci.token: the token starts or ends with white space "
                + "(or has more than one line), which a client's Authorization header cannot carry; "
                + "the file holds the token and at most one line ending", "\(content)")
        }
        // One line ending is what a file has; it is not part of the token.
        try files.write("ci.token", "0123456789abcdef\n")
        #expect(try files.failure("[[tokens]]\nname = \"ci\"\ntoken_file = \"ci.token\"\n") == nil)
    }

    @Test func twoTokensWithOneSecretAreRefused() throws {
        let files = try ConfigurationFiles()
        try files.write("shared.token", "0123456789abcdef\n")
        let message = try files.failure("""
            [[tokens]]
            name = "wall"
            token = "0123456789abcdef"

            [[tokens]]
            name = "kiosk"
            token_file = "shared.token"
            role = "operator"
            """)
        #expect(message == "\(files.system):7: tokens[1].token_file: token 'kiosk' has the same secret as token 'wall'; "
            + "give each token a secret of its own")
        #expect(message?.contains("0123456789abcdef") == false, "the secret is not shown")
    }

    @Test func aConfigurationFileNamedOnTheCommandLineMustExist() throws {
        let files = try ConfigurationFiles()
        #expect(throws: ConfigurationError(origin: files.system, problem: .unreadable("no such file"))) {
            try DaemonConfiguration.load(files: [files.system], environment: [:], scope: .user, requireFiles: true)
        }
        #expect(throws: Never.self) { try DaemonConfiguration.load(files: [files.system], environment: [:], scope: .user) }
    }

    @Test func aFolderGivenAsTheConfigurationIsSaidToBeOne() throws {
        let files = try ConfigurationFiles()
        #expect(throws: ConfigurationError(origin: files.folder, problem: .unreadable("it is a folder, not a file"))) {
            try DaemonConfiguration.load(files: [files.folder], environment: [:], scope: .user, requireFiles: true)
        }
    }

    @Test func aFileThatIsNotText() throws {
        let files = try ConfigurationFiles()
        try Data([0x61, 0x20, 0x3D, 0x20, 0x22, 0xFF, 0x22]).write(to: URL(fileURLWithPath: files.user))
        do {
            _ = try files.load()
            Issue.record("a file that is not UTF-8 loaded")
        } catch {
            #expect(error.description == "\(files.user): cannot be read: it is not UTF-8 text")
        }
    }

    @Test func aLineInsideAnInlineTableFallsBackToItsKey() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("\nreconnect = { max_delay = \"soon\" }\n")
            == "\(files.system):2: reconnect.max_delay: 'soon' is not a duration; write it like 500ms, 30s or 1m")
    }
}

@Suite struct ShippedExampleTests {
    /// The example the package ships must load, or its readers copy a broken file.
    @Test func theExampleFileLoads() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../dist/unleashed.toml").standardized.path
        let configuration = try DaemonConfiguration.load(files: [example], environment: [:], scope: .system)
        #expect(configuration.modules.map(\.address) == ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02"])
        #expect(configuration.service.socketMode == 0o660)
        #expect(configuration.reconnect.maximumDelay == .seconds(30))
    }
}

@Suite struct ErrorPlacementTests {
    @Test func anErrorInTheUserFileNamesTheUserFile() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", "[reconnect]\nmax_delay = \"30s\"\n")
        try files.write("config.toml", "\n\n[reconnect]\nmax_delay = \"1ms\"\n")
        do {
            _ = try files.load()
            Issue.record("a max_delay shorter than initial_delay loaded")
        } catch {
            #expect(error.description == "\(files.user):4: reconnect.max_delay: 1ms is shorter than initial_delay (500ms)")
        }
    }

    @Test func keysInsideAMultilineStringDoNotMoveLines() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("""
            [[tokens]]
            name = \"\"\"
            role = "operator"
            \"\"\"
            token = "0123456789abcdef"
            role = "root"
            """) == "\(files.system):6: tokens[0].role: 'root' is not a role; use operator or viewer")
    }

    @Test func aFolderInPlaceOfAFile() throws {
        let files = try ConfigurationFiles()
        try FileManager.default.createDirectory(atPath: files.user, withIntermediateDirectories: false)
        do {
            _ = try files.load()
            Issue.record("a folder loaded as a configuration file")
        } catch {
            #expect(error.description.hasPrefix("\(files.user): cannot be read: "))
            #expect(error.line == nil && error.key == nil)
        }
    }
}

@Suite struct GroupConfigurationTests {
    static let modules = """
        [[modules]]
        name = "left"
        address = "F0:5E:D0:00:00:01"
        [[modules]]
        name = "right"
        address = "F0:5E:D0:00:00:02"

        """

    @Test func groupsNameConfiguredModulesInOrder() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", Self.modules + "[[groups]]\nname = \"stereo\"\ncameras = [\"right\", \"left\"]\n")
        #expect(try files.load().groups == [DaemonConfiguration.Group(name: "stereo", cameras: ["right", "left"])])
    }

    @Test func aGroupWithAnUnknownOrRepeatedCameraIsRefused() throws {
        let files = try ConfigurationFiles()
        let unknown = try files.failure(Self.modules + "[[groups]]\nname = \"stereo\"\ncameras = [\"left\", \"rihgt\"]\n")
        #expect(unknown?.contains("'rihgt' is not a configured module (configured: left, right)") == true, "\(unknown ?? "loaded")")
        let repeated = try files.failure(Self.modules + "[[groups]]\nname = \"stereo\"\ncameras = [\"left\", \"left\"]\n")
        #expect(repeated?.contains("'left' is listed twice") == true, "\(repeated ?? "loaded")")
        let empty = try files.failure(Self.modules + "[[groups]]\nname = \"stereo\"\ncameras = []\n")
        #expect(empty?.contains("groups[0].cameras") == true, "\(empty ?? "loaded")")
        let twice = try files.failure(Self.modules + "[[groups]]\nname = \"a\"\ncameras = [\"left\"]\n[[groups]]\nname = \"a\"\ncameras = [\"right\"]\n")
        #expect(twice != nil)
    }
}

@Suite("configuration: [web]")
struct WebConfigurationTests {
    @Test("[web] gives the web app's address, certificate, key and file of paired browsers")
    func read() throws {
        let files = try ConfigurationFiles()
        try files.write("unleashed.toml", """
            [web]
            listen = "0.0.0.0:8443"
            certificate = "/etc/unleashed/cert.pem"
            key = "/etc/unleashed/key.pem"
            """)
        let configuration = try files.load(environment: ["XDG_STATE_HOME": "/home/pi/.state"])
        #expect(configuration.web.listen == .init("0.0.0.0:8443"))
        #expect(configuration.web.certificate == "/etc/unleashed/cert.pem")
        #expect(configuration.web.clientsFile(journal: configuration.service.journal) == "/home/pi/.state/unleashed/web-clients.json")
    }

    @Test("no [web] serves no web app; UNLEASHED_WEB (what --web sets) asks for one, port 0 included")
    func environment() throws {
        let files = try ConfigurationFiles()
        #expect(try files.load().web.listen == nil)
        #expect(try files.load(environment: ["UNLEASHED_WEB": "127.0.0.1:0"]).web.listen?.port == 0)
    }

    @Test("a key without its certificate, a certificate without its key and a bad address are refused with the key's line")
    func refusals() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[web]\nkey = \"/k.pem\"\n")?.contains("web.certificate: missing; a key needs its certificate") == true)
        #expect(try files.failure("[web]\ncertificate = \"/c.pem\"\n")?.contains("web.key: missing; a certificate needs its private key") == true)
        #expect(try files.failure("[web]\nlisten = \"8080\"\n") == "\(files.system):2: web.listen: '8080' is not a listening address; write it like 0.0.0.0:8080")
        #expect(try files.failure("[web]\nport = 8080\n")?.contains("web.port") == true)
    }
}

@Suite("[mqtt]") struct MQTTConfigurationTests {
    @Test("[mqtt] gives the broker, login, TLS, topics and discovery; without it there is no bridge")
    func read() throws {
        let files = try ConfigurationFiles()
        #expect(try files.load().mqtt.broker == nil)
        try files.write("broker.password", "s3cret-broker-word\n")
        try files.write("unleashed.toml", """
            [mqtt]
            broker = "mqtts://broker.studio:8884"
            client_id = "rig-north"
            username = "north"
            password_file = "broker.password"
            ca_file = "/etc/unleashed/ca.pem"
            topic_prefix = "studio/cameras"
            node = "north-pi"
            discovery = false
            """)
        let mqtt = try files.load().mqtt
        #expect(mqtt.broker == BrokerAddress(host: "broker.studio", port: 8884, tls: true))
        #expect(mqtt.clientID == "rig-north" && mqtt.username == "north" && mqtt.password == "s3cret-broker-word")
        #expect(mqtt.caFile == "/etc/unleashed/ca.pem" && mqtt.topicPrefix == "studio/cameras" && mqtt.node == "north-pi")
        #expect(!mqtt.discovery && mqtt.discoveryPrefix == "homeassistant")
        try files.write("unleashed.toml", "[mqtt]\nbroker = \"mqtt://[::1]\"\n")
        let defaults = try files.load().mqtt
        #expect(defaults.broker == BrokerAddress(host: "::1", port: 1883, tls: false))
        #expect(defaults.discovery && defaults.topicPrefix == "unleashed" && defaults.node == nil && defaults.clientID == nil)
    }

    @Test("a bad broker, a password without a user, a CA file without TLS, wildcards and odd names are refused with the key's line")
    func refusals() throws {
        let files = try ConfigurationFiles()
        let hint = "write it like mqtt://broker.local:1883 or mqtts://broker.local:8883"
        for broker in ["broker.local", "http://broker", "mqtt://", "mqtt://a:0", "mqtt://a:99999", "mqtt://user:pw@broker", "mqtt://broker/x"] {
            #expect(try files.failure("[mqtt]\nbroker = \"\(broker)\"\n") == "\(files.system):2: mqtt.broker: '\(broker)' is not a broker address; \(hint)")
        }
        #expect(try files.failure("[mqtt]\ndiscovery = true\n")?.contains("mqtt.broker: missing; [mqtt] needs its broker") == true)
        #expect(try files.failure("[mqtt]\nbroker = \"mqtt://b\"\npassword = \"x\"\n")?.contains("mqtt.username: missing; a password needs its username") == true)
        #expect(try files.failure("[mqtt]\nbroker = \"mqtt://b\"\nca_file = \"/ca.pem\"\n")
            == "\(files.system):3: mqtt.ca_file: a CA file is for TLS: write the broker as mqtts://")
        for prefix in ["a/+/b", "#", "a//b", "/a", "a/"] {
            #expect(try files.failure("[mqtt]\nbroker = \"mqtt://b\"\ntopic_prefix = \"\(prefix)\"\n")?.contains("mqtt.topic_prefix: '\(prefix)' is not a topic prefix") == true, "\(prefix)")
        }
        for node in ["north pi", "a/b", "", "kamera-ö"] {
            #expect(try files.failure("[mqtt]\nbroker = \"mqtt://b\"\nnode = \"\(node)\"\n")?.contains("mqtt.node: '\(node)' is not a node name") == true, "\(node)")
        }
        #expect(try files.failure("[mqtt]\nbroker = \"mqtt://b\"\nretain = true\n")?.contains("mqtt.retain") == true)
    }
}

/// What the strict decoder reports, worded for TOML and placed at the key's file and line.
@Suite struct DecodedErrorTests {
    @Test func aWrongElementOfAnArrayIsNamedByItsPosition() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[web]\nhosts = [\"cam.local\", 2]\n") == "\(files.system):2: web.hosts[1]: expected a string, found an integer")
        #expect(try files.failure("[web]\nhosts = \"cam.local\"\n") == "\(files.system):2: web.hosts: expected an array of strings, found a string")
        #expect(try files.failure("modules = \"left\"\n") == "\(files.system):1: modules: expected an array of tables, found a string")
        #expect(try files.failure("modules = [\"left\"]\n") == "\(files.system):1: modules[0]: expected a table, found a string")
    }

    @Test func aValueNoSettingTakesIsNamedByItsTOMLType() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[reconnect]\nmax_delay = 1979-05-27\n") == "\(files.system):2: reconnect.max_delay: expected a string, found a date or time")
        #expect(try files.failure("[daemon]\nlocked = 1.0\n") == "\(files.system):2: daemon.locked: expected true or false, found a floating-point number")
        #expect(try files.failure("[daemon]\nsocket_mode = 432.0\n")
            == "\(files.system):2: daemon.socket_mode: expected an octal mode like 0o660, found a floating-point number")
    }

    @Test func anUnknownKeyInAnArrayOfTablesIsPlacedInItsEntry() throws {
        let files = try ConfigurationFiles()
        #expect(try files.failure("[[modules]]\nname = \"a\"\naddress = \"AA:BB:CC:DD:EE:01\"\n[[modules]]\nname = \"b\"\nadress = \"x\"\n")
            == "\(files.system):6: modules[1].adress: unknown key; did you mean 'address'?")
    }
}
