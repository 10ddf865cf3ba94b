import CameraKit
import Foundation
import Hummingbird
import ServiceLifecycle
import Synchronization
import UnleashedAPI
import UnleashedProtocol

/// `GET /v1/live`: what a dashboard (the web app) shows, on one stream. It opens with a snapshot
/// of the cameras and jobs, then sends every camera event, job change and frame, so a page that
/// reconnects (a phone that slept, a reload) is whole again from the snapshot alone.
///
/// Every subscription is made before the snapshot is read, so nothing between the two is lost;
/// an event already reflected in the snapshot may follow it, and each one sets a value rather
/// than adding to one, so applying it twice changes nothing. The stream ends with a `resync`
/// event when cameras come or go, or when the client fell more than ``backlog`` events behind:
/// the page opens it again for a new snapshot. A slow page costs bounded memory and never
/// holds up a run: jobs and cameras hand their events over without waiting.
struct LiveRoutes: Sendable {
    let cameras: CameraRegistry
    let jobs: JobManager
    let version: String
    let started: ContinuousClock.Instant
    let groups: [DaemonConfiguration.Group]
    /// The paired browsers: a browser revoked while it follows is let go at the next heartbeat.
    let browsers: WebClients?

    /// How many events may wait for a slow client before it is told to start again.
    static let backlog = 1024
    /// How long the snapshot waits for a camera's status before giving the last one read: a
    /// module out of range answers only when it is back.
    static let statusWait = Duration.seconds(2)

    func add(to router: Router<ControlRequestContext>) {
        router.on(API.live) { request, context in
            try context.authorize(.watch)
            return try await stream(request, browser: context.client.webClient)
        }
    }

    private func stream(_ request: Request, browser: String?) async throws -> Response {
        // Changes first, so that a camera added while the rest is read is not missed.
        let cameraChanges = await cameras.changes()
        let entries = await cameras.all
        var subscriptions: [(String, AsyncStream<CameraEvent>)] = []
        for entry in entries { subscriptions.append((entry.name, await entry.camera.events())) }
        let watch: JobWatch
        do {
            watch = try await jobs.watch(recentFrames: LiveSnapshot.recentFrameCount)
        } catch {
            throw HTTPError(.serviceUnavailable, message: error.description)
        }
        let snapshot = LiveSnapshot(
            nowUnixMs: jobs.nowUnixMs,
            status: await CameraRoutes.status(of: entries, version: version, started: started, waitingAtMost: Self.statusWait),
            cameras: CameraList(cameras: entries.map { CameraList.Entry(name: $0.name, source: $0.source, identity: $0.camera.identity) }),
            groups: GroupList(groups: groups.map { GroupList.Group(name: $0.name, cameras: $0.cameras) }),
            jobs: JobList(jobs: watch.jobs.map(\.document)),
            recentFrames: watch.recentFrames.sorted { $0.key > $1.key }.map { LiveSnapshot.RecentFrames(run: $0.key, frames: $0.value) })
        let streams = subscriptions
        let browsers = browsers

        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let (events, sink) = AsyncStream.makeStream(of: LiveEvent.self, bufferingPolicy: .bufferingOldest(Self.backlog))
            let outbox = Outbox(sink)
            let send = outbox.send
            try await request.body.consumeWithInboundCloseHandler { _ in
                try await withGracefulShutdownHandler {
                    try await withThrowingDiscardingTaskGroup { group in
                        for (name, stream) in streams {
                            group.addTask { for await event in stream { send(.camera(CameraEventMessage(camera: name, event: event))) } }
                        }
                        group.addTask {
                            for await change in watch.changes {
                                switch change {
                                case .job(let job): send(.job(job.document))
                                case .frame(let frame, let id): send(.frame(frame, job: id))
                                }
                            }
                            // Let go by the manager for falling behind, unless the stream is ending anyway.
                            if !Task.isCancelled { send(.resync(reason: "this client fell behind; open the stream again")) }
                        }
                        group.addTask {
                            for await _ in cameraChanges {
                                send(.resync(reason: "the daemon's cameras changed; open the stream again"))
                                return
                            }
                        }
                        group.addTask {
                            while !Task.isCancelled {
                                // Cancelled when the stream ends: it ends quietly, so the response is finished, not cut.
                                do { try await Task.sleep(for: LiveEvent.heartbeatInterval) } catch { return }
                                if let browser, let browsers, !browsers.all.contains(where: { $0.id == browser }) {
                                    send(.resync(reason: "this browser is no longer paired"))
                                    return
                                }
                                send(.heartbeat(nowUnixMs: jobs.nowUnixMs))
                            }
                        }
                        try await writer.write(ByteBuffer(string: ": subscribed\n\n" + LiveEvent.snapshot(snapshot).serverSentEvent))
                        for await event in events {
                            // A client that fell behind is told at once, not after what it could not keep up with.
                            if outbox.overflowed { break }
                            try await writer.write(ByteBuffer(string: event.serverSentEvent))
                            if case .resync = event { break }
                        }
                        if outbox.overflowed {
                            let resync = LiveEvent.resync(reason: "this client fell \(Self.backlog) events behind; open the stream again")
                            try await writer.write(ByteBuffer(string: resync.serverSentEvent))
                        }
                        group.cancelAll()
                    }
                } onGracefulShutdown: {
                    sink.finish()
                }
            } onInboundClosed: {
                sink.finish()
            }
            watch.control.finish()
            try await writer.finish(nil)
        })
    }
}

/// Where the stream's sources leave their events: bounded, and marked when it overflowed, so
/// that the client is told to start again instead of missing events silently.
private final class Outbox: Sendable {
    private let sink: AsyncStream<LiveEvent>.Continuation
    private let overflow = Mutex(false)

    init(_ sink: AsyncStream<LiveEvent>.Continuation) { self.sink = sink }

    var overflowed: Bool { overflow.withLock { $0 } }

    @Sendable func send(_ event: LiveEvent) {
        if case .dropped = sink.yield(event) {
            overflow.withLock { $0 = true }
            sink.finish()
        }
    }
}
