import CameraKit
import Foundation
import Hummingbird
import JSON
import ServiceLifecycle
public import UnleashedAPI
import UnleashedKit

/// The routes of the control API, version 1. Every answer is JSON, errors included, so that a
/// client never has to parse prose. Each group of routes lives in its own type; this one puts
/// them behind the checks every request passes.
public struct ControlAPI: Sendable {
    let cameras: CameraRegistry
    let jobs: JobManager
    /// The access policy in force; SIGHUP replaces it.
    public let access: AccessControl
    let version: String
    let connector: (any CameraConnecting)?
    let configuration: DaemonConfiguration
    let started: ContinuousClock.Instant
    let metrics: DaemonMetrics
    /// Whether the cameras are the simulator's, for the web app's demo banner.
    let demo: Bool
    /// The pictures the cameras' backends saved on this disk.
    let pictures: SavedPictures
    /// What every follower of `/v1/live` is sent, on every listener.
    let liveFeed: LiveFeed
    /// The hosts on the MQTT broker, when `[mqtt]` is set.
    let fleet: FleetBoard?
    /// Routes a test adds behind the same middleware, for permissions no route asks for yet.
    var extraRoutes: (@Sendable (RouterGroup<ControlRequestContext>) -> Void)?

    /// The largest request body accepted, so that a client cannot make the daemon read an
    /// unbounded one.
    static let maxBodySize = 64 * 1024

    /// - Parameters:
    ///   - metrics: What `GET /metrics` reports.
    ///   - connector: Connects modules on request (`POST /v1/cameras`); without one the
    ///     daemon holds only the cameras it was started with.
    ///   - configuration: The modules it knows by name, for `POST /v1/cameras`.
    ///   - browsers: The browsers paired with the web app, when it is served.
    ///   - demo: Whether the cameras are simulated.
    ///   - pictures: The pictures the cameras' backends saved, which the API lists with thumbnails.
    ///   - fleet: The hosts on the MQTT broker, for `GET /v1/fleet`.
    public init(cameras: CameraRegistry, jobs: JobManager, access: AccessPolicy, version: String,
                metrics: DaemonMetrics = DaemonMetrics(), connector: (any CameraConnecting)? = nil,
                configuration: DaemonConfiguration = .defaults(scope: .user, environment: [:]),
                browsers: WebClients? = nil, demo: Bool = false, pictures: SavedPictures = SavedPictures(),
                fleet: FleetBoard? = nil) {
        self.pictures = pictures
        self.fleet = fleet
        self.metrics = metrics
        self.cameras = cameras
        self.jobs = jobs
        self.access = AccessControl(access, browsers: browsers)
        liveFeed = LiveFeed(cameras: cameras, jobs: jobs, browsers: browsers)
        self.demo = demo
        self.version = version
        self.connector = connector
        self.configuration = configuration
        started = .now
    }

    /// The routes of one listener; `web` adds the web app's page and pairing, which a browser
    /// reaches before it has a session.
    /// `hosts` checks each request's `Host` (the web app's listener, which browsers reach).
    func router(web: WebAppRoutes? = nil, hosts: WebHostRule? = nil) -> Router<ControlRequestContext> {
        let router = Router(context: ControlRequestContext.self)
        // Middleware applies to the routes added after it, and to unknown paths.
        router.add(middleware: JSONErrorMiddleware())
        if let hosts { router.add(middleware: HostCheckMiddleware(rule: hosts)) }
        router.add(middleware: BodySizeLimitMiddleware(limit: Self.maxBodySize))
        web?.add(to: router)
        router.add(middleware: AccessMiddleware(control: access))
        let routes = addRoutes(to: router)
        Self.refuseOtherMethods(on: router, served: routes.served)
        extraRoutes?(router.group(RouterPath(API.version)))
        return router
    }

    /// The API's routes, added to `router`.
    private func addRoutes(to router: Router<ControlRequestContext>) -> APIRoutes {
        let routes = APIRoutes(router)
        CameraRoutes(cameras: cameras, clock: jobs.wallClock, version: version, started: started, groups: configuration.groups).add(to: routes)
        ClockRoutes(clock: jobs.wallClock).add(to: routes)
        CameraOperationRoutes(cameras: cameras, pictures: pictures).add(to: routes)
        JobRoutes(jobs: jobs, cameras: cameras).add(to: routes)
        LiveRoutes(cameras: cameras, jobs: jobs, version: version, started: started, groups: configuration.groups,
                   feed: liveFeed).add(to: routes)
        ModuleRoutes(cameras: cameras, connector: connector, configuration: configuration).add(to: routes)
        MetricsRoutes(metrics: metrics).add(to: routes)
        FleetRoutes(board: fleet).add(to: routes)
        WebClientRoutes(browsers: access.browsers).add(to: routes)
        return routes
    }

    /// Every route of version 1 this daemon serves, as its listeners add them: what the
    /// contract test holds against docs/api/openapi.yaml.
    public var servedRoutes: [Route] {
        addRoutes(to: Router(context: ControlRequestContext.self)).served
    }

    /// The web app's routes for a listener, HTTPS or not.
    func webRoutes(secure: Bool) -> WebAppRoutes? {
        access.browsers.map { WebAppRoutes(assets: WebAssets(), browsers: $0, access: access, version: version, demo: demo, secure: secure) }
    }

    /// The methods a client may try on a known path that it does not serve.
    private static let otherMethods: [HTTPRequest.Method] =
        [.get, .head, .post, .put, .delete, .patch, .options, .trace] + (HTTPRequest.Method("QUERY").map { [$0] } ?? [])

    /// A known path asked with a method it does not serve is answered 405 with the methods it
    /// does serve (`Allow`), not 404: the client has the path right and the method wrong.
    private static func refuseOtherMethods(on router: Router<ControlRequestContext>, served routes: [Route]) {
        var served: [String: Set<String>] = [:]
        for route in routes { served[route.routerPath, default: []].insert(route.method.rawValue) }
        served["/metrics", default: []].insert(APIMethod.get.rawValue)
        for (path, methods) in served {
            var allowed = methods
            if methods.contains(APIMethod.get.rawValue) { allowed.insert(HTTPRequest.Method.head.rawValue) }
            let allow = allowed.sorted().joined(separator: ", ")
            for method in otherMethods where !allowed.contains(method.rawValue) {
                router.on(RouterPath(path), method: method) { request, _ -> Response in
                    var headers = HTTPFields()
                    headers[.allow] = allow
                    throw HTTPError(.methodNotAllowed, headers: headers,
                                    message: "\(request.uri.path) does not take \(request.method.rawValue); it takes \(allow)")
                }
            }
        }
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
    static func error(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var response = Response.document(status, ErrorDocument(status: status.code, message: message))
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// Turns every failure into the API's JSON error shape, so that clients read one format.
/// Unexpected errors become 500 without their details, which may name internals.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as CameraRefusal {
            return .document(refusal.status, ErrorDocument(code: refusal.error.code, message: refusal.message, camera: refusal.error))
        } catch let error as HTTPError {
            return .error(error.status, error.body ?? Self.defaultMessage(error.status, request), headers: error.headers)
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

/// A camera's refusal met on the way through another layer (the engine refusing a job's plan):
/// answered with `status` and the camera's error, so that a client reads it as the camera routes
/// give it.
struct CameraRefusal: Error {
    let status: HTTPResponse.Status
    let error: CameraError
    let message: String
}

/// Refuses a request whose `Host` is not one of this web app's (``WebHostRule``) with 421.
struct HostCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    let rule: WebHostRule

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let host = request.head.authority
        guard rule.allows(host, on: .current()) else {
            throw HTTPError(.misdirectedRequest, message: "'\(host ?? "")' is not a name of this web app; "
                + "if browsers reach it by that name, add it to web.hosts in the configuration")
        }
        return try await next(request, context)
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
