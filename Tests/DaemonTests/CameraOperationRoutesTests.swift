import CameraKit
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
                                                 arguments: ["-X", "PUT", "--data-binary", "{}"])
            #expect(missing.status == 400)
            #expect(((missing.json?["error"] as? [String: Any])?["message"] as? String)?.contains("\"value\"") == true)
        }
    }

    @Test("a body with a member a route does not know is refused with 400 naming it, as the jobs API does", .timeLimit(.minutes(1)))
    func unknownMembers() async throws {
        try await Self.withServer { demo, socket in
            let before = try await demo.camera.value(of: .iso)
            let cases: [(path: String, method: String, body: String, message: String)] = [
                ("settings/iso", "PUT", #"{"value": "800", "vaule": "1600"}"#, "vaule: unknown member; known members: raw, value"),
                ("bulb", "POST", #"{"ms": 100, "seconds": 1}"#, "seconds: unknown member; known members: ms"),
                ("bulb", "POST", #"{"ms": 1.5}"#, "ms: expected a whole number from \(Int64.min) to \(Int64.max)"),
                ("bulb", "POST", #"{"milliseconds": 100}"#, "ms: missing"),
                ("focus", "POST", #"{"hold": false, "mode": "af"}"#, "mode: unknown member; known members: hold"),
                ("focus", "POST", #"{"hold": "yes"}"#, "hold: expected true or false"),
                ("time", "PUT", #"{"unixMilliseconds": 0, "utcOffsetMinutes": 0, "zone": "UTC"}"#,
                 "zone: unknown member; known members: unixMilliseconds, utcOffsetMinutes"),
            ]
            for (path, method, body, message) in cases {
                let answer = try await Curl.request(socket: socket, path: "/v1/cameras/demo/" + path,
                                                    arguments: ["-X", method, "--data-binary", body])
                #expect(answer.status == 400, "\(path): \(answer.body)")
                let error = try #require(answer.json?["error"] as? [String: Any])
                #expect(error["code"] as? String == "invalidArgument")
                #expect(error["message"] as? String == message, "\(path): \(answer.body)")
            }
            #expect(try await demo.camera.value(of: .iso) == before, "the refused change was not made")
        }
    }

    @Test("video/stop with no recording running answers 409, the camera's refusal, as the API documents", .timeLimit(.minutes(1)))
    func stopVideoNotRecording() async throws {
        try await Self.withServer { _, socket in
            let stop = try await Curl.request(socket: socket, path: "/v1/cameras/demo/video/stop", arguments: ["-X", "POST"])
            #expect(stop.status == 409, "\(stop.body)")
            let error = try #require(stop.json?["error"] as? [String: Any])
            #expect((error["message"] as? String)?.contains("not recording") == true, "\(stop.body)")
        }
        // What the API's description says of it, where a client reads it.
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/api")
        let openAPI = try String(contentsOf: docs.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let route = try #require(openAPI.components(separatedBy: "\n  /v1/cameras/{camera}/video/stop:\n").dropFirst().first)
            .components(separatedBy: "\n  /").first ?? ""
        #expect(route.contains("With no recording running the camera refuses: 409"))
        #expect(route.contains("\"409\": {$ref: \"#/components/responses/CameraRefused\"}"))
        let guide = try String(contentsOf: docs.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(guide.split(separator: "\n").contains { $0.hasPrefix("| 409 |") && $0.contains("`video/stop` with no recording running") })
    }
}
