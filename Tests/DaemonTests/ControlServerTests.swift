import CameraKit
import Daemon
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport
import Intervalometer
import Logging

/// The control server as clients meet it: a real socket, reached with curl.
@Suite("control server on its Unix socket")
struct ControlServerTests {
    /// The in-process simulator, started afresh.
    private static func demo() async throws -> Demo {
        try await Demo.start(stateFile: nil, options: DemoOptions())
    }

    /// A fresh directory for the socket (not yet made, so the server makes it), short enough
    /// for the 107 bytes a socket path may have.
    private static func socketPath() -> (directory: String, socket: String) {
        let directory = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))/run"
        return (directory, directory + "/control.sock")
    }

    /// Runs `body` against a started server, then stops it and removes its directories.
    private static func withServer<T>(
        cameras: [(String, any Camera)]? = nil, socketMode: Int = 0o660,
        _ body: (ControlServer, String) async throws -> T
    ) async throws -> T {
        let demo = cameras == nil ? try await Self.demo() : nil
        let (directory, socket) = socketPath()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = socket
        service.socketMode = socketMode
        let server = ControlServer(service: service, api: try await Self.api(cameras ?? [("demo", demo!.camera)]))
        try await server.start()
        let result: Result<T, any Error>
        do { result = .success(try await body(server, socket)) } catch { result = .failure(error) }
        await server.stop()
        try? await demo?.finish()
        return try result.get()
    }

    private static func api(_ cameras: [(String, any Camera)], version: String = "0.0.0-test") async throws -> ControlAPI {
        let registry = CameraRegistry()
        for (name, camera) in cameras { await registry.add(camera, name: name, source: "demo") }
        return ControlAPI(cameras: registry, jobs: JobManager(), access: AccessPolicy(), version: version)
    }

    private static func permissions(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("GET /v1/status answers 200 with the version and each camera's status")
    func status() async throws {
        let answer = try await Self.withServer { _, socket in
            try await Curl.request(socket: socket, path: "/v1/status")
        }
        #expect(answer.status == 200)
        let json = try #require(answer.json)
        #expect(json["version"] as? String == "0.0.0-test")
        #expect(json["uptimeSeconds"] is Double)
        let cameras = try #require(json["cameras"] as? [[String: Any]])
        #expect(cameras.count == 1)
        #expect(cameras.first?["name"] as? String == "demo")
        let status = try #require(cameras.first?["status"] as? [String: Any])
        #expect(status["connection"] as? String == "ready")
        #expect(status["moduleBattery"] is Int)
        #expect(status["shotsRemaining"] is Int)
        #expect(status["meteredEV"] is String)
        #expect(status["busy"] as? Bool == false)
        #expect(status["shotCounter"] as? Int == 0)
    }

    @Test("the socket has the configured mode, and a directory the server made has 0750")
    func permissions() async throws {
        for mode in [0o660, 0o600] {
            try await Self.withServer(socketMode: mode) { _, socket throws in
                var info = stat()
                #expect(stat(socket, &info) == 0)
                #expect(info.st_mode & S_IFMT == S_IFSOCK)
                #expect(try Self.permissions(socket) == mode)
                #expect(try Self.permissions((socket as NSString).deletingLastPathComponent) == 0o750)
            }
        }
    }

    @Test("an unknown path answers 404 with a JSON error that points at the API")
    func unknownPath() async throws {
        let answer = try await Self.withServer { _, socket in
            try await Curl.request(socket: socket, path: "/v2/nothing")
        }
        #expect(answer.status == 404)
        let error = try #require(answer.json?["error"] as? [String: Any])
        #expect(error["code"] as? Int == 404)
        #expect((error["message"] as? String)?.contains("/v2/nothing") == true)
    }

    @Test("a body over the limit answers 413 with a JSON error")
    func bodyTooLarge() async throws {
        let answer = try await Self.withServer { _, socket in
            try await Curl.request(socket: socket, path: "/v1/status",
                                   arguments: ["-X", "POST", "--data-binary", String(repeating: "x", count: 100_000)])
        }
        #expect(answer.status == 413)
        #expect((answer.json?["error"] as? [String: Any])?["code"] as? Int == 413)
    }

    @Test("GET /v1/events delivers a shot taken on the demo camera as a Server-Sent Event", .timeLimit(.minutes(1)))
    func events() async throws {
        let demo = try await Self.demo()
        let (shotEvent, shotData) = try await Self.withServer(cameras: [("demo", demo.camera)]) { _, socket in
            try await Curl.streaming(socket: socket, path: "/v1/events") { lines in
                var iterator = lines.makeAsyncIterator()
                // The server subscribes before it sends this, so the shot below cannot be missed.
                #expect(await iterator.next() == ": subscribed")
                let shot = try await demo.camera.shoot()
                var previous = ""
                while let line = await iterator.next() {
                    if previous == "event: shotCompleted" { return (previous, line) }
                    previous = line
                }
                Issue.record("the stream ended before the shot (counter \(shot.counter)) was reported")
                return ("", "")
            }
        }
        try await demo.finish()
        #expect(shotEvent == "event: shotCompleted")
        let data = try #require(shotData.hasPrefix("data: ") ? Data(shotData.dropFirst(6).utf8) : nil)
        let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(fields["counter"] as? Int == 1)
        #expect(fields["camera"] as? String == "demo")
    }

    @Test("stopping removes the socket file, even with an event stream open", .timeLimit(.minutes(1)))
    func stopRemovesSocket() async throws {
        let (directory, socket) = Self.socketPath()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = socket
        let demo = try await Self.demo()
        let server = ControlServer(service: service, api: try await Self.api([("demo", demo.camera)]))
        try await server.start()
        #expect(FileManager.default.fileExists(atPath: socket))
        try await Curl.streaming(socket: socket, path: "/v1/events") { lines in
            var iterator = lines.makeAsyncIterator()
            #expect(await iterator.next() == ": subscribed")
            await server.stop()
            // The server ends the stream instead of waiting for the client to leave.
            while await iterator.next() != nil {}
        }
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        try await demo.finish()
    }

    @Test("a client that goes away ends its subscriptions while the server runs on", .timeLimit(.minutes(1)))
    func clientLeaves() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(cameras: [("demo", demo.camera)]) { _, socket in
            try await Curl.streaming(socket: socket, path: "/v1/events") { lines in
                var iterator = lines.makeAsyncIterator()
                #expect(await iterator.next() == ": subscribed")
                #expect(demo.camera.eventSubscriberCount == 1)
            }
            _ = await eventually(every: .milliseconds(50)) { demo.camera.eventSubscriberCount == 0 }
            #expect(demo.camera.eventSubscriberCount == 0, "the subscription ended with the client")
            try await demo.finish()
            #expect(try await Curl.request(socket: socket, path: "/v1/status").status == 200)
        }
    }

    @Test("a socket path that cannot be bound, or a file where the directory goes, fails start with the reason")
    func unusablePaths() async throws {
        let file = "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: file) }
        for (socket, reason) in [
            (file + "/control.sock", "\(file) for the control socket: it is not a directory"),
            ("/tmp/" + String(repeating: "d", count: 90) + "/c", "directory may have at most 92 bytes"),
            ("/tmp/" + String(repeating: "s", count: 110), "more than 107 bytes"),
        ] {
            var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
            service.socket = socket
            let server = ControlServer(service: service, api: try await Self.api([]))
            let error = await #expect(throws: ControlServerError.self) { try await server.start() }
            #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
        }
    }

    @Test("a second server on the same path fails and leaves the first one's socket alone; a stale socket file is replaced")
    func socketInUse() async throws {
        try await Self.withServer { _, socket in
            var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
            service.socket = socket
            let second = ControlServer(service: service, api: try await Self.api([], version: "0.0.0-second"))
            let error = await #expect(throws: ControlServerError.self) { try await second.start() }
            #expect(error?.description.contains("another process is listening") == true)
            let answer = try await Curl.request(socket: socket, path: "/v1/status")
            #expect(answer.json?["version"] as? String == "0.0.0-test")
        }

        let (directory, socket) = Self.socketPath()
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = socket
        let crashed = ControlServer(service: service, api: try await Self.api([], version: "0.0.0-crashed"))
        try await crashed.start()
        // A daemon that died leaves its socket file behind with nobody listening.
        let stale = socket + ".kept"
        #expect(link(socket, stale) == 0)
        await crashed.stop()
        #expect(rename(stale, socket) == 0)
        let next = ControlServer(service: service, api: try await Self.api([], version: "0.0.0-next"))
        try await next.start()
        #expect(try await Curl.request(socket: socket, path: "/v1/status").status == 200)
        await next.stop()
    }

    @Test("a file that is not a socket at the socket's path is refused, by start and by the check, and kept as it was")
    func notASocket() async throws {
        let (directory, socket) = Self.socketPath()
        let top = (directory as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: top) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
        service.socket = socket
        let target = top + "/notes.txt"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
        let kinds: [(String, () throws -> Void)] = [
            ("a regular file", { try Data("keep me".utf8).write(to: URL(fileURLWithPath: socket)) }),
            ("a directory", { try FileManager.default.createDirectory(atPath: socket, withIntermediateDirectories: false) }),
            ("a symbolic link", { try FileManager.default.createSymbolicLink(atPath: socket, withDestinationPath: target) }),
        ]
        for (kind, make) in kinds {
            try make()
            let checked = #expect(throws: ControlServerError.self) { try ControlServer.check(service, hasTokens: false) }
            #expect(checked == .couldNotListen(socket, "\(kind) is there, not a socket, and the daemon does not replace it; "
                + "move it away, or set daemon.socket (or UNLEASHED_SOCKET) to another path"))
            let server = ControlServer(service: service, api: try await Self.api([]))
            let started = await #expect(throws: ControlServerError.self) { try await server.start() }
            #expect(started == checked)
            #expect(try FileManager.default.attributesOfItem(atPath: socket)[.type] as? FileAttributeType != .typeSocket, "\(kind) is still there")
            try FileManager.default.removeItem(atPath: socket)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
        // The check passes where the daemon may start, and says why TCP without tokens may not.
        try ControlServer.check(service, hasTokens: false)
        service.listen = DaemonConfiguration.ListenAddress("127.0.0.1:8433")
        #expect(throws: ControlServerError.noTokenForTCP("127.0.0.1:8433")) { try ControlServer.check(service, hasTokens: false) }
    }

    @Test("stopping removes the server's own socket only, not one that took its path since")
    func stopRemovesOnlyItsOwnSocket() async throws {
        try await Self.withServer(cameras: []) { first, socket in
            // Someone removes the socket, and another daemon starts on the path.
            #expect(unlink(socket) == 0)
            var service = DaemonConfiguration.defaults(scope: .system, environment: [:]).service
            service.socket = socket
            let second = ControlServer(service: service, api: try await Self.api([], version: "0.0.0-second"))
            try await second.start()
            await first.stop()
            let answer = try await Curl.request(socket: socket, path: "/v1/status")
            #expect(answer.json?["version"] as? String == "0.0.0-second", "the second daemon's socket is still there")
            await second.stop()
            #expect(!FileManager.default.fileExists(atPath: socket), "the second removes its own")
        }
    }
}
