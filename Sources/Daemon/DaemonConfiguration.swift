public import CameraKit
public import CameraProtocols
public import MQTT
import Foundation
public import UnleashedAPI
public import UnleashedKit

/// Everything the daemon is told by its configuration files and environment: where it
/// listens, which camera backend it drives, the modules it knows, how it reconnects and who
/// may control it. A plain value, read once at start and handed to whoever needs it.
public struct DaemonConfiguration: Equatable, Sendable {
    /// What drives the camera.
    public enum Backend: String, CaseIterable, Sendable {
        /// A camera behind an Unleashed module, over Bluetooth.
        case unleashed
        /// A camera on USB (or PTP/IP) through libgphoto2.
        case gphoto2
    }

    /// Which set of files and defaults applies: the system service or one user's daemon.
    public enum Scope: Sendable {
        /// The system service: its socket is under `/run/unleashed`, its journal under `/var/lib/unleashed`.
        case system
        /// One user's daemon: socket under `$XDG_RUNTIME_DIR`, journal in the user's state directory.
        case user
    }

    /// The control listeners and run handling.
    public struct Service: Equatable, Sendable {
        /// The Unix socket the CLI talks to.
        public var socket: String
        /// The socket's permission bits; 0o660 lets the socket's group in.
        public var socketMode: Int
        /// A TCP listener for the control API; none unless asked for.
        public var listen: ListenAddress?
        /// Whether runs the journal shows as unfinished are taken up again at start.
        public var resumeRuns: Bool
        /// The SQLite run journal.
        public var journal: String
        /// When true, no client may change the rig (the `operate` permission): clients may
        /// still watch and, with the operator role, shoot. For a rig that must not be
        /// reconfigured in the middle of a session.
        public var locked: Bool
        /// The role of a process on the Unix socket that presents no token and is neither root
        /// nor the daemon's own user: a member of the socket's group.
        public var peerRole: AccessToken.Role = .viewer
    }

    /// A `host:port` to listen on (`127.0.0.1:8080`, `[::1]:8080`).
    public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
        /// A name or address; an IPv6 address without its brackets.
        public var host: String
        /// 1...65535.
        public var port: Int

        /// Reads `host:port`; nil unless the port is 1...65535 (or 0, the system's choice, when
        /// `allowingAnyPort`) and the host is not empty.
        public init?(_ text: String, allowingAnyPort: Bool = false) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                  ((allowingAnyPort ? 0 : 1)...65535).contains(port) else { return nil }
            var host = text[..<colon]
            if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty, !host.contains(where: \.isWhitespace) else { return nil }
            self.host = String(host)
            self.port = port
        }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The web app for phones and tablets (`[web]`): off unless ``listen`` is set.
    public struct Web: Equatable, Sendable {
        /// Where browsers reach the web app; port 0 lets the system choose (the log says which).
        public var listen: ListenAddress?
        /// A PEM certificate (chain) for HTTPS; with ``key``. Without one the web app is plain HTTP.
        public var certificate: String?
        /// The certificate's PEM private key.
        public var key: String?
        /// Where the paired browsers are kept; nil for `web-clients.json` beside the journal.
        public var clients: String?
        /// Names browsers may reach the web app by, beyond this machine's own (its host name,
        /// `NAME.local`, `NAME.DOMAIN`, `localhost` and its addresses): a request whose `Host`
        /// is none of them is refused, which closes DNS rebinding to a web page elsewhere.
        public var hosts: [String]

        public init(listen: ListenAddress? = nil, certificate: String? = nil, key: String? = nil, clients: String? = nil,
                    hosts: [String] = []) {
            self.listen = listen
            self.certificate = certificate
            self.key = key
            self.clients = clients
            self.hosts = hosts
        }

        /// The file of paired browsers for a daemon whose journal is at `journal`.
        public func clientsFile(journal: String) -> String {
            clients ?? (journal as NSString).deletingLastPathComponent + "/web-clients.json"
        }
    }

    /// The MQTT bridge (`[mqtt]`): off unless ``broker`` is set. The daemon then publishes its
    /// cameras' state, its jobs' progress and frames, takes commands, and announces its cameras
    /// to Home Assistant (docs/mqtt.md).
    public struct MQTTSettings: Equatable, Sendable {
        public var broker: BrokerAddress?
        /// nil for `unleashed-NODE`.
        public var clientID: String?
        public var username: String?
        public var password: String?
        /// The certificate authority a TLS broker is checked against; nil for the system's.
        public var caFile: String?
        /// The first levels of every topic.
        public var topicPrefix = "unleashed"
        /// This host in topics and ids; nil for the machine's host name.
        public var node: String?
        /// Whether cameras are announced to Home Assistant.
        public var discovery = true
        public var discoveryPrefix = "homeassistant"

        public init() {}

        /// One or more topic levels, none empty, without wildcards.
        public static func isTopicPrefix(_ text: String) -> Bool {
            !text.isEmpty && !text.contains("+") && !text.contains("#") && !text.contains("\u{0}")
                && text.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
        }

        /// A name fit for one topic level and for Home Assistant's ids.
        public static func isNodeName(_ text: String) -> Bool {
            !text.isEmpty && text.count <= 64 && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
            }
        }
    }

    /// Where the pictures of a camera on USB or PTP/IP (`backend = "gphoto2"`) are copied as it
    /// takes them (`[downloads]`); off unless ``folder`` is set. The web app shows their thumbnails.
    public struct Downloads: Equatable, Sendable {
        public var folder: String?
        /// How each copy is named.
        public var template: FilenameTemplate
        /// Deletes each picture from the card once its copy is safely written.
        public var deleteFromCamera: Bool

        public init(folder: String? = nil, template: FilenameTemplate = .default, deleteFromCamera: Bool = false) {
            self.folder = folder
            self.template = template
            self.deleteFromCamera = deleteFromCamera
        }
    }

    /// Modules fired together, under a name (`--group NAME`): the group `GET /v1/groups` lists.
    public typealias Group = GroupList.Group

    /// A module the daemon may connect to, by a name people use.
    public struct Module: Equatable, Sendable {
        /// What clients call it; unique among the modules.
        public var name: String
        /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF`, upper case.
        public var address: String
        /// The adapter to reach it through; nil for the configuration's ``DaemonConfiguration/adapter``.
        public var adapter: String?
        /// Set for a camera reached directly through its own Bluetooth remote protocol (GoPro,
        /// Sony, …) rather than an Unleashed module.
        public var brand: CameraBrand?

        public init(name: String, address: String, adapter: String? = nil, brand: CameraBrand? = nil) {
            self.name = name
            self.address = address
            self.adapter = adapter
            self.brand = brand
        }
    }

    /// A secret that lets a client in, with what it may do.
    public struct AccessToken: Equatable, Sendable, CustomStringConvertible {
        /// What a token's holder may do.
        public enum Role: String, CaseIterable, Sendable {
            /// Start, stop and change runs and settings.
            case `operator`
            /// Read status, runs and events only.
            case viewer
        }

        /// Names the token in logs; unique among the tokens.
        public var name: String
        /// What a client presents; at least 16 characters.
        public var secret: String
        public var role: Role

        /// Names the token but never shows the secret, so that logging a configuration is safe.
        public var description: String { "\(name) (\(role.rawValue))" }
    }

    /// The `[daemon]` table.
    public var service: Service
    public var backend: Backend
    /// The Bluetooth adapter (`hci0`); nil for the first one.
    public var adapter: String?
    /// The libgphoto2 port for the gphoto2 backend (`usb:`, `ptpip:HOST`); nil for the first USB camera.
    public var port: String?
    /// libgphoto2's name for the camera's model, for the gphoto2 backend: opens a camera that
    /// libgphoto2 does not detect as that model (on `port`, else `usb:`); nil detects it.
    public var cameraModel: String?
    /// The `[[modules]]` tables, in the order written.
    public var modules: [Module]
    /// The `[[groups]]` tables: named rigs of modules that commands fire together.
    public var groups: [Group] = []
    /// The `[reconnect]` table: how long to wait between attempts to get a lost link back
    /// (`initial_delay`, `max_delay`: ``ReconnectPolicy/maximumDelay``), and when to stop
    /// trying (`give_up_after`; nil tries for as long as the daemon runs).
    public var reconnect: ReconnectPolicy
    /// The `[[tokens]]` tables; none means only the Unix socket's permissions guard the daemon.
    public var tokens: [AccessToken]
    /// The `[web]` table.
    public var web = Web()
    /// The `[downloads]` table.
    public var downloads = Downloads()
    /// The `[mqtt]` table.
    public var mqtt = MQTTSettings()

    /// The configuration when no file says otherwise.
    public static func defaults(scope: Scope, environment: [String: String]) -> DaemonConfiguration {
        let socket: String
        let journal: String
        switch scope {
        case .system:
            socket = unleashedSystemSocketPath
            journal = "/var/lib/unleashed/journal.sqlite"
        case .user:
            socket = unleashedUserSocketPath(environment: environment)
            journal = unleashedStateDirectory(environment: environment).appendingPathComponent("journal.sqlite").path
        }
        return DaemonConfiguration(
            service: Service(socket: socket, socketMode: 0o660, listen: nil, resumeRuns: true, journal: journal, locked: false),
            backend: .unleashed, adapter: nil, port: nil, modules: [],
            reconnect: ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(30), giveUpAfter: nil),
            tokens: [])
    }
}

extension DaemonConfiguration.MQTTSettings {
    /// The session the daemon opens with `broker` as `clientID`: `[mqtt]`'s user, password and
    /// TLS. The bridge opens it, and `unleashed doctor` tries the same one.
    public func session(with broker: BrokerAddress, clientID: String) -> MQTTClient.Configuration {
        var configuration = MQTTClient.Configuration(host: broker.host, port: broker.port, clientID: clientID)
        configuration.username = username
        configuration.password = password
        configuration.tls = broker.tls
        configuration.caFile = caFile
        return configuration
    }
}
