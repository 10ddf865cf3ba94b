import CameraKit
import CameraProtocols
import JSON
import MQTT
import UnleashedKit

/// The configuration's tables as ``StrictJSONDecoder`` reads them, key for key as TOML names
/// them. Every key is optional, since a key not written keeps its default; a value with a grammar
/// of its own (an address, a duration) is read by a type that refuses text that is not one, so
/// that the refusal names the key. Rules between keys and tables are checked once decoded
/// (``DaemonConfiguration/decode(_:defaults:)``).
///
/// Each table declares its keys in the order they are documented: the decoder reads them in
/// that order, and a "did you mean" suggestion prefers the earlier of two equally close keys.
struct ConfigurationFile: Decodable {
    var backend: Written<BackendName>?
    var adapter: String?
    var port: String?
    var cameraModel: String?
    var daemon: DaemonTable?
    var modules: TableList<ModuleTable>?
    var groups: TableList<GroupTable>?
    var reconnect: ReconnectTable?
    var tokens: TableList<TokenTable>?
    var web: WebTable?
    var downloads: DownloadsTable?
    var mqtt: MQTTTable?

    enum CodingKeys: String, CodingKey {
        case backend, adapter, port, cameraModel = "camera_model", daemon, modules, groups, reconnect, tokens, web, downloads, mqtt
    }

    /// `[daemon]`.
    struct DaemonTable: Decodable {
        var socket: String?
        var socketMode: FileMode?
        var listen: Written<ControlAddress>?
        var resumeRuns: Bool?
        var journal: String?
        var locked: Bool?
        var peerRole: Written<RoleName>?

        enum CodingKeys: String, CodingKey {
            case socket, socketMode = "socket_mode", listen, resumeRuns = "resume_runs", journal, locked, peerRole = "peer_role"
        }
    }

    /// `[web]`.
    struct WebTable: Decodable {
        var listen: Written<WebAddress>?
        var certificate: String?
        var key: String?
        var clients: String?
        var hosts: StringList?
    }

    /// `[mqtt]`.
    struct MQTTTable: Decodable {
        var broker: Written<Broker>?
        var clientID: Written<ClientID>?
        var username: String?
        var password: String?
        var passwordFile: String?
        var caFile: String?
        var topicPrefix: Written<TopicPrefix>?
        var node: Written<NodeName>?
        var discovery: Bool?
        var discoveryPrefix: Written<DiscoveryPrefix>?

        enum CodingKeys: String, CodingKey {
            case broker, clientID = "client_id", username, password, passwordFile = "password_file", caFile = "ca_file"
            case topicPrefix = "topic_prefix", node, discovery, discoveryPrefix = "discovery_prefix"
        }
    }

    /// `[downloads]`.
    struct DownloadsTable: Decodable {
        var folder: String?
        var template: Template?
        var deleteFromCamera: Bool?

        enum CodingKeys: String, CodingKey {
            case folder, template, deleteFromCamera = "delete_from_camera"
        }
    }

    /// `[reconnect]`.
    struct ReconnectTable: Decodable {
        var initialDelay: Written<DurationText>?
        var maxDelay: Written<DurationText>?
        var giveUpAfter: Written<DurationText>?

        enum CodingKeys: String, CodingKey {
            case initialDelay = "initial_delay", maxDelay = "max_delay", giveUpAfter = "give_up_after"
        }
    }

    /// One `[[modules]]` entry.
    struct ModuleTable: Decodable {
        var name: String?
        var address: Written<BluetoothAddress>?
        var adapter: String?
        var brand: Written<BrandName>?
    }

    /// One `[[groups]]` entry.
    struct GroupTable: Decodable {
        var name: String?
        var cameras: StringList?
    }

    /// One `[[tokens]]` entry.
    struct TokenTable: Decodable {
        var name: String?
        var token: String?
        var tokenFile: String?
        var role: Written<RoleName>?

        enum CodingKeys: String, CodingKey {
            case name, token, tokenFile = "token_file", role
        }
    }
}

// The values with a grammar of their own, and the arrays, each read as its key needs it.
extension ConfigurationFile {
    /// The grammar of a setting written as a string: what a text means, and the words that say what
    /// to write when it means nothing.
    protocol SettingGrammar {
        associatedtype Value
        static func read(_ text: String) -> Value?
        static func refusal(of text: String) -> String
    }

    /// A setting written as text in `Grammar`. Text that is not one is refused while decoding, so
    /// that the error names the key and its line, in the grammar's words.
    struct Written<Grammar: SettingGrammar>: Decodable {
        let value: Grammar.Value

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let value = Grammar.read(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: Grammar.refusal(of: text))
            }
            self.value = value
        }
    }

    enum BackendName: SettingGrammar {
        static func read(_ text: String) -> DaemonConfiguration.Backend? { .init(rawValue: text) }
        static func refusal(of text: String) -> String { "'\(text)' is not a backend; use unleashed or gphoto2" }
    }

    enum RoleName: SettingGrammar {
        static func read(_ text: String) -> DaemonConfiguration.AccessToken.Role? { .init(rawValue: text) }
        static func refusal(of text: String) -> String { "'\(text)' is not a role; use operator or viewer" }
    }

    /// The control API's TCP listener: a real port.
    enum ControlAddress: SettingGrammar {
        static func read(_ text: String) -> DaemonConfiguration.ListenAddress? { .init(text) }
        static func refusal(of text: String) -> String { "'\(text)' is not a listening address; write it like 127.0.0.1:8080" }
    }

    /// The web app's listener: port 0 lets the system choose.
    enum WebAddress: SettingGrammar {
        static func read(_ text: String) -> DaemonConfiguration.ListenAddress? { .init(text, allowingAnyPort: true) }
        static func refusal(of text: String) -> String { "'\(text)' is not a listening address; write it like 0.0.0.0:8080" }
    }

    enum Broker: SettingGrammar {
        static func read(_ text: String) -> BrokerAddress? { BrokerAddress(text) }
        static func refusal(of text: String) -> String {
            "'\(text)' is not a broker address; write it like mqtt://broker.local:1883 or mqtts://broker.local:8883"
        }
    }

    /// An MQTT client id: not empty, and short enough for the CONNECT packet's string.
    enum ClientID: SettingGrammar {
        static func read(_ text: String) -> String? { !text.isEmpty && text.utf8.count <= 65535 ? text : nil }
        static func refusal(of text: String) -> String { "the client id is empty" }
    }

    enum TopicPrefix: SettingGrammar {
        static func read(_ text: String) -> String? { DaemonConfiguration.MQTTSettings.isTopicPrefix(text) ? text : nil }
        static func refusal(of text: String) -> String {
            "'\(text)' is not a topic prefix: no +, # or empty levels, like unleashed or studio/cameras"
        }
    }

    enum DiscoveryPrefix: SettingGrammar {
        static func read(_ text: String) -> String? { DaemonConfiguration.MQTTSettings.isTopicPrefix(text) ? text : nil }
        static func refusal(of text: String) -> String { "'\(text)' is not a topic prefix: no +, # or empty levels, like homeassistant" }
    }

    enum NodeName: SettingGrammar {
        static func read(_ text: String) -> String? { DaemonConfiguration.MQTTSettings.isNodeName(text) ? text : nil }
        static func refusal(of text: String) -> String {
            "'\(text)' is not a node name: letters, digits, - and _ only (it is one topic level and part of Home Assistant's ids)"
        }
    }

    /// A duration written like `500ms`, `30s` or `1m`.
    enum DurationText: SettingGrammar {
        static func read(_ text: String) -> Duration? { parseDuration(text) }
        static func refusal(of text: String) -> String { "'\(text)' is not a duration; write it like 500ms, 30s or 1m" }
    }

    /// A Bluetooth address, kept in upper case (`AA:BB:CC:DD:EE:FF`).
    enum BluetoothAddress: SettingGrammar {
        static func read(_ text: String) -> String? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
            return text.uppercased()
        }

        static func refusal(of text: String) -> String { "'\(text)' is not a Bluetooth address; write it like AA:BB:CC:DD:EE:FF" }
    }

    /// A camera reached through its own remote protocol, named in any case.
    enum BrandName: SettingGrammar {
        static func read(_ text: String) -> CameraBrand? { CameraBrand(rawValue: text.lowercased()) }
        static func refusal(of text: String) -> String {
            "'\(text)' is not a brand this daemon drives; use " + CameraBrand.allCases.map(\.rawValue).joined(separator: ", ")
        }
    }

    /// A downloaded picture's file name template, refused in the template parser's own words.
    struct Template: Decodable {
        let template: FilenameTemplate

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            do throws(FilenameTemplateError) {
                template = try FilenameTemplate(parsing: text)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
            }
        }
    }

    /// A file mode written as a TOML octal integer (`0o660`) or as octal digits in a string (`"0660"`).
    struct FileMode: Decodable {
        let bits: Int

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let mode: Int?
            let written: String
            switch try container.decode(JSONValue.self) {
            case .integer(let number):
                mode = Int(exactly: number)
                written = String(number)
            case .string(let text):
                mode = text.allSatisfy { ("0"..."7").contains($0) } ? Int(text, radix: 8) : nil
                written = text
            default:
                throw DecodingError.typeMismatch(Int.self, .init(codingPath: decoder.codingPath, debugDescription: "expected an octal mode like 0o660"))
            }
            guard let mode, (0...0o777).contains(mode) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(written)' is not a file mode; write it in octal like 0o660 or \"0660\"")
            }
            bits = mode
        }
    }

    /// An array of strings (`hosts`, `cameras`).
    struct StringList: Decodable {
        let strings: [String]

        init(from decoder: any Decoder) throws {
            strings = try decoder.elements(String.self, called: "an array of strings")
        }
    }

    /// An array of tables (`[[modules]]`).
    struct TableList<Table: Decodable>: Decodable {
        let tables: [Table]

        init(from decoder: any Decoder) throws {
            tables = try decoder.elements(Table.self, called: "an array of tables")
        }
    }
}

extension Decoder {
    /// The elements of an array; anything else written in its place is refused as not being
    /// `expected`, which says what the elements are, as TOML users call it.
    fileprivate func elements<Element: Decodable>(_: Element.Type, called expected: String) throws -> [Element] {
        guard var container = try? unkeyedContainer() else {
            throw DecodingError.typeMismatch([Element].self, .init(codingPath: codingPath, debugDescription: "expected \(expected)"))
        }
        var elements: [Element] = []
        while !container.isAtEnd { elements.append(try container.decode(Element.self)) }
        return elements
    }
}
