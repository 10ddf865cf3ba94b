import Foundation
import Hummingbird
import JSON
import UnleashedAPI
import UnleashedKit

/// The control API's side of the web app: codes that pair a browser, and the browsers paired,
/// for `unleashed web code`, `clients` and `revoke`. Pairing a browser gives it a role, so only
/// a client with `access` (an operator; while locked, the daemon's own user on the socket) may
/// make codes or revoke browsers.
struct WebClientRoutes: Sendable {
    let browsers: WebClients?

    func add(to router: APIRoutes) {
        router.on(API.makePairingCode) { request, context -> Response in
            try context.authorize(.access)
            let browsers = try served()
            let body = try await APIRoutes.bytes(of: request.body)
            let role: DaemonConfiguration.AccessToken.Role
            if body.readableBytes == 0 {
                role = .operator
            } else {
                let request: PairingCodeRequest
                do throws(JSONShapeError) {
                    request = try PairingCodeRequest(requestBody: try JSONValue(parsing: body.readableBytesView))
                } catch {
                    throw HTTPError(.badRequest, message: error.path.isEmpty ? "the body must be a JSON object like {\"role\": \"viewer\"}" : error.description)
                }
                guard let wanted = DaemonConfiguration.AccessToken.Role(rawValue: request.role) else {
                    throw HTTPError(.badRequest, message: "role: '\(request.role)' is not a role; use operator or viewer")
                }
                role = wanted
            }
            let code = browsers.makeCode(role: role)
            return .document(.created, PairingCodeDocument(code: code.digits, role: code.role.rawValue, expires: code.expires,
                                                           url: browsers.pairingURL(for: code)))
        }
        router.on(API.webClients) { _, context -> Response in
            try context.authorize(.watch)
            let clients = try served().all.map { WebClientList.Client(id: $0.id, name: $0.name, role: $0.role.rawValue, paired: $0.paired) }
            return .document(.ok, WebClientList(clients: clients))
        }
        router.on(API.revokeWebClient) { _, context -> Response in
            try context.authorize(.access)
            let id = try context.requirePathParameter("client")
            let browsers = try served()
            do {
                guard try browsers.revoke(id: id) else {
                    let known = browsers.all.map(\.id)
                    throw HTTPError(.notFound, message: "no browser '\(id)' is paired"
                        + (known.isEmpty ? "" : "; paired: " + known.joined(separator: ", ")))
                }
            } catch let failure as WebClients.StoreError {
                throw HTTPError(.internalServerError, message: "the daemon could not save the change: \(failure)")
            }
            context.logger.notice("web app: revoked browser \(id)")
            return Response(status: .noContent)
        }
    }

    private func served() throws(HTTPError) -> WebClients {
        guard let browsers else {
            throw HTTPError(.conflict, message: "this daemon serves no web app; start it with --web HOST:PORT or set web.listen")
        }
        return browsers
    }
}
