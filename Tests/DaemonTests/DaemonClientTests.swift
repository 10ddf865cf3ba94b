import CameraKit
import Daemon
@testable import DaemonClient
import Foundation
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// The client against a real control server on its socket, with the demo camera in its registry:
/// what the camera does through the daemon must be what it does directly.
@Suite("daemon client and remote camera")
struct DaemonClientTests {
    /// Runs `body` with a client of a server holding `demo`'s camera as "demo".
    private static func withServer<T>(_ demo: Demo, _ body: (DaemonClient) async throws -> T) async throws -> T {
        try await DemoServer.with(demo) { _, socket in try await body(DaemonClient(socketPath: socket)) }
    }

    private static func demo() async throws -> Demo {
        try await Demo.start(stateFile: nil, options: DemoOptions())
    }

    @Test("status, settings and values read the same through the daemon", .timeLimit(.minutes(1)))
    func reads() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            #expect(await client.isAnswering(timeout: .seconds(10)))
            #expect(client.isListening())
            let remote = try await RemoteCamera.open(client: client, camera: nil)
            #expect(remote.name == "demo")
            #expect(remote.identity == demo.camera.identity)
            #expect(try await remote.status() == (try await demo.camera.status()))
            #expect(await remote.isReady)
            #expect(await remote.lastMeteredEV == (try await demo.camera.status()).meteredEV)
            let settings = try await remote.settings()
            #expect(settings == (try await demo.camera.settings()))
            for descriptor in settings {
                #expect(try await remote.value(of: descriptor.setting) == descriptor.value)
            }
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("setting a value, and a refused one, give what the camera gives", .timeLimit(.minutes(1)))
    func setting() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            let remote = try await RemoteCamera.open(client: client, camera: "DEMO")
            let iso = try #require(try await remote.settings().first { $0.setting == .iso })
            let other = try #require(iso.choices.last { $0 != iso.value })
            #expect(try await remote.set(other) == other)
            #expect(try await demo.camera.value(of: .iso) == other)

            let odd = SettingValue.iso(try #require(ISOSpeed(12345)))
            let direct = await #expect(throws: CameraError.self) { try await demo.camera.set(odd) }
            let viaDaemon = await #expect(throws: CameraError.self) { try await remote.set(odd) }
            #expect(direct != nil)
            #expect(viaDaemon == direct)
            #expect(viaDaemon?.description == direct?.description)
            if case .valueNotOffered(_, let nearest, _)? = viaDaemon { #expect(!nearest.isEmpty) } else {
                Issue.record("expected valueNotOffered, got \(String(describing: viaDaemon))")
            }
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("shoot, bulb and focus through the daemon; a shot is seen through events()", .timeLimit(.minutes(1)))
    func operations() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            let remote = try await RemoteCamera.open(client: client, camera: "demo")
            let events = remote.events()
            let shot = try await remote.shoot()
            #expect(shot.counter == 1)
            var seen: Int?
            for await event in events {
                if case .shotCompleted(let counter, _) = event { seen = counter; break }
            }
            #expect(seen == 1)

            let notBulb = await #expect(throws: CameraError.self) { try await remote.bulb(.milliseconds(50)) }
            #expect(notBulb?.code == "notInBulbMode")
            _ = try await remote.set(.shutterSpeed(.bulb))
            let exposure = try await remote.bulb(.milliseconds(80))
            #expect(exposure.shot.counter == 2)
            #expect(exposure.ending == .deadline)

            let focus = try await remote.focus(hold: true)
            #expect(focus == (try await demo.camera.focus(hold: false)))
            try await remote.release()
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("a camera opened without events shoots at once, and subscribes when its events are first asked for", .timeLimit(.minutes(1)))
    func eventsOnDemand() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            let remote = try await RemoteCamera.open(client: client, camera: nil, events: false)
            #expect(remote.name == "demo")
            #expect(try await remote.shoot().counter == 1)
            let subscribers = demo.camera.eventSubscriberCount
            let events = remote.events()
            // The subscription is made in the background: the daemon subscribes to the camera for it.
            try #require(await eventually { demo.camera.eventSubscriberCount > subscribers }, "the daemon never subscribed")
            #expect(try await remote.shoot().counter == 2)
            var seen: Int?
            for await event in events {
                if case .shotCompleted(let counter, _) = event { seen = counter; break }
            }
            #expect(seen == 2)
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("video, the camera's clock and geotags go through; a bad one fails as it does directly", .timeLimit(.minutes(1)))
    func rigOperations() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            let remote = try await RemoteCamera.open(client: client, camera: "demo")
            try await remote.startVideo()
            let clip = try await remote.stopVideo()
            #expect(clip >= .zero)
            try await remote.setTime(WallTime(unixMilliseconds: 1_763_900_000_000, utcOffsetMinutes: 60))
            try await remote.geotag(GeoPosition(latitude: 47.37, longitude: 8.54, altitude: 408, fixTime: 1_763_900_000_000))
            let badTime = WallTime(unixMilliseconds: 0, utcOffsetMinutes: 2000)
            let direct = await #expect(throws: CameraError.self) { try await demo.camera.setTime(badTime) }
            let viaDaemon = await #expect(throws: CameraError.self) { try await remote.setTime(badTime) }
            #expect(viaDaemon == direct)
            let badPlace = GeoPosition(latitude: 91, longitude: 0, fixTime: 0)
            let placeError = await #expect(throws: CameraError.self) { try await remote.geotag(badPlace) }
            #expect(placeError?.description == badPlace.problem)
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("Server-Sent Events are read whatever the chunks' boundaries")
    func serverSentEvents() async throws {
        let text = ": subscribed\n\nevent: shotCompleted\ndata: {\"counter\":1}\n\nevent: busy\r\ndata: a\ndata: b\n\n"
        let bytes = Array(text.utf8)
        for size in [1, 3, 7, bytes.count] {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            for start in stride(from: 0, to: bytes.count, by: size) {
                events += parser.feed(bytes[start..<min(start + size, bytes.count)])
            }
            #expect(events == [
                ServerSentEvent(name: "", data: "subscribed", isComment: true),
                ServerSentEvent(name: "shotCompleted", data: "{\"counter\":1}"),
                ServerSentEvent(name: "busy", data: "a\nb"),
            ])
        }
    }

    @Test("a bulb exposure whose client goes away is ended at once, not left open", .timeLimit(.minutes(1)))
    func bulbClientLeaves() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            _ = try await demo.camera.set(.shutterSpeed(.bulb))
            let before = try await demo.camera.status().shotCounter
            let remote = try await RemoteCamera.open(client: client, camera: "demo")
            // Ten minutes, past the test's time limit: a picture reported within the test was
            // ended early.
            let exposure = Task { try await remote.bulb(.seconds(600)) }
            // The client leaves once the exposure is under way.
            try #require(try await eventually(every: .milliseconds(20), giveUpAfter: .seconds(25)) { try await demo.camera.status().busy }, "the bulb exposure never began")
            exposure.cancel()
            _ = await exposure.result
            // The daemon's request is cancelled with the connection: the module closes the
            // shutter early and the picture is reported.
            #expect(try await eventually(every: .milliseconds(50), giveUpAfter: .seconds(25)) { try await demo.camera.status().shotCounter != before },
                    "the picture was never reported: the exposure was left open")
            #expect(try await demo.camera.status().shotCounter == before + 1)
            #expect(try await demo.camera.status().busy == false)
            await remote.close()
        }
        try await demo.finish()
    }

    @Test("the daemon's error answers come back as values with their words")
    func httpErrors() async throws {
        let demo = try await Self.demo()
        try await Self.withServer(demo) { client in
            let missing = await #expect(throws: DaemonClientError.self) { try await client.request("GET", "/v1/cameras/nope") }
            guard case .http(let status, _, let message, let camera)? = missing else {
                Issue.record("expected an HTTP error, got \(String(describing: missing))")
                return
            }
            #expect(status == 404)
            #expect(message == "the daemon holds no camera named 'nope'; it holds demo")
            #expect(camera == nil)

            let unknown = await #expect(throws: DaemonClientError.self) {
                try await client.request("GET", "/v1/cameras/demo/settings/zoom")
            }
            #expect(unknown == .http(status: 400, code: "unknownSetting", message: CameraError.unknownSetting("zoom").description,
                                     camera: .unknownSetting("zoom")))

            let noBody = await #expect(throws: DaemonClientError.self) {
                try await client.request("POST", "/v1/cameras/demo/bulb", body: [:])
            }
            if case .http(400, "invalidArgument", let message, _)? = noBody {
                #expect(message == "ms: missing", "\(message)")
            } else {
                Issue.record("expected 400 naming ms, got \(String(describing: noBody))")
            }
            let notOpened = await #expect(throws: DaemonClientError.self) {
                try await RemoteCamera.open(client: client, camera: "nope")
            }
            #expect(notOpened?.description == "the daemon holds no camera named 'nope'; it holds demo")
        }
        try await demo.finish()
    }

    @Test("with no daemon, isAnswering says no at once and requests fail as not reachable", .timeLimit(.minutes(1)))
    func noDaemon() async throws {
        let directory = "/tmp/unleashed-client-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A socket file a dead daemon left: it exists, but nobody listens.
        let stale = directory + "/stale.sock"
        #expect(UnixSocketFile.leaveStale(stale))

        for path in [directory + "/none.sock", stale] {
            let client = DaemonClient(socketPath: path)
            // An hour's timeout, past the test's limit: the answer comes from the refused
            // connection, not from the wait running out.
            #expect(await client.isAnswering(timeout: .seconds(3600)) == false)
            #expect(client.isListening() == false)
            let error = await #expect(throws: DaemonClientError.self) { try await client.request("GET", "/v1/status") }
            if case .notReachable(let socket, _)? = error { #expect(socket == path) } else {
                Issue.record("expected notReachable, got \(String(describing: error))")
            }
        }
    }

    @Test("the default socket is the one the user's daemon listens on")
    func defaultSocket() {
        for environment in [["XDG_RUNTIME_DIR": "/run/user/1000"], [:]] {
            #expect(DaemonClient.defaultSocketPath(environment: environment)
                == DaemonConfiguration.defaults(scope: .user, environment: environment).service.socket)
        }
        #expect(DaemonClient.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
            == "/run/user/1000/unleashed/control.sock")
    }
}
