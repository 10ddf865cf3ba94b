import CameraKit
import Foundation
import Hummingbird
import ServiceLifecycle
import UnleashedAPI
import UnleashedKit

/// The routes about the cameras the daemon holds: the daemon's status, its groups and the
/// event stream.
struct CameraRoutes: Sendable {
    let cameras: CameraRegistry
    /// The daemon's wall clock, which the status shows.
    let clock: DaemonClock
    let version: String
    let started: ContinuousClock.Instant
    /// The configured `[[groups]]`, so that `--group NAME` means the daemon's group.
    let groups: [DaemonConfiguration.Group]

    func add(to router: APIRoutes) {
        router.on(API.status, requires: .watch) { _, _ in
            await Self.status(of: await cameras.all, clock: clock, version: version, started: started)
        }
        router.on(API.daemonVersion, requires: .watch) { _, _ in DaemonVersion(version: version) }
        router.on(API.groups, requires: .watch) { _, _ in
            GroupList(groups: groups)
        }
        router.on(API.events) { request, context in
            try context.authorize(.watch)
            return await eventStream(request, from: await cameras.all)
        }
    }

    /// The daemon's state: its version, how long it has run, its wall clock and each camera's
    /// status. A camera that cannot answer is listed with the reason instead of failing the
    /// whole request.
    ///
    /// With `waitingAtMost`, a camera that does not answer in time (a module out of range) is
    /// given as last read, so a client that shows the whole daemon is not held up by one camera.
    static func status(of entries: [CameraRegistry.Entry], clock: DaemonClock, version: String, started: ContinuousClock.Instant,
                       waitingAtMost limit: Duration? = nil) async -> DaemonStatus {
        // Every camera at once: a rig's status takes as long as its slowest camera, not their sum.
        let cameraStates = await withTaskGroup(of: (Int, DaemonStatus.Camera).self) { group in
            for (index, entry) in entries.enumerated() {
                group.addTask {
                    do throws(CameraError) {
                        let status = if let limit { try await entry.statusReader.status(waitingAtMost: limit) }
                            else { try await entry.statusReader.status() }
                        return (index, .init(name: entry.name, source: entry.source, status: status, error: nil))
                    } catch {
                        return (index, .init(name: entry.name, source: entry.source, status: nil, error: error.description))
                    }
                }
            }
            var states: [(Int, DaemonStatus.Camera)] = []
            for await state in group { states.append(state) }
            return states.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return DaemonStatus(version: version, uptimeSeconds: (ContinuousClock.now - started).apiSeconds, cameras: cameraStates,
                            clock: clock.document)
    }
}

/// The events of `entries` as Server-Sent Events, each naming its camera. The subscriptions
/// are made before the first byte is sent (a `: subscribed` comment), so an event caused
/// after a client sees that byte reaches it. The stream ends when the client goes away, the
/// server stops or every camera has closed.
func eventStream(_ request: Request, from entries: [CameraRegistry.Entry]) async -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "text/event-stream"
    headers[.cacheControl] = "no-cache"
    return Response(status: .ok, headers: headers, body: ResponseBody { writer in
        var subscriptions: [(String, AsyncStream<CameraEvent>)] = []
        for entry in entries { subscriptions.append((entry.name, await entry.camera.events())) }
        let streams = subscriptions
        let (merged, sink) = AsyncStream.makeStream(of: (String, CameraEvent).self)
        try await request.body.consumeWithInboundCloseHandler { _ in
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        await withDiscardingTaskGroup { forwarders in
                            for (name, stream) in streams {
                                forwarders.addTask { for await event in stream { sink.yield((name, event)) } }
                            }
                        }
                        sink.finish()
                    }
                    try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                    for await (name, event) in merged {
                        try await writer.write(ByteBuffer(string: CameraEventMessage(camera: name, event: event).serverSentEvent))
                    }
                    // The client left, the server is stopping or every camera closed:
                    // end the subscriptions with the response.
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                sink.finish()
            }
        } onInboundClosed: {
            sink.finish()
        }
        try await writer.finish(nil)
    })
}
