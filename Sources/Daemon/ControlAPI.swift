import Foundation
import Hummingbird
import ServiceLifecycle
import UnleashedKit

/// The routes of the control API, version 1: what the daemon holds and what its cameras report.
/// Every answer is JSON, errors included, so that a client never has to parse prose.
struct ControlAPI: Sendable {
    let cameras: [any ControlledCamera]
    let version: String
    let started: ContinuousClock.Instant

    /// The largest request body accepted. No route takes a body yet; the limit keeps a client
    /// from making the daemon read an unbounded one.
    static let maxBodySize = 64 * 1024

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        // Middleware applies to the routes added after it, and to unknown paths.
        router.add(middleware: JSONErrorMiddleware())
        router.add(middleware: BodySizeLimitMiddleware(limit: Self.maxBodySize))
        let v1 = router.group("v1")
        v1.get("status") { _, _ in await status() }
        v1.get("events") { request, _ in events(request) }
        return router
    }

    /// The daemon's state: its version, how long it has run and each camera's status. A camera
    /// that cannot answer is listed with the reason instead of failing the whole request.
    private func status() async -> Response {
        var cameraDocuments: [JSONValue] = []
        for camera in cameras {
            var document: [String: JSONValue] = ["name": .string(camera.name)]
            do {
                document["status"] = try await camera.status().json
                document["error"] = .null
            } catch {
                document["status"] = .null
                document["error"] = .string(error.description)
            }
            cameraDocuments.append(.object(document))
        }
        let uptime = ContinuousClock.now - started
        return .json(.ok, .object([
            "version": .string(version),
            "uptimeSeconds": uptime.apiSeconds,
            "cameras": .array(cameraDocuments),
        ]))
    }

    /// Every camera's events as Server-Sent Events. The subscriptions are made before the first
    /// byte is sent (a `: subscribed` comment), so an event caused after a client sees that byte
    /// reaches it. The stream ends when the client goes away, the server stops or every camera
    /// has closed.
    private func events(_ request: Request) -> Response {
        let cameras = cameras
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var subscriptions: [AsyncStream<CameraEvent>] = []
            for camera in cameras { subscriptions.append(await camera.events()) }
            let streams = subscriptions
            let (merged, sink) = AsyncStream.makeStream(of: CameraEvent.self)
            try await request.body.consumeWithInboundCloseHandler { _ in
                try await withGracefulShutdownHandler {
                    try await withThrowingDiscardingTaskGroup { group in
                        group.addTask {
                            await withDiscardingTaskGroup { forwarders in
                                for stream in streams {
                                    forwarders.addTask { for await event in stream { sink.yield(event) } }
                                }
                            }
                            sink.finish()
                        }
                        try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                        for await event in merged {
                            try await writer.write(ByteBuffer(string: event.serverSentEvent))
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
}

extension Response {
    /// A JSON answer.
    static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: value.data)))
    }

    /// The API's error shape: `{"error": {"code": ..., "message": ...}}`.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        .json(status, .object(["error": .object(["code": .int(status.code), "message": .string(message)])]))
    }
}

/// Turns every failure into the API's JSON error shape, so that clients read one format.
/// Unexpected errors become 500 without their details, which may name internals.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            return .error(error.status, error.body ?? Self.defaultMessage(error.status, request))
        } catch let error as any HTTPResponseError {
            return .error(error.status, Self.defaultMessage(error.status, request))
        } catch {
            context.logger.error("request failed: \(error)")
            return .error(.internalServerError, "the daemon failed to answer; its log has the details")
        }
    }

    private static func defaultMessage(_ status: HTTPResponse.Status, _ request: Request) -> String {
        status == .notFound
            ? "there is no \(request.method.rawValue) \(request.uri.path); the API is under /v1/"
            : status.reasonPhrase
    }
}

/// Refuses a request whose declared body is larger than `limit`, before any of it is read.
struct BodySizeLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw HTTPError(.contentTooLarge, message: "the request body is \(length) bytes; the limit is \(limit)")
        }
        return try await next(request, context)
    }
}
