import Hummingbird
import JSON
import NIOCore
import UnleashedAPI

/// The control API's routes as they are added to a listener's router, each from its
/// ``Endpoint``: the list of what is served is the list of what was added, so a route cannot be
/// served and yet missing from the 405 answers or from the contract test against
/// docs/api/openapi.yaml (``ControlAPI/servedRoutes``).
final class APIRoutes {
    let router: Router<ControlRequestContext>
    /// Every route added, in order.
    private(set) var served: [Route] = []

    init(_ router: Router<ControlRequestContext>) {
        self.router = router
    }

    /// Serves `endpoint` with a handler that reads the request and writes the response itself:
    /// for event streams, answers that are not JSON, and bodies read their own way.
    func on<Body, Answer>(_ endpoint: Endpoint<Body, Answer>,
                          use handler: @escaping @Sendable (Request, ControlRequestContext) async throws -> Response) {
        served.append(endpoint.route)
        router.on(RouterPath(endpoint.route.routerPath), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue) ?? .get, use: handler)
    }

    /// Serves `endpoint` typed by its documents: the client's `permission` checked, its body
    /// read as `Body` (a body that is not one is answered 400, naming the member), and the
    /// handler's `Answer` written with `status`.
    func on<Body, Answer>(_ endpoint: Endpoint<Body, Answer>, requires permission: Permission, status: HTTPResponse.Status = .ok,
                          use handler: @escaping @Sendable (Body, ControlRequestContext) async throws -> Answer) {
        on(endpoint) { request, context in
            try context.authorize(permission)
            let body = try await Self.body(Body.self, of: request)
            let answer = try await handler(body, context)
            return Answer.self == NoDocument.self ? Response(status: status == .ok ? .noContent : status) : .document(status, answer)
        }
    }

    /// The request's body as `Body`, read strictly (``JSONForm/init(requestBody:)``): 400 naming
    /// the member a client got wrong. Nothing is read for an endpoint that takes none.
    static func body<Body: JSONForm>(_: Body.Type, of request: Request) async throws -> Body {
        if Body.self == NoDocument.self, let none = NoDocument() as? Body { return none }
        let document = try await json(of: request.body)
        do throws(JSONShapeError) {
            return try Body(requestBody: document)
        } catch {
            throw HTTPError(.badRequest, message: error.description)
        }
    }

    /// The body as JSON: 400 when it is empty or not JSON.
    static func json(of body: RequestBody) async throws -> JSONValue {
        let buffer = try await bytes(of: body)
        guard buffer.readableBytes > 0 else { throw HTTPError(.badRequest, message: "this request needs a JSON body") }
        do throws(JSONShapeError) {
            return try JSONValue(parsing: buffer.readableBytesView)
        } catch {
            throw HTTPError(.badRequest, message: "the request body is not JSON: \(error.problem)")
        }
    }

    /// The body's bytes: 413 past ``ControlAPI/maxBodySize``.
    static func bytes(of body: RequestBody) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: ControlAPI.maxBodySize)
        } catch {
            throw HTTPError(.contentTooLarge, message: "the request body is over the limit of \(ControlAPI.maxBodySize) bytes")
        }
    }
}
