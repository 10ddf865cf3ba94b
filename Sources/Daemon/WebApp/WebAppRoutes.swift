import Foundation
import Hummingbird
import JSON
import NIOCore
import UnleashedAPI
import UnleashedKit
import HTTPTypes

/// What the web app's listener serves besides the control API: the page's files and the three
/// routes a browser uses before it has a session (pair, ask who it is, forget itself). Every
/// other request on that listener is the control API, identified by the session cookie.
struct WebAppRoutes: Sendable {
    let assets: WebAssets
    let browsers: WebClients
    let access: AccessControl
    let version: String
    /// Whether the daemon drives the simulator, for the page's demo banner.
    let demo: Bool
    /// Whether the listener is HTTPS, so that the cookie is sent over nothing else.
    let secure: Bool

    /// The cookie that carries a paired browser's secret.
    static let cookieName = "unleashed_session"
    /// The header every request of the page carries. A cross-site form or image cannot set a
    /// header, so a request that changes anything and lacks it did not come from the page.
    static let pageHeader = HTTPField.Name("Unleashed-Web")!
    private static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    func add(to router: Router<ControlRequestContext>) {
        for path in assets.byPath.keys {
            router.get(RouterPath(path)) { request, _ in serve(path, request) }
            router.head(RouterPath(path)) { request, _ in serve(path, request) }
        }
        router.get("/web/session") { request, context -> Response in
            if Self.sessionSecret(in: request) == nil, request.headers[.authorization] == nil {
                throw HTTPError(.unauthorized, message: "this browser is not paired; enter the code the daemon shows")
            }
            let client = try await access.identify(request, context: context)
            return .json(.ok, session(client))
        }
        router.post("/web/pair") { request, context -> Response in
            try Self.requirePage(request)
            return try await pair(request, context: context)
        }
        router.post("/web/logout") { request, _ -> Response in
            try Self.requirePage(request)
            var headers = HTTPFields()
            if let secret = Self.sessionSecret(in: request), let client = browsers.client(secret: secret) {
                // A locked daemon keeps its browsers paired: a stand's phone is not unpaired by
                // whoever holds it, only by the daemon's owner (`unleashed web revoke`).
                guard access.identity(of: client).permissions.contains(.leave) else {
                    throw HTTPError(.forbidden, message: "the daemon is locked: this browser stays paired; the daemon's owner revokes it with `unleashed web revoke \(client.id)`")
                }
                _ = try? browsers.revoke(id: client.id)
            }
            headers[.setCookie] = cookie(value: "", maxAge: 0)
            return Response(status: .noContent, headers: headers)
        }
    }

    private func serve(_ path: String, _ request: Request) -> Response {
        guard let asset = assets.asset(at: path) else { return .error(.notFound, "no such file") }
        var headers = HTTPFields()
        headers[.contentType] = asset.contentType
        headers[.eTag] = asset.etag
        // Revalidated on each load (a 304 costs a few bytes), so a new daemon's page is never stale.
        headers[.cacheControl] = "no-cache"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.vary] = "Accept-Encoding"
        if path == "/" {
            headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
            headers[Self.referrerPolicy] = "no-referrer"
        }
        if request.headers[.ifNoneMatch] == asset.etag {
            return Response(status: .notModified, headers: headers)
        }
        var body = asset.plain
        if let gzipped = asset.gzipped, Self.acceptsGzip(request.headers[.acceptEncoding]) {
            headers[.contentEncoding] = "gzip"
            body = gzipped
        }
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: .ok, headers: headers, body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: body))
    }

    private func pair(_ request: Request, context: ControlRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 4096)
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)), case .object(let members) = json,
              let code = members["code"]?.stringValue else {
            throw HTTPError(.badRequest, message: "the body must be a JSON object like {\"code\": \"123456\"}")
        }
        let name = members["name"]?.stringValue ?? Self.browserName(request.headers[.userAgent] ?? "")
        let client: WebClient
        do {
            client = try browsers.pair(code: code, name: name, from: WebPairing.clientKey(context.channel.remoteAddress))
        } catch let refusal as WebPairing.Refusal {
            switch refusal {
            case .malformed: throw HTTPError(.badRequest, message: refusal.description)
            case .unknown: throw HTTPError(.unauthorized, message: refusal.description)
            case .locked(let until):
                var headers = HTTPFields()
                headers[.retryAfter] = String(max(1, Int(until.timeIntervalSinceNow.rounded(.up))))
                context.logger.warning("web app: too many wrong pairing codes from \(context.channel.remoteAddress?.ipAddress ?? "a client"); it is refused for a minute")
                throw HTTPError(.tooManyRequests, headers: headers, message: refusal.description)
            case .voided:
                context.logger.warning("web app: \(WebPairing.maxWrongPerIssue) wrong pairing codes since the last code was made: every code is void; `unleashed web code` makes a new one")
                throw HTTPError(.tooManyRequests, message: refusal.description)
            }
        } catch let failure as WebClients.StoreError {
            context.logger.error("web app: \(failure)")
            throw HTTPError(.internalServerError, message: "the daemon could not save the pairing: \(failure)")
        }
        context.logger.notice("web app: paired browser '\(client.name)' (\(client.id)) as \(client.role.rawValue)")
        var response = Response.json(.ok, session(access.identity(of: client)))
        response.headers[.setCookie] = cookie(value: client.secret, maxAge: 400 * 24 * 3600)
        return response
    }

    private func session(_ client: ClientIdentity) -> JSONValue {
        [
            "client": .string(client.webClient ?? ""),
            "name": .string(browsers.all.first { $0.id == client.webClient }?.name ?? client.recognisedAs), "role": .string(client.role),
            "permissions": .array(Permission.allCases.filter(client.permissions.contains).map { .string($0.rawValue) }),
            "locked": .bool(client.locked), "demo": .bool(demo), "version": .string(version),
        ]
    }

    private func cookie(value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// Refuses a request that did not come from the page: another site's form or script cannot
    /// set the header (a script that tries needs the daemon's permission, which it never gives),
    /// so it can neither burn pairing tries nor unpair a phone.
    private static func requirePage(_ request: Request) throws(HTTPError) {
        guard request.headers[pageHeader] != nil else {
            throw HTTPError(.forbidden, message: "this request must come from the web app's page (it sends the Unleashed-Web header)")
        }
    }

    /// The secret of the session cookie, if the request carries one.
    static func sessionSecret(in request: Request) -> Substring? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard trimmed.hasPrefix(cookieName + "=") else { continue }
                let value = trimmed.dropFirst(cookieName.count + 1)
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    private static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            return fields.first?.lowercased() == "gzip" && !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }

    /// "Chrome on Android": enough to tell a phone from a tablet in `unleashed web clients`.
    static func browserName(_ userAgent: String) -> String {
        let system = [("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("CrOS", "ChromeOS"), ("Windows", "Windows"),
                      ("Macintosh", "macOS"), ("Linux", "Linux")].first { userAgent.contains($0.0) }?.1
        let browser = [("Firefox/", "Firefox"), ("Edg/", "Edge"), ("Chrome/", "Chrome"), ("Safari/", "Safari")]
            .first { userAgent.contains($0.0) }?.1
        switch (browser, system) {
        case let (browser?, system?): return "\(browser) on \(system)"
        case let (browser?, nil): return browser
        case let (nil, system?): return "a browser on \(system)"
        default: return "a browser"
        }
    }
}
