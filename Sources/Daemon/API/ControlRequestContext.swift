public import Hummingbird
public import NIOCore

/// What a client may do. Each route asks for one; a client's role (and the daemon's locked
/// mode) decide which it holds.
public enum Permission: String, Sendable, CaseIterable {
    /// Read state: status, settings, jobs, events, metrics.
    case watch
    /// Take pictures: a shot, or an extra frame in a running job.
    case shoot
    /// Everything that changes the rig: settings, connecting and forgetting modules, starting
    /// and stopping jobs, focus, video, the camera's clock.
    case operate
    /// Pair and revoke browsers. An operator holds it; the daemon's own user and root on the
    /// socket keep it while the daemon is locked, so that a lost phone can be revoked without
    /// unlocking the rig.
    case access
    /// Forget this browser's own pairing ("Unpair this browser"). Every role holds it, so that a
    /// phone can leave a rig it was lent to; the locked mode takes it, so that a phone left at a
    /// stand stays paired until the daemon's owner revokes it (`unleashed web revoke`).
    case leave
}

/// Who is asking, as the access check decided it, for messages and for the permission check.
public struct ClientIdentity: Sendable, Equatable {
    /// The client's role, `operator` or `viewer`.
    public var role: String
    /// How the client was recognised, for messages: "token 'kitchen-pi'", "uid 1000 on the socket".
    public var recognisedAs: String
    /// What the client may do, after the locked mode took its share.
    public var permissions: Set<Permission>
    /// The daemon refuses `operate` to everyone while locked; a refusal says so.
    public var locked: Bool
    /// The paired browser's id, when the client is one.
    public var webClient: String?

    public init(role: String, recognisedAs: String, permissions: Set<Permission>, locked: Bool, webClient: String? = nil) {
        self.role = role
        self.recognisedAs = recognisedAs
        self.permissions = permissions
        self.locked = locked
        self.webClient = webClient
    }

    /// A client with every permission, until an access check says otherwise.
    public static let unchecked = ClientIdentity(
        role: "operator", recognisedAs: "an unchecked client", permissions: Set(Permission.allCases), locked: false)
}

/// The request context of the control API: Hummingbird's core storage plus who the client is.
public struct ControlRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Filled in by the access middleware before any route runs.
    public var client: ClientIdentity
    /// The connection the request came on, for the peer's credentials on a Unix socket.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        client = .unchecked
    }

    /// Throws 403 naming what is needed unless the client holds `permission`.
    public func authorize(_ permission: Permission) throws(HTTPError) {
        guard !client.permissions.contains(permission) else { return }
        if client.locked && [.operate, .access].contains(permission) && client.role == "operator" {
            let owner = permission == .access ? "; or run the command as the daemon's own user (or root) on its socket" : ""
            throw HTTPError(.forbidden, message: "the daemon is locked: clients may watch and shoot, not change the rig; "
                + "unlock it in the configuration (daemon.locked = false) and reload" + owner)
        }
        throw HTTPError(.forbidden, message: "this needs the operator role; \(client.recognisedAs) has the \(client.role) role")
    }

    /// The path parameter `name` as the client meant it, percent-encoding decoded: the router
    /// hands it over as written in the path (`left%20wing`), and every route reads its
    /// parameters through here, so that no route compares a name still encoded.
    public func pathParameter(_ name: String) -> String? {
        parameters.get(name).map { $0.removingPercentEncoding ?? $0 }
    }

    /// ``pathParameter(_:)``, or 400 when the path has none.
    public func requirePathParameter(_ name: String) throws(HTTPError) -> String {
        guard let value = pathParameter(name) else { throw HTTPError(.badRequest, message: "the path has no \(name)") }
        return value
    }
}
