public import BlueZ
public import CameraKit
import CameraProtocols
import Foundation
public import JSON

extension BlueZError {
    /// The stable code scripts go by (`pairingRefused`, `noAdapter`), in the CLI's `--json` output.
    public var code: String {
        switch self {
        case .noSystemBus: "noSystemBus"
        case .bluezNotRunning: "bluetoothdNotRunning"
        case .permissionDenied: "permissionDenied"
        case .noAdapter: "noAdapter"
        case .adapterNotFound: "adapterNotFound"
        case .adapterPoweredOff: "adapterPoweredOff"
        case .moduleNotFound: "moduleNotFound"
        case .pairingRefused: "pairingRefused"
        case .notPaired: "notPaired"
        case .connectionFailed: "connectionFailed"
        case .connectionLost: "connectionLost"
        case .timedOut: "timedOut"
        case .notAModule: "notAModule"
        case .dbus: "bluetooth"
        }
    }

    /// What kind of failure it is, for its exit status (``CameraError/exitStatuses``): the
    /// module said no to pairing, the user may not use Bluetooth, or it is not there.
    public var kind: CameraError.Kind {
        switch self {
        case .pairingRefused: .refused
        case .permissionDenied: .permission
        default: .unavailable
        }
    }

    /// The CLI's exit status for it, by its kind.
    public var exitStatus: Int32 { CameraError.exitStatuses[kind] ?? 70 }
}

/// How the questions of a pairing are answered: with the passkey and the yes given on the
/// command line, else by asking a person (when there is a terminal), with notes shown as they come.
public struct PairingAnswers: Sendable {
    public var passkey: UInt32?
    public var confirm: Bool
    public var ask: (@Sendable (String) -> String)?
    public var note: @Sendable (String) -> Void

    public init(passkey: UInt32?, confirm: Bool, ask: (@Sendable (String) -> String)?, note: @escaping @Sendable (String) -> Void) {
        self.passkey = passkey
        self.confirm = confirm
        self.ask = ask
        self.note = note
    }

    /// The agent BlueZ asks.
    var agent: PairingAgent { .answering(passkey: passkey, confirm: confirm, ask: ask, note: note) }
}

extension PairingAgent {
    /// Answers pairing questions: a passkey given with `passkey`, a confirmation given with
    /// `confirm`, else a question put through `ask` (nil without a terminal: the pairing is
    /// then refused with a message that says which option to pass). `note` tells the user a
    /// passkey to enter on the module.
    public static func answering(passkey: UInt32?, confirm: Bool, ask: (@Sendable (String) -> String)?,
                                 note: @escaping @Sendable (String) -> Void) -> PairingAgent {
        PairingAgent { request in
            switch request {
            case .confirm(let shown, _):
                if confirm || passkey == shown { return .accept }
                let digits = String(format: "%06u", shown)
                guard let ask else { return .reject("the module asks to confirm passkey \(digits); check it and rerun with --yes") }
                let answer = ask("Does the module show the passkey \(digits)? [y/N] ")
                return answer.lowercased().hasPrefix("y") ? .accept : .reject("the passkey was not confirmed")
            case .passkey:
                if let passkey { return .passkey(passkey) }
                guard let ask, let typed = UInt32(ask("Passkey shown by the module: ")) else {
                    return .reject("the module asks for the passkey it shows; rerun with --passkey NNNNNN")
                }
                return .passkey(typed)
            case .pinCode:
                return .reject("the module asked for a PIN code, which Unleashed modules do not use")
            case .display(let shown, _):
                note("Enter passkey \(String(format: "%06u", shown)) on the module.\n")
                return .accept
            case .authorize:
                return .accept
            }
        }
    }
}

/// What a module command did, as it prints it: the `--json` document and the lines for people.
public protocol ModuleReport: Sendable {
    var json: JSONValue { get }
    var text: String { get }
}

/// The adapters BlueZ knows (`unleashed adapters`).
public struct AdapterList: ModuleReport {
    public var adapters: [BlueZAdapter]

    public var json: JSONValue {
        .array(adapters.map {
            ["name": .string($0.name), "address": .string($0.address), "alias": .string($0.alias), "powered": .bool($0.powered),
             "discovering": .bool($0.discovering)]
        })
    }

    public var text: String {
        guard !adapters.isEmpty else { return "No Bluetooth adapter found." }
        return adapters.map { "\($0.name)  \($0.address)  \($0.powered ? "on " : "off")  \($0.alias)" }.joined(separator: "\n")
    }
}

/// A module `unleashed pair` paired with.
public struct PairedModule: ModuleReport {
    public var device: BlueZDevice

    public var json: JSONValue { ["address": .string(device.address), "name": device.name.map(JSONValue.string) ?? .null, "paired": true] }
    public var text: String { "Paired with \(device.name ?? device.address) (\(device.address))." }
}

/// A module `unleashed disconnect` let go of: the daemon did, or BlueZ dropped its link.
public struct DisconnectedModule: ModuleReport {
    public var address: String
    public var name: String?
    public var wasConnected: Bool
    /// The daemon held it and let go of it.
    public var daemon = false

    public var json: JSONValue {
        var members: [String: JSONValue] = ["address": .string(address), "wasConnected": .bool(wasConnected)]
        if daemon {
            members["name"] = name.map(JSONValue.string) ?? .null
            members["daemon"] = true
        }
        return .object(members)
    }

    public var text: String {
        if daemon { return "The daemon let go of \(name ?? address); it is disconnected." }
        return wasConnected ? "Disconnected from \(name ?? address)." : "\(name ?? address) was not connected."
    }
}

/// A module `unleashed forget` removed from BlueZ, or the one it did not know.
public struct ForgottenModule: ModuleReport {
    /// The address or name asked for.
    public var wanted: String
    /// The device BlueZ knew and removed; nil when it knew none.
    public var device: BlueZDevice?

    public var json: JSONValue { ["address": .string(device?.address ?? wanted), "removed": .bool(device != nil)] }

    public var text: String {
        guard let device else { return "BlueZ did not know \(wanted); nothing to forget." }
        return "Forgot \(device.name ?? wanted) (\(device.address))."
    }
}

extension BlueZDevice {
    /// The `--json` object `unleashed scan` prints for a module or camera it found: `kind` says
    /// which.
    public var sightingJSON: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address), "name": name.map(JSONValue.string) ?? .null,
            "rssi": rssi.map { .integer(Int64($0)) } ?? .null, "paired": .bool(paired),
            "kind": .string(camera != nil && advertisement == nil ? "camera" : "module"),
        ]
        if let camera, advertisement == nil {
            members["brand"] = .string(camera.brand.rawValue)
            members["model"] = camera.model.map(JSONValue.string) ?? .null
            members["pairing"] = .string(camera.pairing.rawValue)
            members["howToPair"] = .string(camera.howToPair)
        }
        if let advertisement {
            members["model"] = .string(advertisement.modelName)
            members["cameraAttached"] = .bool(advertisement.state.contains(.cameraAttached))
            members["cameraOn"] = .bool(advertisement.state.contains(.cameraOn))
            members["pairingWindowOpen"] = .bool(advertisement.state.contains(.pairingOpen))
            members["inUse"] = .bool(advertisement.state.contains(.clientConnected))
            members["batteryLow"] = .bool(advertisement.state.contains(.batteryLow))
        }
        return .object(members)
    }

    /// The line `unleashed scan` prints for a module or camera it found. A camera not open for
    /// pairing says which menu item opens it.
    public var sightingLine: String {
        var parts = [address, name ?? "(no name)", rssi.map { "\($0) dBm" } ?? "RSSI unknown"]
        if let camera, advertisement == nil {
            parts.append(camera.brand.displayName + (camera.model.map { " \($0)" } ?? ""))
            switch camera.pairing {
            case .open: parts.append("pairing open")
            case .closed where !paired: parts.append("not in pairing mode: \(camera.howToPair)")
            case .closed, .unknown: break
            }
        }
        if let advertisement {
            parts.append(advertisement.modelName)
            parts.append(advertisement.state.contains(.cameraAttached) ? (advertisement.state.contains(.cameraOn) ? "camera on" : "camera off") : "no camera")
            if advertisement.state.contains(.pairingOpen) { parts.append("pairing open") }
            if advertisement.state.contains(.clientConnected) { parts.append("in use") }
            if advertisement.state.contains(.batteryLow) { parts.append("battery low") }
        }
        if paired { parts.append("paired") }
        return parts.joined(separator: "  ")
    }
}
