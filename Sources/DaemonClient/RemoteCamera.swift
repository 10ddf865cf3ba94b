public import CameraKit
import Foundation
import UnleashedKit
import UnleashedProtocol

/// A camera the daemon holds, driven through its control API: the CLI uses it in place of the
/// camera itself when a daemon runs, and prints exactly what it would print talking to the camera,
/// because every value and every ``CameraError`` crosses the API unchanged.
///
/// Closing it ends its event streams; the camera stays connected in the daemon.
public actor RemoteCamera: Camera {
    /// What the daemon's camera said about itself when it connected.
    public nonisolated let identity: CameraIdentity
    /// The camera's name in the daemon.
    public nonisolated let name: String

    private let client: DaemonClient
    private let base: String
    private let hub = CameraEventHub()
    private var upstream: Task<Void, Never>?
    private var lastStatus: CameraStatus?

    private init(client: DaemonClient, name: String, identity: CameraIdentity, status: CameraStatus?) {
        self.client = client
        self.name = name
        self.identity = identity
        lastStatus = status
        base = "/v1/cameras/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? name)
    }

    /// The camera called `name` in the daemon, or with no name the only one it holds. Its events
    /// are subscribed to before this returns, so ``events()`` misses nothing that happens after.
    public static func open(client: DaemonClient, camera name: String?) async throws(DaemonClientError) -> RemoteCamera {
        let chosen: String
        if let name {
            chosen = name
        } else {
            let listing = try await client.request("GET", "/v1/cameras")
            let names = (listing["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []).sorted()
            switch names.count {
            case 1: chosen = names[0]
            case 0:
                throw .http(status: 404, code: "noCamera",
                            message: "the daemon holds no camera; connect one with `unleashed connect`", camera: nil)
            default:
                throw .http(status: 400, code: "ambiguousCamera",
                            message: "the daemon holds \(names.count) cameras (\(names.joined(separator: ", "))); name one",
                            camera: nil)
            }
        }
        let path = "/v1/cameras/" + (chosen.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? chosen)
        let document = try await client.request("GET", path)
        let identity: CameraIdentity
        do {
            identity = try CameraIdentity(json: document["identity"] ?? .null)
        } catch {
            throw .badAnswer("GET \(path): \(error)")
        }
        let status = document["status"].flatMap { try? CameraStatus(json: $0) }
        let camera = RemoteCamera(client: client, name: document["name"]?.stringValue ?? chosen, identity: identity, status: status)
        await camera.subscribe()
        return camera
    }

    /// Follows the daemon's event stream for this camera into the hub, and waits (briefly) until
    /// the daemon says it has subscribed.
    private func subscribe() async {
        let (subscribed, signal) = AsyncStream.makeStream(of: Void.self)
        let stream = client.events(base + "/events")
        let hub = hub
        upstream = Task {
            do {
                for try await message in stream {
                    if message.isComment {
                        signal.finish()
                        continue
                    }
                    guard let data = message.data.data(using: .utf8),
                          let fields = try? JSONDecoder().decode(JSONValue.self, from: data),
                          let event = try? CameraEvent(name: message.name, fields: fields) else { continue }
                    hub.yield(event)
                }
            } catch {}
            // The daemon ended the stream or went away: no more events will come.
            signal.finish()
            hub.finish()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in subscribed {} }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The camera's events from now on, from the one subscription opened with the camera.
    public nonisolated func events() -> AsyncStream<CameraEvent> { hub.subscribe() }

    public func status() async throws(CameraError) -> CameraStatus {
        let document = try await call("GET", base)
        let status = try decode("status") { () throws(JSONShapeError) in try CameraStatus(json: document["status"] ?? .null) }
        lastStatus = status
        return status
    }

    public func settings() async throws(CameraError) -> [SettingDescriptor] {
        let document = try await call("GET", base + "/settings")
        return try decode("settings") { () throws(JSONShapeError) in
            guard let list = document["settings"]?.arrayValue else {
                throw JSONShapeError(path: "settings", problem: "expected an array")
            }
            var settings: [SettingDescriptor] = []
            for element in list { settings.append(try SettingDescriptor(json: element)) }
            return settings
        }
    }

    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        let document = try await call("GET", base + "/settings/" + setting.userName)
        return try decode("value") { () throws(JSONShapeError) in try SettingValue(json: document) }
    }

    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        // The wire number names the value exactly; the text is there for people reading logs.
        let document = try await call("PUT", base + "/settings/" + value.setting.userName,
                                      body: ["value": .string(value.text), "raw": .integer(Int64(value.rawValue))])
        return try decode("value") { () throws(JSONShapeError) in try SettingValue(json: document) }
    }

    public func focus(hold: Bool) async throws(CameraError) -> FocusResult {
        let document = try await call("POST", base + "/focus", body: ["hold": .bool(hold)])
        return try decode("focus") { () throws(JSONShapeError) in try FocusResult(json: document) }
    }

    public func release() async throws(CameraError) {
        _ = try await call("POST", base + "/release")
    }

    public func shoot() async throws(CameraError) -> Shot {
        let document = try await call("POST", base + "/shoot")
        return try decode("shot") { () throws(JSONShapeError) in try Shot(json: document) }
    }

    public func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let document = try await call("POST", base + "/bulb", body: ["ms": .integer(milliseconds)],
                                      timeout: duration + DaemonClient.defaultTimeout)
        return try decode("bulb") { () throws(JSONShapeError) in try BulbExposure(json: document) }
    }

    public func startVideo() async throws(CameraError) {
        _ = try await call("POST", base + "/video/start")
    }

    public func stopVideo() async throws(CameraError) -> Duration {
        let document = try await call("POST", base + "/video/stop")
        guard let milliseconds = document["ms"]?.integerValue else {
            throw Self.unreadable("POST \(base)/video/stop: no \"ms\" in the answer")
        }
        return .milliseconds(milliseconds)
    }

    public func setTime(_ time: WallTime) async throws(CameraError) {
        _ = try await call("PUT", base + "/time", body: time.json)
    }

    public func geotag(_ position: GeoPosition) async throws(CameraError) {
        _ = try await call("PUT", base + "/geotag", body: position.json)
    }

    /// Ends this client's event streams. The camera stays connected in the daemon for others.
    public func close() async {
        upstream?.cancel()
        upstream = nil
        hub.finish()
    }

    /// Asks the daemon; false when the camera's link is down or the daemon cannot be reached.
    public var isReady: Bool {
        get async { (try? await status())?.connection == .ready }
    }

    /// The camera's metered EV now, or the last one seen when the daemon cannot be asked.
    public var lastMeteredEV: ExposureStops? {
        get async { ((try? await status()) ?? lastStatus)?.meteredEV }
    }

    // MARK: - The API

    /// One request; the daemon's errors come back as the camera's own.
    private func call(
        _ method: String, _ path: String, body: JSONValue? = nil, timeout: Duration = DaemonClient.defaultTimeout
    ) async throws(CameraError) -> JSONValue {
        do {
            return try await client.request(method, path, body: body, timeout: timeout)
        } catch {
            throw Self.cameraError(error, camera: name)
        }
    }

    private func decode<T>(_ what: String, _ read: () throws(JSONShapeError) -> T) throws(CameraError) -> T {
        do { return try read() } catch { throw Self.unreadable("\(error)") }
    }

    private static func unreadable(_ why: String) -> CameraError {
        .device(DeviceFailure(.failed, "the daemon's answer cannot be read: \(why)"))
    }

    /// The camera error a failed request stands for: the camera's own when the daemon passed one
    /// on; otherwise one whose words are the daemon's and whose code says what kind of failure it is.
    static func cameraError(_ error: DaemonClientError, camera: String) -> CameraError {
        switch error {
        case .http(_, _, _, let cameraError?):
            cameraError
        case .http(403, _, let message, nil):
            .device(DeviceFailure(.permissionDenied, message))
        case .http(404, _, let message, nil):
            .device(DeviceFailure(.disconnected, message))
        case .http(400, _, let message, nil):
            .invalidArgument(message)
        case .http(_, _, let message, nil):
            .device(DeviceFailure(.failed, "the daemon could not do it: \(message)"))
        case .notReachable(let socket, let reason):
            .device(DeviceFailure(.disconnected, "the daemon went away (\(socket): \(reason)); camera '\(camera)' is out of reach"))
        case .badAnswer(let why):
            unreadable(why)
        }
    }
}
