public import CameraKit
public import Intervalometer
public import UnleashedAPI
import UnleashedKit

// Each operation of the control API as a method: the paths and documents come from
// UnleashedAPI, so nothing here spells a path or a member name.

extension DaemonClient {
    // MARK: The daemon

    /// The daemon's version, uptime and every camera's status.
    public func status(timeout: Duration = DaemonClient.defaultTimeout) async throws(DaemonClientError) -> DaemonStatus {
        try await send(API.status, timeout: timeout)
    }

    /// The daemon's wall clock: what it reads times of day and dates against.
    public func clock(timeout: Duration = DaemonClient.defaultTimeout) async throws(DaemonClientError) -> HostClockState {
        try await send(API.clock, timeout: timeout)
    }

    /// Offers this client's clock reading (Unix milliseconds, read as the request goes out) for
    /// a host whose own clock cannot be trusted; the answer says whether the daemon took it.
    public func offerClock(unixMs: Int64) async throws(DaemonClientError) -> ClockOffer {
        try await send(API.offerClock, body: ClockReading(unixMs: unixMs))
    }

    /// The configured groups of cameras, for `--group`.
    public func groups() async throws(DaemonClientError) -> [GroupList.Group] {
        try await send(API.groups).groups
    }

    /// Every camera's events, each naming its camera.
    public func events() -> AsyncThrowingStream<Streamed<CameraEventMessage>, any Error> {
        events(API.events)
    }

    // MARK: Cameras

    /// The cameras the daemon holds.
    public func cameras() async throws(DaemonClientError) -> [CameraList.Entry] {
        try await send(API.cameras).cameras
    }

    /// Connects the module at `module` (an address or a configured name), or answers the camera
    /// the daemon already holds for it.
    public func connect(module: String) async throws(DaemonClientError) -> ConnectedCamera {
        try await send(API.connect, body: ConnectRequest(module: module))
    }

    /// Lets go of the camera called `name`.
    public func disconnect(camera name: String) async throws(DaemonClientError) -> ConnectedCamera {
        try await send(API.disconnect, name)
    }

    /// One camera: its identity and its status now.
    public func camera(_ name: String) async throws(DaemonClientError) -> CameraDocument {
        try await send(API.camera, name)
    }

    public func settings(camera name: String) async throws(DaemonClientError) -> [SettingDescriptor] {
        try await send(API.settings, name).settings
    }

    public func value(of setting: SettingID, camera name: String) async throws(DaemonClientError) -> SettingValue {
        try await send(API.setting, name, setting.userName)
    }

    /// Sets `value` by its wire number, which names it exactly (the text is there for logs).
    public func set(_ value: SettingValue, camera name: String) async throws(DaemonClientError) -> SettingValue {
        try await send(API.setSetting, name, value.setting.userName, body: SettingChange(value))
    }

    /// A picture from the camera called `name`, or with no name from the daemon's only camera
    /// (refused without asking any camera, 409 or 503, when it holds several or none).
    public func shoot(camera name: String?) async throws(DaemonClientError) -> Shot {
        guard let name else { return try await send(API.shootOnlyCamera) }
        return try await send(API.shoot, name)
    }

    /// A bulb exposure of `duration`; the request waits as long as the exposure, and then some.
    public func bulb(_ duration: Duration, camera name: String) async throws(DaemonClientError) -> BulbExposure {
        try await send(API.bulb, name, body: BulbRequest(milliseconds: duration.wholeMilliseconds),
                       timeout: duration + DaemonClient.defaultTimeout)
    }

    public func focus(hold: Bool, camera name: String) async throws(DaemonClientError) -> FocusResult {
        try await send(API.focus, name, body: FocusRequest(hold: hold))
    }

    public func release(camera name: String) async throws(DaemonClientError) {
        _ = try await send(API.release, name)
    }

    public func startVideo(camera name: String) async throws(DaemonClientError) {
        _ = try await send(API.startVideo, name)
    }

    /// Stops recording; the clip's length.
    public func stopVideo(camera name: String) async throws(DaemonClientError) -> Duration {
        .milliseconds(try await send(API.stopVideo, name).milliseconds)
    }

    public func setTime(_ time: WallTime, camera name: String) async throws(DaemonClientError) {
        _ = try await send(API.setTime, name, body: time)
    }

    public func geotag(_ position: GeoPosition, camera name: String) async throws(DaemonClientError) {
        _ = try await send(API.geotag, name, body: position)
    }

    /// The events of the camera called `name`.
    public func cameraEvents(_ name: String) -> AsyncThrowingStream<Streamed<CameraEventMessage>, any Error> {
        events(API.cameraEvents, name)
    }

    // MARK: Jobs

    /// Submits a job: `plan` on `camera` (the daemon's only camera when nil) or on the rig `cameras`.
    public func startJob(_ plan: RunPlan, camera: String? = nil, cameras: [String]? = nil,
                         startDelay: Duration = .zero) async throws(DaemonClientError) -> JobDocument {
        try await send(API.startJob, body: JobSubmission(plan: plan, camera: camera, cameras: cameras, startDelay: startDelay))
    }

    /// The jobs running and the last ones that ran.
    public func jobs() async throws(DaemonClientError) -> [JobDocument] {
        try await send(API.jobs).jobs
    }

    public func job(_ id: Int64) async throws(DaemonClientError) -> JobDocument {
        try await send(API.job, String(id))
    }

    /// Stops job `id` now (a bulb or clip is ended first) or after its current frame.
    @discardableResult
    public func stopJob(_ id: Int64, when: StopWhen = .now) async throws(DaemonClientError) -> JobDocument {
        try await send(API.stopJob, String(id), body: when)
    }

    /// An extra frame in job `id`, outside its schedule.
    @discardableResult
    public func extraFrame(_ id: Int64) async throws(DaemonClientError) -> JobDocument {
        try await send(API.extraFrame, String(id))
    }

    @discardableResult
    public func pauseJob(_ id: Int64) async throws(DaemonClientError) -> JobDocument {
        try await send(API.pauseJob, String(id))
    }

    @discardableResult
    public func continueJob(_ id: Int64) async throws(DaemonClientError) -> JobDocument {
        try await send(API.continueJob, String(id))
    }

    /// Job `id`'s frames as they are journalled, then its end; from frame `from` on when given.
    public func jobEvents(_ id: Int64, from frame: Int? = nil) -> AsyncThrowingStream<Streamed<JobEvent>, any Error> {
        events(API.jobEvents, String(id), query: frame.map { "?from=\($0)" } ?? "")
    }
}

// MARK: The web app's browsers

extension DaemonClient {
    /// A new code that pairs one browser with the web app as `role` (`operator` or `viewer`).
    public func makePairingCode(role: String) async throws(DaemonClientError) -> PairingCodeDocument {
        try await send(API.makePairingCode, body: PairingCodeRequest(role: role))
    }

    /// The browsers paired with the web app.
    public func webClients() async throws(DaemonClientError) -> [WebClientList.Client] {
        try await send(API.webClients).clients
    }

    /// Forgets the paired browser `id`: it must pair again.
    public func revokeWebClient(_ id: String) async throws(DaemonClientError) {
        _ = try await send(API.revokeWebClient, id)
    }
}
