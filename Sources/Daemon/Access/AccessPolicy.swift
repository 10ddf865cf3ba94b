import Synchronization
import Hummingbird
import NIOCore

#if canImport(Glibc)
public import Glibc
#endif

/// Decides who a client is and what it may do: its token or socket peer gives a role, the
/// locked mode takes `operate`, `access` and `leave` from everyone but the daemon's own user and
/// root on the socket, who keep `access` (pairing and revoking browsers).
///
/// - A request with `Authorization: Bearer SECRET` is the token whose secret it is, on any
///   listener; a secret no token has is refused (401), never taken for a lesser role, so that a
///   mistyped or revoked token is noticed.
/// - A request without one on the Unix socket is its peer's user (`SO_PEERCRED`): root and the
///   daemon's own user are operators, everyone else who may open the socket (its group) gets
///   ``DaemonConfiguration/Service/peerRole``.
/// - A request without one that carries the web app's session cookie is the browser paired
///   with it (``WebClients``); a cookie no browser has is refused (401), and a request that
///   changes anything must also carry the page's own header, which a cross-site form cannot.
/// - A request without one on TCP is refused (401): anyone on the network may reach that port.
public struct AccessPolicy: Sendable {
    typealias Role = DaemonConfiguration.AccessToken.Role

    private let tokens: [DaemonConfiguration.AccessToken]
    private let locked: Bool
    private let peerRole: Role
    private let daemonUID: uid_t

    /// - Parameters:
    ///   - tokens: The `[[tokens]]` of the configuration.
    ///   - locked: Takes `operate` from every client, operators included.
    ///   - peerRole: The role of a socket peer that is neither root nor the daemon's user.
    ///   - daemonUID: The daemon's user, whose processes are operators on the socket.
    public init(tokens: [DaemonConfiguration.AccessToken] = [], locked: Bool = false,
                peerRole: DaemonConfiguration.AccessToken.Role = .viewer, daemonUID: uid_t = getuid()) {
        self.tokens = tokens
        self.locked = locked
        self.peerRole = peerRole
        self.daemonUID = daemonUID
    }

    /// The policy a configuration asks for.
    public init(configuration: DaemonConfiguration, daemonUID: uid_t = getuid()) {
        self.init(tokens: configuration.tokens, locked: configuration.service.locked,
                  peerRole: configuration.service.peerRole, daemonUID: daemonUID)
    }

    /// Whether any token is configured: a TCP listener is useless, and unsafe, without one.
    public var hasTokens: Bool { !tokens.isEmpty }

    /// What a role may do, after the locked mode took its share.
    public static func permissions(for role: DaemonConfiguration.AccessToken.Role, locked: Bool) -> Set<Permission> {
        var permissions: Set<Permission> = switch role {
        case .viewer: [.watch, .leave]
        case .operator: [.watch, .shoot, .operate, .access, .leave]
        }
        if locked { permissions.subtract([.operate, .access, .leave]) }
        return permissions
    }

    func identify(_ request: Request, context: ControlRequestContext, browsers: WebClients?) async throws(HTTPError) -> ClientIdentity {
        if let authorization = request.headers[.authorization] {
            guard let secret = Self.bearerSecret(authorization) else {
                throw HTTPError(.unauthorized, message: "the Authorization header must be 'Bearer SECRET'")
            }
            guard let token = token(matching: secret) else {
                throw HTTPError(.unauthorized, message: "the token is not known to this daemon")
            }
            return identity(token.role, recognisedAs: "token '\(token.name)'")
        }
        if let browsers, let secret = WebAppRoutes.sessionSecret(in: request) {
            guard let client = browsers.client(secret: secret) else {
                throw HTTPError(.unauthorized, message: "this browser is not paired with the daemon (or was revoked); pair it with a code")
            }
            if ![.get, .head].contains(request.method), request.headers[WebAppRoutes.pageHeader] == nil {
                throw HTTPError(.forbidden, message: "a change from a browser must come from the web app's page (it sends the Unleashed-Web header)")
            }
            return identity(of: client)
        }
        guard case .unixDomainSocket = context.channel.localAddress else {
            throw HTTPError(.unauthorized, message: "a bearer token is required on TCP")
        }
        guard let uid = await Self.peerUID(of: context.channel) else {
            // Without the peer's user the daemon cannot tell an operator; reading is safe.
            return identity(.viewer, recognisedAs: "an unidentified peer on the socket")
        }
        guard uid == 0 || uid == daemonUID else { return identity(peerRole, recognisedAs: "uid \(uid) on the socket") }
        // The rig's owner: an operator, who keeps `access` while locked.
        var owner = identity(.operator, recognisedAs: "uid \(uid) on the socket")
        owner.permissions.insert(.access)
        return owner
    }

    private func identity(_ role: Role, recognisedAs: String) -> ClientIdentity {
        ClientIdentity(role: role.rawValue, recognisedAs: recognisedAs,
                       permissions: Self.permissions(for: role, locked: locked), locked: locked)
    }

    /// A paired browser as the permission checks see it.
    func identity(of client: WebClient) -> ClientIdentity {
        var identity = identity(client.role, recognisedAs: "browser '\(client.name)' (\(client.id))")
        identity.webClient = client.id
        return identity
    }

    /// The token whose secret is `secret`. Every token is compared in full, so that the time
    /// taken tells nothing about which token, or how much of one, a guess matched.
    private func token(matching secret: Substring) -> DaemonConfiguration.AccessToken? {
        var found: DaemonConfiguration.AccessToken?
        for token in tokens where Self.constantTimeEqual(token.secret.utf8, secret.utf8) {
            found = token
        }
        return found
    }

    /// Equality whose time depends on the lengths only, not on where the bytes differ.
    static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let left = Array(a), right = Array(b)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            let x = index < left.count ? left[index] : 0
            let y = index < right.count ? right[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }

    /// The secret of `Bearer SECRET` (the scheme in any case, RFC 9110); nil for another scheme.
    private static func bearerSecret(_ header: String) -> Substring? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let secret = parts[1].drop(while: { $0 == " " })
        return secret.isEmpty ? nil : secret
    }

    /// The user of the process at the other end of a Unix socket, from the kernel: a client
    /// cannot claim another.
    private static func peerUID(of channel: any Channel) async -> uid_t? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        do {
            let credentials: PeerCredentials = try await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)).get()
            return credentials.uid
        } catch {
            return nil
        }
    }
}

/// `struct ucred` of `SO_PEERCRED`, which Glibc shows Swift only with `_GNU_SOURCE`.
private struct PeerCredentials: Sendable {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}

/// Fills in ``ControlRequestContext/client`` before any route runs.
struct AccessMiddleware: RouterMiddleware {
    let control: AccessControl

    func handle(_ request: Request, context: ControlRequestContext,
                next: (Request, ControlRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.client = try await control.identify(request, context: context)
        return try await next(request, context)
    }
}

/// The access policy in force, replaced whole when SIGHUP reloads the configuration, so that a
/// request is judged by one policy from start to end.
public final class AccessControl: Sendable {
    private let current: Mutex<AccessPolicy>
    /// The browsers paired with the web app; nil when the daemon serves none.
    public let browsers: WebClients?

    public init(_ policy: AccessPolicy, browsers: WebClients? = nil) {
        current = Mutex(policy)
        self.browsers = browsers
    }

    /// Who is asking, by the policy in force and the paired browsers.
    func identify(_ request: Request, context: ControlRequestContext) async throws(HTTPError) -> ClientIdentity {
        try await policy.identify(request, context: context, browsers: browsers)
    }

    /// A paired browser's identity under the policy in force.
    func identity(of client: WebClient) -> ClientIdentity { policy.identity(of: client) }

    /// The policy requests are judged by now.
    public var policy: AccessPolicy { current.withLock { $0 } }

    /// Judges the requests from now on by `policy` (tokens added or revoked, locked or not).
    public func replace(with policy: AccessPolicy) {
        current.withLock { $0 = policy }
    }
}
