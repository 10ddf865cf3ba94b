import Foundation
import Hummingbird
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedSimulator
@testable import Daemon

/// Who may do what, as clients meet it: real requests with curl, on the socket and on TCP.
@Suite("access: tokens, socket peers, locked mode, TCP")
struct AccessTests {
    static let operatorSecret = "operator-secret-0123456789"
    static let viewerSecret = "viewer-secret-0123456789"
    static let tokens = [
        DaemonConfiguration.AccessToken(name: "desk", secret: operatorSecret, role: .operator),
        DaemonConfiguration.AccessToken(name: "dashboard", secret: viewerSecret, role: .viewer),
    ]

    /// A server whose `/v1/test/{watch,shoot,operate}` each need that permission, so that the
    /// checks are tested before routes that need them exist.
    static func withServer<T>(
        access: AccessPolicy, listen: DaemonConfiguration.ListenAddress? = nil, socketMode: Int = 0o660,
        openDirectories: Bool = false,
        _ body: (ControlServer, String) async throws -> T
    ) async throws -> T {
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions())
        let top = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        let directory = top + "/run"
        defer { try? FileManager.default.removeItem(atPath: top) }
        if openDirectories {
            // Another user must reach the socket: the server keeps a directory that exists.
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            chmod(top, 0o755)
            chmod(directory, 0o755)
        }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = directory + "/control.sock"
        service.socketMode = socketMode
        service.listen = listen
        let registry = CameraRegistry()
        await registry.add(demo.camera, name: "demo", source: "demo")
        var api = ControlAPI(cameras: registry, jobs: JobManager(), access: access, version: "0.0.0-test")
        api.extraRoutes = { v1 in
            for permission in Permission.allCases {
                v1.get("test/\(permission.rawValue)") { _, context in
                    try context.authorize(permission)
                    return Response.json(.ok, .object(["client": .string(context.client.recognisedAs)]))
                }
            }
        }
        let server = ControlServer(service: service, api: api)
        try await server.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(server, service.socket)) } catch { result = .failure(error) }
        await server.stop()
        try? await demo.finish()
        return try result.get()
    }

    static func bearer(_ secret: String) -> [String] { ["-H", "Authorization: Bearer \(secret)"] }

    static func message(_ answer: Curl.Answer) -> String? {
        (answer.json?["error"] as? [String: Any])?["message"] as? String
    }

    @Test("a viewer token may watch but not operate or shoot, and the refusal names both roles")
    func viewerToken() async throws {
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens)) { _, socket in
            let status = try await Curl.request(socket: socket, path: "/v1/status", arguments: Self.bearer(Self.viewerSecret))
            #expect(status.status == 200)
            let watch = try await Curl.request(socket: socket, path: "/v1/test/watch", arguments: Self.bearer(Self.viewerSecret))
            #expect(watch.json?["client"] as? String == "token 'dashboard'")
            for permission in ["operate", "shoot"] {
                let refused = try await Curl.request(socket: socket, path: "/v1/test/\(permission)",
                                                     arguments: Self.bearer(Self.viewerSecret))
                #expect(refused.status == 403)
                #expect(Self.message(refused) == "this needs the operator role; token 'dashboard' has the viewer role")
            }
        }
    }

    @Test("an operator token may operate")
    func operatorToken() async throws {
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens)) { _, socket in
            let answer = try await Curl.request(socket: socket, path: "/v1/test/operate", arguments: Self.bearer(Self.operatorSecret))
            #expect(answer.status == 200)
            #expect(answer.json?["client"] as? String == "token 'desk'")
        }
    }

    @Test("a token the daemon does not know is refused with 401, not taken for a viewer")
    func unknownToken() async throws {
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens)) { _, socket in
            for secret in ["not-a-token-of-this-daemon", Self.operatorSecret + "x", String(Self.operatorSecret.dropLast())] {
                let answer = try await Curl.request(socket: socket, path: "/v1/status", arguments: Self.bearer(secret))
                #expect(answer.status == 401)
                #expect(Self.message(answer) == "the token is not known to this daemon")
            }
            let basic = try await Curl.request(socket: socket, path: "/v1/status", arguments: ["-H", "Authorization: Basic eDp5"])
            #expect(basic.status == 401)
        }
    }

    @Test("locked: an operator may watch and shoot but not operate, and is told the daemon is locked")
    func locked() async throws {
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens, locked: true)) { _, socket in
            let token = Self.bearer(Self.operatorSecret)
            #expect(try await Curl.request(socket: socket, path: "/v1/status", arguments: token).status == 200)
            #expect(try await Curl.request(socket: socket, path: "/v1/test/shoot", arguments: token).status == 200)
            let refused = try await Curl.request(socket: socket, path: "/v1/test/operate", arguments: token)
            #expect(refused.status == 403)
            #expect(Self.message(refused)?.hasPrefix("the daemon is locked") == true)
            #expect(Self.message(refused)?.contains("(daemon.locked = false)") == true, "the key the file has: \(refused.body)")
            // Without a token: root on the socket is an operator, and is locked out the same way.
            let peer = try await Curl.request(socket: socket, path: "/v1/test/operate")
            #expect(peer.status == 403)
            #expect(Self.message(peer)?.hasPrefix("the daemon is locked") == true)
            // Pairing and revoking browsers: an operator token is locked out, the rig's owner on
            // the socket is not (a lost phone is revoked without unlocking the rig).
            let tokenAccess = try await Curl.request(socket: socket, path: "/v1/test/access", arguments: token)
            #expect(tokenAccess.status == 403 && Self.message(tokenAccess)?.hasPrefix("the daemon is locked") == true)
            #expect(try await Curl.request(socket: socket, path: "/v1/test/access").status == 200)
        }
    }

    @Test("without a token, root and the daemon's own user on the socket are operators")
    func socketPeerOperator() async throws {
        try #require(getuid() == 0, "the test names root's uid")
        // The daemon's user is someone else: root is an operator all the same.
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens, daemonUID: 4242)) { _, socket in
            let answer = try await Curl.request(socket: socket, path: "/v1/test/operate")
            #expect(answer.status == 200)
            #expect(answer.json?["client"] as? String == "uid 0 on the socket")
        }
    }

    @Test("another user on the socket gets the peer role: viewer by default, operator when configured")
    func socketPeerOtherUser() async throws {
        try #require(getuid() == 0, "the test runs curl as another user")
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        try await Self.withServer(access: AccessPolicy(), socketMode: 0o666, openDirectories: true) { _, socket in
            let watch = try await Self.run(nobody + ["/usr/bin/curl", "-s", "--unix-socket", socket, "http://localhost/v1/test/watch"])
            #expect(watch.contains("uid 65534 on the socket"))
            let refused = try await Self.run(nobody + ["/usr/bin/curl", "-s", "--unix-socket", socket, "http://localhost/v1/test/operate"])
            #expect(refused.contains("this needs the operator role; uid 65534 on the socket has the viewer role"))
        }
        try await Self.withServer(access: AccessPolicy(peerRole: .operator), socketMode: 0o666, openDirectories: true) { _, socket in
            let allowed = try await Self.run(nobody + ["/usr/bin/curl", "-s", "--unix-socket", socket, "http://localhost/v1/test/operate"])
            #expect(allowed.contains("uid 65534 on the socket"))
        }
    }

    @Test("TCP: every request needs a token; the same routes answer with one")
    func tcp() async throws {
        var listen = try #require(DaemonConfiguration.ListenAddress("127.0.0.1:1"))
        listen.port = 0
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens), listen: listen) { server, socket in
            let port = try #require(await server.tcpPort)
            #expect(port > 0)
            let url = "http://127.0.0.1:\(port)"
            let anonymous = try await Self.tcpRequest(url + "/v1/status")
            #expect(anonymous.status == 401)
            #expect(Self.message(anonymous) == "a bearer token is required on TCP")
            let viewer = try await Self.tcpRequest(url + "/v1/status", arguments: Self.bearer(Self.viewerSecret))
            #expect(viewer.status == 200)
            #expect(try await Self.tcpRequest(url + "/v1/test/operate", arguments: Self.bearer(Self.viewerSecret)).status == 403)
            #expect(try await Self.tcpRequest(url + "/v1/test/operate", arguments: Self.bearer(Self.operatorSecret)).status == 200)
            // The socket still answers without a token.
            #expect(try await Curl.request(socket: socket, path: "/v1/status").status == 200)
        }
    }

    @Test("a TCP port already taken fails the start, and leaves no socket behind")
    func tcpPortTaken() async throws {
        var listen = try #require(DaemonConfiguration.ListenAddress("127.0.0.1:1"))
        listen.port = 0
        try await Self.withServer(access: AccessPolicy(tokens: Self.tokens), listen: listen) { first, _ in
            let port = try #require(await first.tcpPort)
            var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
            let top = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: top) }
            service.socket = top + "/run/control.sock"
            service.listen = DaemonConfiguration.ListenAddress("127.0.0.1:\(port)")
            let api = ControlAPI(cameras: CameraRegistry(), jobs: JobManager(), access: AccessPolicy(tokens: Self.tokens), version: "0")
            let second = ControlServer(service: service, api: api)
            await #expect(throws: ControlServerError.self) { try await second.start() }
            #expect(!FileManager.default.fileExists(atPath: service.socket))
            #expect(await second.tcpPort == nil)
        }
    }

    @Test("a TCP listener without any token is refused before anything listens")
    func tcpNeedsToken() async throws {
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        let top = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: top) }
        service.socket = top + "/run/control.sock"
        service.listen = DaemonConfiguration.ListenAddress("127.0.0.1:8433")
        let api = ControlAPI(cameras: CameraRegistry(), jobs: JobManager(), access: AccessPolicy(), version: "0")
        let server = ControlServer(service: service, api: api)
        await #expect(throws: ControlServerError.noTokenForTCP("127.0.0.1:8433")) { try await server.start() }
        #expect(ControlServerError.noTokenForTCP("127.0.0.1:8433").description
            == "cannot listen on 127.0.0.1:8433: listen is set but no [[tokens]] are configured; a TCP listener needs one")
        #expect(!FileManager.default.fileExists(atPath: service.socket))
    }

    @Test("roles and locked mode give these permissions")
    func permissions() {
        #expect(AccessPolicy.permissions(for: .viewer, locked: false) == [.watch, .leave])
        #expect(AccessPolicy.permissions(for: .operator, locked: false) == [.watch, .shoot, .operate, .access, .leave])
        #expect(AccessPolicy.permissions(for: .viewer, locked: true) == [.watch])
        #expect(AccessPolicy.permissions(for: .operator, locked: true) == [.watch, .shoot])
    }

    @Test("secrets compare equal only when every byte and the length match")
    func constantTimeEqual() {
        #expect(AccessPolicy.constantTimeEqual(Array("abcdef".utf8), Array("abcdef".utf8)))
        #expect(!AccessPolicy.constantTimeEqual(Array("abcdef".utf8), Array("abcdeg".utf8)))
        #expect(!AccessPolicy.constantTimeEqual(Array("abcdef".utf8), Array("abcde".utf8)))
        #expect(!AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc\0".utf8)))
        #expect(AccessPolicy.constantTimeEqual([UInt8](), [UInt8]()))
    }

    @Test("daemon.peer_role is read, and a role that does not exist is an error")
    func peerRoleConfiguration() throws {
        let files = try ConfigurationFiles()
        #expect(try files.load().service.peerRole == .viewer)
        try files.write("unleashed.toml", "[daemon]\npeer_role = \"operator\"\n")
        #expect(try files.load().service.peerRole == .operator)
        let failure = try files.failure("[daemon]\npeer_role = \"admin\"\n")
        #expect(failure == "\(files.system):2: daemon.peer_role: 'admin' is not a role; use operator or viewer")
    }

    /// curl over TCP.
    static func tcpRequest(_ url: String, arguments: [String] = []) async throws -> Curl.Answer {
        try await Curl.request(url: url, arguments: arguments)
    }

    /// Runs a command and returns its standard output, read on a thread of its own.
    static func run(_ command: [String]) async throws -> String {
        try await runProgram(URL(fileURLWithPath: command[0]), Array(command.dropFirst()),
                             environment: ProcessInfo.processInfo.environment).stdout
    }
}
