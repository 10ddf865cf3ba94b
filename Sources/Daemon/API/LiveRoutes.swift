import Foundation
import Hummingbird
import ServiceLifecycle
import UnleashedAPI

/// `GET /v1/live`: what a dashboard (the web app) shows, on one stream. It opens with a snapshot
/// of the cameras and jobs, then sends every camera event, job change and frame, so a page that
/// reconnects (a phone that slept, a reload) is whole again from the snapshot alone.
///
/// The follower joins the shared ``LiveFeed`` before the snapshot is read, so nothing between
/// the two is lost; an event already reflected in the snapshot may follow it, and each one sets a
/// value rather than adding to one, so applying it twice changes nothing. The stream ends with a
/// `resync` event when cameras come or go, when the client fell more than the feed's backlog
/// behind, or when its browser was revoked: the page opens it again for a new snapshot.
struct LiveRoutes: Sendable {
    let cameras: CameraRegistry
    let jobs: JobManager
    let version: String
    let started: ContinuousClock.Instant
    let groups: [DaemonConfiguration.Group]
    /// What every follower is sent after its snapshot.
    let feed: LiveFeed

    /// How long the snapshot waits for a camera's status before giving the last one read: a
    /// module out of range answers only when it is back.
    static let statusWait = Duration.seconds(2)

    func add(to router: APIRoutes) {
        router.on(API.live) { request, context in
            try context.authorize(.watch)
            return try await stream(request, browser: context.client.webClient)
        }
    }

    private func stream(_ request: Request, browser: String?) async throws -> Response {
        let follower = await feed.follow(browser: browser)
        let snapshot: LiveSnapshot
        do {
            snapshot = try await self.snapshot()
        } catch {
            feed.leave(follower)
            throw error
        }
        let feed = feed
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer { feed.leave(follower) }
            try await request.body.consumeWithInboundCloseHandler { _ in
                try await withGracefulShutdownHandler {
                    try await writer.write(ByteBuffer(string: ": subscribed\n\n" + LiveEvent.snapshot(snapshot).serverSentEvent))
                    for await chunk in follower.chunks {
                        // A client that fell behind is told at once, not after what it could not keep up with.
                        if follower.overflowed { break }
                        try await writer.write(chunk.bytes)
                        if chunk.ends { break }
                    }
                    if follower.overflowed {
                        let resync = LiveEvent.resync(reason: "this client fell behind; open the stream again")
                        try await writer.write(ByteBuffer(string: resync.serverSentEvent))
                    }
                } onGracefulShutdown: {
                    follower.finish()
                }
            } onInboundClosed: {
                follower.finish()
            }
            try await writer.finish(nil)
        })
    }

    /// The daemon now: its clock, each camera (waiting at most ``statusWait`` for one), the
    /// groups, the jobs and each running job's newest frames.
    private func snapshot() async throws -> LiveSnapshot {
        let entries = await cameras.all
        let now: JobsNow
        do {
            now = try await jobs.current(recentFrames: LiveSnapshot.recentFrameCount)
        } catch {
            throw HTTPError(.serviceUnavailable, message: error.description)
        }
        return LiveSnapshot(
            nowUnixMs: jobs.nowUnixMs,
            status: await CameraRoutes.status(of: entries, clock: jobs.wallClock, version: version, started: started,
                                              waitingAtMost: Self.statusWait),
            cameras: CameraList(cameras: entries.map { CameraList.Entry(name: $0.name, source: $0.source, identity: $0.camera.identity) }),
            groups: GroupList(groups: groups),
            jobs: JobList(jobs: now.jobs),
            recentFrames: now.recentFrames.sorted { $0.key > $1.key }.map { LiveSnapshot.RecentFrames(run: $0.key, frames: $0.value) })
    }
}
