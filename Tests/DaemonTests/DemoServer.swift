import Daemon
import Foundation
import UnleashedSimulator

/// The daemon's control server in the test's process, on a socket of its own, holding a
/// simulated camera as "demo": the one way the daemon's tests start a daemon. (`DaemonRig` in
/// IntegrationTests runs the built `unleashed daemon` instead, for what only the program shows.)
struct DemoServer {
    /// What the server is made of beyond its socket; each part left out is made fresh.
    struct Setup {
        /// The camera served as "demo"; a fresh simulator (finished at the end) when nil.
        var demo: Demo?
        /// The cameras served; a registry of the demo camera alone when nil.
        var cameras: CameraRegistry?
        /// Jobs kept in memory when nil.
        var jobs: JobManager?
        /// The folder for the socket and the browsers' file, removed at the end; a new one when nil.
        var directory: String?
        var access = AccessPolicy()
        var configuration = DaemonConfiguration.defaults(scope: .system, environment: [:])
        /// The web app's listener; none by default.
        var web = DaemonConfiguration.Web()
        /// A TCP listener on a port of its own, besides the socket.
        var tcp = false
        /// The paired browsers are kept in the directory's `web-clients.json` (else in memory).
        var browsersOnDisk = false
        var limits: ListenerLimits?
        /// The API says it serves demo mode.
        var demoMode = false
        var version = "0.0.0-test"
    }

    let socket: String
    let directory: String
    let demo: Demo
    let cameras: CameraRegistry
    let jobs: JobManager
    let api: ControlAPI
    let browsers: WebClients
    let server: ControlServer

    /// Runs `body` against a started server made from `setup`, then stops the server, removes its
    /// directory and finishes a simulator it started.
    static func with<T>(_ setup: Setup, _ body: (DemoServer) async throws -> T) async throws -> T {
        let demo: Demo
        if let given = setup.demo { demo = given } else { demo = try await Demo.start(stateFile: nil, options: DemoOptions()) }
        let directory = setup.directory ?? "/tmp/unleashed-test-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cameras: CameraRegistry
        if let given = setup.cameras {
            cameras = given
        } else {
            cameras = CameraRegistry()
            await cameras.add(demo.camera, name: "demo", source: "demo")
        }
        var service = setup.configuration.service
        service.socket = directory + "/run/control.sock"
        if setup.tcp { service.listen = DaemonConfiguration.ListenAddress("127.0.0.1:0", allowingAnyPort: true) }
        let browsers = try WebClients(file: setup.browsersOnDisk ? directory + "/web-clients.json" : nil)
        let jobs = setup.jobs ?? JobManager()
        let api = ControlAPI(cameras: cameras, jobs: jobs, access: setup.access, version: setup.version,
                             configuration: setup.configuration, browsers: browsers, demo: setup.demoMode)
        let server = ControlServer(service: service, api: api, web: setup.web, limits: setup.limits)
        let result: Result<T, any Error>
        do {
            try await server.start()
            let running = DemoServer(socket: service.socket, directory: directory, demo: demo, cameras: cameras, jobs: jobs,
                                     api: api, browsers: browsers, server: server)
            result = .success(try await body(running))
        } catch {
            result = .failure(error)
        }
        await server.stop()
        if setup.demo == nil { try? await demo.finish() }
        return try result.get()
    }

    /// Runs `body` with `demo`'s camera served (a fresh simulator when nil) and the socket's path:
    /// what the route and client tests talk to.
    static func with<T>(_ demo: Demo? = nil, _ body: (Demo, String) async throws -> T) async throws -> T {
        var setup = Setup()
        setup.demo = demo
        return try await with(setup) { server in try await body(server.demo, server.socket) }
    }

    /// `http://127.0.0.1:PORT` of the web app's listener, if it has one.
    var webURL: String? {
        get async { await server.webPort.map { "http://127.0.0.1:\($0)" } }
    }

    /// `http://127.0.0.1:PORT` of the TCP listener, if it has one.
    var tcpURL: String? {
        get async { await server.tcpPort.map { "http://127.0.0.1:\($0)" } }
    }
}
