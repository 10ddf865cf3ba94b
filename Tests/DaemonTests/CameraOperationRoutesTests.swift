import Daemon
import Foundation
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator

/// The camera routes as a script meets them with curl: the documented shapes and statuses.
@Suite("camera routes with curl")
struct CameraOperationRoutesTests {
    private static func withServer<T>(_ body: (Demo, String) async throws -> T) async throws -> T {
        try await DemoServer.with(nil, body)
    }

    @Test("listing, a setting by text, a shot and the errors have the documented shapes", .timeLimit(.minutes(1)))
    func shapes() async throws {
        try await Self.withServer { demo, socket in
            let list = try await Curl.request(socket: socket, path: "/v1/cameras")
            #expect(list.status == 200)
            let cameras = try #require(list.json?["cameras"] as? [[String: Any]])
            #expect(cameras.first?["name"] as? String == "demo")
            #expect((cameras.first?["identity"] as? [String: Any])?["capabilities"] is [String])

            let set = try await Curl.request(socket: socket, path: "/v1/cameras/demo/settings/shutter-speed",
                                             arguments: ["-X", "PUT", "--data-binary", #"{"value":"1/125"}"#])
            #expect(set.status == 200)
            #expect(set.json?["value"] as? String == "1/125")
            #expect(set.json?["raw"] as? Int == 65661)
            #expect(try await demo.camera.value(of: .shutterSpeed) == SettingValue(setting: .shutterSpeed, text: "1/125"))

            let shot = try await Curl.request(socket: socket, path: "/v1/cameras/demo/shoot", arguments: ["-X", "POST"])
            #expect(shot.status == 200)
            #expect(shot.json?["counter"] as? Int == 1)
            #expect(shot.json?["latencyMs"] is Double || shot.json?["latencyMs"] is Int)

            let unknown = try await Curl.request(socket: socket, path: "/v1/cameras/nope/settings")
            #expect(unknown.status == 404)
            #expect((unknown.json?["error"] as? [String: Any])?["message"] as? String
                == "the daemon holds no camera named 'nope'; it holds demo")

            let refused = try await Curl.request(socket: socket, path: "/v1/cameras/demo/bulb",
                                                 arguments: ["-X", "POST", "--data-binary", #"{"ms":100}"#])
            #expect(refused.status == 409)
            let error = try #require(refused.json?["error"] as? [String: Any])
            #expect(error["code"] as? String == "notInBulbMode")
            #expect((error["camera"] as? [String: Any])?["case"] as? String == "notInBulbMode")

            let malformed = try await Curl.request(socket: socket, path: "/v1/cameras/demo/focus",
                                                   arguments: ["-X", "POST", "--data-binary", "hold"])
            #expect(malformed.status == 400)
            let missing = try await Curl.request(socket: socket, path: "/v1/cameras/demo/settings/iso",
                                                 arguments: ["-X", "PUT", "--data-binary", #"{"iso":800}"#])
            #expect(missing.status == 400)
            #expect(((missing.json?["error"] as? [String: Any])?["message"] as? String)?.contains("\"value\"") == true)
        }
    }
}
