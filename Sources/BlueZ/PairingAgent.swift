import DBus
import Synchronization

/// What BlueZ asks while pairing.
public enum PairingRequest: Sendable, Hashable {
    /// Does the module show this passkey? (numeric comparison)
    case confirm(passkey: UInt32, device: String)
    /// Type the passkey the module shows.
    case passkey(device: String)
    /// Type the PIN code (legacy pairing).
    case pinCode(device: String)
    /// Show this passkey; the module's side types it.
    case display(passkey: UInt32, device: String)
    /// May this device pair or use a service?
    case authorize(device: String)
}

/// How a pairing question is answered.
public enum PairingAnswer: Sendable, Hashable {
    case accept
    case passkey(UInt32)
    case pinCode(String)
    /// Refuse, and say why (the reason is reported as the pairing failure).
    case reject(String)
}

/// An `org.bluez.Agent1` that this process serves while it pairs, so that pairing does not
/// depend on a desktop agent being around (a Raspberry Pi has none).
public final class PairingAgent: Sendable {
    /// The agent's object path on the client's connection.
    public static let path = "/org/unleashed/agent"

    /// The IO capability announced to BlueZ; it decides which questions come.
    public let capability: String
    private let answer: @Sendable (PairingRequest) async -> PairingAnswer
    private let refusal = Mutex<String?>(nil)

    /// - Parameters:
    ///   - capability: `KeyboardDisplay` (default: can show and type a passkey),
    ///     `DisplayYesNo`, `KeyboardOnly`, `DisplayOnly` or `NoInputNoOutput`.
    ///   - answer: asked for every question; it may prompt a person.
    public init(capability: String = "KeyboardDisplay", answer: @escaping @Sendable (PairingRequest) async -> PairingAnswer) {
        self.capability = capability
        self.answer = answer
    }

    /// Why the last question was refused here, if it was.
    public var lastRefusal: String? { refusal.withLock { $0 } }

    func register(on client: BlueZClient) async throws(BlueZError) {
        client.connection.handleMethodCalls { [self] call in
            Task { await self.handle(call) }
        }
        do {
            try await client.call("/org/bluez", BlueZName.agentManager, "RegisterAgent", [.objectPath(Self.path), .string(capability)])
        } catch .dbus(let error) where error.name == BlueZName.Error.alreadyExists {
            // Registered earlier on this connection.
        }
    }

    func unregister(from client: BlueZClient) async {
        _ = try? await client.call("/org/bluez", BlueZName.agentManager, "UnregisterAgent", [.objectPath(Self.path)])
        client.connection.handleMethodCalls(nil)
    }

    private func handle(_ call: DBusIncomingCall) async {
        let message = call.message
        guard message.path == Self.path, message.interface == BlueZName.agent else {
            return call.fail(DBusError.unknownMethodName, "no such method \(message.member ?? "")")
        }
        let device = message.body.first?.stringValue ?? ""
        let request: PairingRequest
        switch message.member {
        case "Release", "Cancel":
            return call.reply()
        case "RequestConfirmation":
            request = .confirm(passkey: UInt32(message.body.last?.intValue ?? 0), device: device)
        case "RequestPasskey":
            request = .passkey(device: device)
        case "RequestPinCode":
            request = .pinCode(device: device)
        case "DisplayPasskey":
            request = .display(passkey: UInt32(message.body.count > 1 ? message.body[1].intValue ?? 0 : 0), device: device)
        case "DisplayPinCode":
            request = .display(passkey: UInt32(message.body.last?.stringValue ?? "") ?? 0, device: device)
        case "RequestAuthorization", "AuthorizeService":
            request = .authorize(device: device)
        default:
            return call.fail(DBusError.unknownMethodName, "no such method \(message.member ?? "")")
        }
        switch await answer(request) {
        case .accept:
            call.reply()
        case .passkey(let passkey):
            call.reply([.uint32(passkey)])
        case .pinCode(let pin):
            call.reply([.string(pin)])
        case .reject(let reason):
            refusal.withLock { $0 = reason }
            call.fail(BlueZName.Error.rejected, reason)
        }
    }
}
