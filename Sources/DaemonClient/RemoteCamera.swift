public import CameraKit
import Foundation
import UnleashedAPI
import UnleashedKit

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
    private let hub = CameraEventHub()
    private var upstream: Task<Void, Never>?
    private var lastStatus: CameraStatus?
    private var closed = false

    private init(client: DaemonClient, name: String, identity: CameraIdentity, status: CameraStatus?) {
        self.client = client
        self.name = name
        self.identity = identity
        lastStatus = status
    }

    /// The camera called `name` in the daemon, or with no name the only one it holds. With
    /// `events`, its events are subscribed to before this returns, so ``events()`` misses nothing
    /// that happens after. Without, a command that only makes requests spends no request on a
    /// subscription; ``events()`` then subscribes when first called.
    public static func open(client: DaemonClient, camera name: String?, events: Bool = true) async throws(DaemonClientError) -> RemoteCamera {
        let camera: RemoteCamera
        if let name {
            let document = try await client.camera(name)
            camera = RemoteCamera(client: client, name: document.name, identity: document.identity, status: document.status)
        } else {
            // The list says who the only camera is: a command starts one request sooner. Its
            // status is read when first asked for.
            let cameras = try await client.cameras().sorted { $0.name < $1.name }
            switch cameras.count {
            case 1: camera = RemoteCamera(client: client, name: cameras[0].name, identity: cameras[0].identity, status: nil)
            case 0:
                throw .http(status: 404, code: "noCamera",
                            message: "the daemon holds no camera; connect one with `unleashed connect`", camera: nil)
            default:
                let names = cameras.map(\.name)
                throw .http(status: 400, code: "ambiguousCamera",
                            message: "the daemon holds \(names.count) cameras (\(names.joined(separator: ", "))); name one",
                            camera: nil)
            }
        }
        if events { await camera.subscribe() }
        return camera
    }

    /// Follows the daemon's event stream for this camera into the hub, and waits (briefly) until
    /// the daemon says it has subscribed.
    private func subscribe() async {
        guard upstream == nil, !closed else { return }
        let (subscribed, signal) = AsyncStream.makeStream(of: Void.self)
        let stream = client.cameraEvents(name)
        let hub = hub
        upstream = Task {
            do {
                for try await message in stream {
                    switch message {
                    case .subscribed: signal.finish()
                    case .event(let message): hub.yield(message.event)
                    }
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

    /// The camera's events from now on, from the one subscription opened with the camera; on a
    /// camera opened without one, from when the daemon has subscribed this client.
    public nonisolated func events() -> AsyncStream<CameraEvent> {
        let stream = hub.subscribe()
        Task { await self.subscribe() }
        return stream
    }

    public func status() async throws(CameraError) -> CameraStatus {
        let status = try await call { client, name throws(DaemonClientError) in try await client.camera(name).status }
        lastStatus = status
        return status
    }

    public func settings() async throws(CameraError) -> [SettingDescriptor] {
        try await call { client, name throws(DaemonClientError) in try await client.settings(camera: name) }
    }

    public func value(of setting: SettingID) async throws(CameraError) -> SettingValue {
        try await call { client, name throws(DaemonClientError) in try await client.value(of: setting, camera: name) }
    }

    public func set(_ value: SettingValue) async throws(CameraError) -> SettingValue {
        try await call { client, name throws(DaemonClientError) in try await client.set(value, camera: name) }
    }

    public func focus(hold: Bool) async throws(CameraError) -> FocusResult {
        try await call { client, name throws(DaemonClientError) in try await client.focus(hold: hold, camera: name) }
    }

    public func release() async throws(CameraError) {
        try await call { client, name throws(DaemonClientError) in try await client.release(camera: name) }
    }

    public func shoot() async throws(CameraError) -> Shot {
        try await call { client, name throws(DaemonClientError) in try await client.shoot(camera: name) }
    }

    public func bulb(_ duration: Duration) async throws(CameraError) -> BulbExposure {
        try await call { client, name throws(DaemonClientError) in try await client.bulb(duration, camera: name) }
    }

    public func startVideo() async throws(CameraError) {
        try await call { client, name throws(DaemonClientError) in try await client.startVideo(camera: name) }
    }

    public func stopVideo() async throws(CameraError) -> Duration {
        try await call { client, name throws(DaemonClientError) in try await client.stopVideo(camera: name) }
    }

    public func setTime(_ time: WallTime) async throws(CameraError) {
        try await call { client, name throws(DaemonClientError) in try await client.setTime(time, camera: name) }
    }

    public func geotag(_ position: GeoPosition) async throws(CameraError) {
        try await call { client, name throws(DaemonClientError) in try await client.geotag(position, camera: name) }
    }

    /// Ends this client's event streams. The camera stays connected in the daemon for others.
    public func close() async {
        closed = true
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
    private func call<T>(_ request: (DaemonClient, String) async throws(DaemonClientError) -> T) async throws(CameraError) -> T {
        do {
            return try await request(client, name)
        } catch {
            throw Self.cameraError(error, camera: name)
        }
    }

    private static func unreadable(_ why: String) -> CameraError {
        .device(DeviceFailure(.failed, "the daemon's answer cannot be read: \(why)"))
    }

    /// The camera error a failed request stands for: the camera's own when the daemon passed one
    /// on; otherwise one whose words are the daemon's and whose code says what kind of failure it is.
    /// `camera` is the camera's name, or nil for the daemon's only one. A request that failed
    /// because its task was cancelled (Ctrl-C) is ``CameraError/cancelled``, as in direct mode,
    /// not the closed connection it ended with.
    public static func cameraError(_ error: DaemonClientError, camera: String?) -> CameraError {
        if Task.isCancelled { return .cancelled }
        return switch error {
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
            .device(DeviceFailure(.disconnected, "the daemon went away (\(socket): \(reason)); "
                                  + (camera.map { "camera '\($0)'" } ?? "its camera") + " is out of reach"))
        case .badAnswer(let why):
            unreadable(why)
        }
    }
}
