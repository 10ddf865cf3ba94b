import Foundation
import Hummingbird
import Synchronization
import NIOCore
import Testing
import UnleashedTestSupport
import UnleashedKit
import UnleashedSimulator
@testable import Daemon

/// Pairing codes as rules, walked with a hand-set clock.
@Suite("web app: pairing codes")
struct WebPairingTests {
    let start = Date(timeIntervalSince1970: 1_795_600_000)

    /// Numbers from a list, so a test knows the code it gets.
    final class Draws: @unchecked Sendable {
        // Only the test's own task draws.
        var numbers: [Int]
        init(_ numbers: [Int]) { self.numbers = numbers }
        func next() -> Int { numbers.removeFirst() }
    }

    @Test("a code pairs once, with its role, typed with or without spaces")
    func once() throws {
        var pairing = WebPairing()
        let draws = Draws([42, 402_617])
        let viewer = pairing.issue(role: .viewer, now: start, random: draws.next)
        let operatorCode = pairing.issue(role: .operator, now: start, random: draws.next)
        #expect(viewer.digits == "000042")
        #expect(operatorCode.digits == "402617")
        #expect(try pairing.redeem("000 042", now: start) == .viewer)
        #expect(try pairing.redeem("402-617", now: start.addingTimeInterval(1)) == .operator)
        #expect(throws: WebPairing.Refusal.unknown(triesLeft: 4)) { try pairing.redeem("402617", now: start.addingTimeInterval(2)) }
    }

    @Test("a code expires after ten minutes")
    func expiry() {
        var pairing = WebPairing()
        let code = pairing.issue(role: .operator, now: start) { 123_456 }
        #expect(code.expires == start.addingTimeInterval(600))
        #expect(throws: WebPairing.Refusal.unknown(triesLeft: 4)) { try pairing.redeem("123456", now: start.addingTimeInterval(600)) }
    }

    @Test("what is not six digits is refused without counting as a guess")
    func malformed() throws {
        var pairing = WebPairing()
        pairing.issue(role: .operator, now: start) { 123_456 }
        for text in ["12345", "1234567", "abcdef", "", "١٢٣٤٥٦"] {
            #expect(throws: WebPairing.Refusal.malformed) { try pairing.redeem(text, now: start) }
        }
        #expect(try pairing.redeem("123456", now: start) == .operator)
    }

    @Test("five wrong codes lock pairing for a minute; the codes stay valid for after")
    func lockout() throws {
        var pairing = WebPairing()
        pairing.issue(role: .operator, now: start) { 123_456 }
        for triesLeft in (1...4).reversed() {
            #expect(throws: WebPairing.Refusal.unknown(triesLeft: triesLeft)) { try pairing.redeem("000000", now: start) }
        }
        let until = start.addingTimeInterval(60)
        #expect(throws: WebPairing.Refusal.locked(until: until)) { try pairing.redeem("000000", now: start) }
        // The right code is refused while locked, and pairs after.
        #expect(throws: WebPairing.Refusal.locked(until: until)) { try pairing.redeem("123456", now: start.addingTimeInterval(59)) }
        #expect(try pairing.redeem("123456", now: until) == .operator)
    }

    @Test("one client's wrong codes lock that client only: the owner's right code, from another address, still pairs")
    func lockoutPerClient() throws {
        var pairing = WebPairing()
        pairing.issue(role: .operator, now: start) { 123_456 }
        // The fifth wrong code, at second 4, locks this client for a minute.
        let until = start.addingTimeInterval(64)
        for second in 0..<20 {
            // A guesser who keeps trying stays locked, minute after minute.
            _ = try? pairing.redeem("000000", from: "203.0.113.9", now: start.addingTimeInterval(Double(second)))
        }
        #expect(throws: WebPairing.Refusal.locked(until: until)) { try pairing.redeem("123456", from: "203.0.113.9", now: start.addingTimeInterval(30)) }
        #expect(try pairing.redeem("123456", from: "192.168.1.20", now: start.addingTimeInterval(30)) == .operator)
    }

    @Test("wrong codes from many clients together void every code; a new code pairs again")
    func voidedByManyClients() throws {
        var pairing = WebPairing()
        pairing.issue(role: .operator, now: start) { 123_456 }
        for guess in 1..<WebPairing.maxWrongPerIssue {
            #expect(throws: WebPairing.Refusal.unknown(triesLeft: 4)) {
                try pairing.redeem(String(format: "%06d", guess), from: "198.51.100.\(guess)", now: start)
            }
        }
        #expect(throws: WebPairing.Refusal.voided) { try pairing.redeem("000000", from: "198.51.100.200", now: start) }
        #expect(throws: WebPairing.Refusal.self) { try pairing.redeem("123456", from: "192.168.1.20", now: start) }
        pairing.issue(role: .viewer, now: start) { 654_321 }
        #expect(try pairing.redeem("654321", from: "192.168.1.20", now: start) == .viewer)
    }

    @Test("a client is its IPv4 address, its IPv6 address's /64, or an IPv4 address mapped into IPv6 by a dual-stack listener")
    func clientKeys() throws {
        #expect(WebPairing.clientKey(try SocketAddress(ipAddress: "203.0.113.9", port: 1)) == "203.0.113.9")
        #expect(WebPairing.clientKey(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1)) == "192.0.2.7")
        #expect(WebPairing.clientKey(try SocketAddress(ipAddress: "2001:db8:1:2:3:4:5:6", port: 1)) == "2001:0db8:0001:0002::/64")
        #expect(WebPairing.clientKey(try SocketAddress(ipAddress: "2001:db8:1:2:ffff::1", port: 1)) == "2001:0db8:0001:0002::/64")
        #expect(WebPairing.clientKey(nil) == "local")
    }

    @Test("a right code resets the count of wrong ones")
    func reset() throws {
        var pairing = WebPairing()
        pairing.issue(role: .operator, now: start) { 111_111 }
        pairing.issue(role: .operator, now: start) { 222_222 }
        for _ in 1...4 { _ = try? pairing.redeem("000000", now: start) }
        #expect(try pairing.redeem("111111", now: start) == .operator)
        #expect(throws: WebPairing.Refusal.unknown(triesLeft: 4)) { try pairing.redeem("000000", now: start) }
    }

    @Test("a drawn code equal to a valid one is drawn again")
    func distinct() {
        var pairing = WebPairing()
        let draws = Draws([7, 7, 8])
        #expect(pairing.issue(role: .operator, now: start, random: draws.next).digits == "000007")
        #expect(pairing.issue(role: .operator, now: start, random: draws.next).digits == "000008")
    }
}

/// The paired browsers' file: kept across restarts, private, never lost to a full disk.
@Suite("web app: paired browsers")
struct WebClientsTests {
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-clients-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a paired browser is saved with mode 0600 and known again after a restart; a revoked one is not")
    func persisted() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/web-clients.json"
        let browsers = try WebClients(file: file)
        let code = browsers.makeCode(role: .viewer)
        let client = try browsers.pair(code: code.digits, name: "Firefox on Android")
        #expect(client.role == .viewer)
        #expect(client.secret.count == 64)
        let mode = try #require(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        let restarted = try WebClients(file: file)
        #expect(restarted.client(secret: client.secret)?.id == client.id)
        #expect(restarted.client(secret: String(client.secret.dropLast()) + "x") == nil)
        #expect(try restarted.revoke(id: client.id))
        #expect(try !restarted.revoke(id: client.id))
        #expect(try WebClients(file: file).all.isEmpty)
    }

    @Test("using the last operator code shows a new one, so the next phone can pair")
    func nextCode() throws {
        let browsers = try WebClients(file: nil)
        let shown = Mutex<[WebPairing.Code]>([])
        browsers.onCode { code in shown.withLock { $0.append(code) } }
        let first = browsers.makeCode(role: .operator)
        _ = try browsers.pair(code: first.digits, name: "phone")
        let codes = shown.withLock { $0 }
        #expect(codes.count == 2)
        #expect(codes.last?.role == .operator)
        #expect(codes.last?.digits != first.digits)
    }

    @Test("a file that cannot be read is an error naming it, and is left as it is")
    func unreadable() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/web-clients.json"
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            _ = try WebClients(file: file)
        } throws: { error in
            "\(error)".contains(file) && "\(error)".contains("move the file away")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{not json")
    }

    @Test("on a full disk pairing fails with the reason, the browser is not let in, and the saved ones stay")
    func fullDisk() throws {
        let disk = try SmallDisk(megabytes: 1)
        defer { disk.remove() }
        let file = disk.directory + "/web-clients.json"
        let browsers = try WebClients(file: file)
        let first = try browsers.pair(code: browsers.makeCode(role: .operator).digits, name: "first")
        let saved = try Data(contentsOf: URL(fileURLWithPath: file))
        _ = disk.fill()
        let code = browsers.makeCode(role: .viewer)
        #expect {
            _ = try browsers.pair(code: code.digits, name: "second")
        } throws: { error in
            "\(error)".contains("No space left on device")
        }
        #expect(browsers.all.map(\.id) == [first.id])
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == saved)
        #expect(!FileManager.default.fileExists(atPath: file + ".new"))
    }
}

/// The web app's listener as a browser meets it, with curl: the page, pairing, the cookie, the
/// API behind it with the roles and the locked mode, HTTPS.
@Suite("web app: the listener")
struct WebListenerTests {
    struct Running {
        let url: String
        let socket: String
        let browsers: WebClients
    }

    static func withWebServer<T>(locked: Bool = false, certificate: (cert: String, key: String)? = nil, limits: ListenerLimits? = nil,
                                 listen: String = "127.0.0.1:0", _ body: (Running) async throws -> T) async throws -> T {
        var setup = DemoServer.Setup()
        setup.web = DaemonConfiguration.Web(listen: DaemonConfiguration.ListenAddress(listen, allowingAnyPort: true),
                                            certificate: certificate?.cert, key: certificate?.key)
        setup.access = AccessPolicy(locked: locked)
        setup.browsersOnDisk = true
        setup.limits = limits
        setup.demoMode = true
        return try await DemoServer.with(setup) { server in
            let port = try #require(await server.server.webPort)
            return try await body(Running(url: (certificate == nil ? "http" : "https") + "://127.0.0.1:\(port)",
                                          socket: server.socket, browsers: server.browsers))
        }
    }

    /// curl with headers shown (`-i`), so that a test reads Set-Cookie and Content-Encoding.
    static func request(_ url: String, _ arguments: [String] = []) async throws -> (status: Int, headers: String, body: String) {
        let answer = try await Curl.request(url: url, arguments: ["-k", "-i"] + arguments)
        let parts = answer.body.components(separatedBy: "\r\n\r\n")
        return (answer.status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func pair(_ running: Running, role: DaemonConfiguration.AccessToken.Role) async throws -> String {
        let code = running.browsers.makeCode(role: role)
        let answer = try await request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"\(code.digits)\"}"])
        #expect(answer.status == 200)
        let cookie = try #require(answer.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        return String(cookie.dropFirst("set-cookie: ".count).split(separator: ";")[0])
    }

    @Test("the page is served from the binary, gzipped when asked, with its security headers and a validator")
    func page() async throws {
        try await Self.withWebServer { running in
            let plain = try await Self.request(running.url + "/")
            #expect(plain.status == 200)
            #expect(plain.body.contains("<html"))
            #expect(plain.headers.lowercased().contains("content-security-policy: default-src 'self'"))
            let gzipped = try await Self.request(running.url + "/app.js", ["-H", "Accept-Encoding: gzip", "-o", "/dev/null", "-D", "-"])
            #expect(gzipped.headers.lowercased().contains("content-encoding: gzip"))
            let etag = try #require(plain.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }?.split(separator: " ").last)
            #expect(try await Self.request(running.url + "/", ["-H", "If-None-Match: \(etag)"]).status == 304)
            // Past the page's own files, a browser without a session learns nothing; a paired one gets 404.
            #expect(try await Self.request(running.url + "/nothing-here").status == 401)
            let cookie = try await Self.pair(running, role: .viewer)
            #expect(try await Self.request(running.url + "/nothing-here", ["-b", cookie]).status == 404)
        }
    }

    @Test("every file of the page's folder is served, and the service worker keeps exactly those, under their version")
    func everyAssetServed() async throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Daemon/WebApp/Assets")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(files.count > 20)
        try await Self.withWebServer { running in
            for file in files {
                let path = file == "index.html" ? "/" : "/" + file
                #expect(try await Self.request(running.url + path, ["-o", "/dev/null"]).status == 200, "\(path) is in the folder but not served")
            }
            // The worker's shell is every file but itself; its version changes with their content.
            let worker = try await Self.request(running.url + "/sw.js")
            let listed = try #require(worker.body.split(separator: "\n").first { $0.hasPrefix("const SHELL_FILES = ") })
            let shell = Set(files.filter { $0 != "sw.js" }.map { $0 == "index.html" ? "/" : "/" + $0 })
            #expect(Set(listed.split(separator: "\"").filter { $0.hasPrefix("/") }.map(String.init)) == shell)
            #expect(worker.body.contains("const SHELL_VERSION = \""))
        }
    }

    @Test("scripts and stylesheets are served without their comment lines, and nothing else of them changes")
    func commentLines() {
        let source = """
            // a line comment
            /** A block
             *  over lines. */
            export const a = "http://x"; // kept: code before it
              /* one line */
            /* a block */ const b = 1;
            const c = `// in a string`;
            """
        let served = String(decoding: WebAssets.withoutCommentLines(Array(source.utf8)), as: UTF8.self)
        #expect(served == """
            export const a = "http://x"; // kept: code before it
            const b = 1;
            const c = `// in a string`;
            """)
    }

    @Test("a browser pairs with a code and gets an HttpOnly cookie; a wrong code says how many tries are left")
    func pairing() async throws {
        try await Self.withWebServer { running in
            #expect(try await Self.request(running.url + "/web/session").status == 401)
            let wrong = try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"000000\"}"])
            #expect(wrong.status == 401)
            #expect(wrong.body.contains("4 tries left"))
            #expect(try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "[1]"]).status == 400)
            // Another site's form cannot send the page's header: refused before it costs a try.
            let crossSite = try await Self.request(running.url + "/web/pair", ["-X", "POST", "-d", "{\"code\": \"000000\"}"])
            #expect(crossSite.status == 403)
            let again = try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"000000\"}"])
            #expect(again.body.contains("3 tries left"))

            let code = running.browsers.makeCode(role: .operator)
            let paired = try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"\(code.digits)\"}",
                                                                            "-A", "Mozilla/5.0 (Linux; Android 14) Chrome/131.0"])
            #expect(paired.status == 200)
            #expect(paired.headers.contains("HttpOnly; SameSite=Strict"))
            #expect(!paired.headers.contains("Secure"))
            #expect(paired.body.contains("\"role\":\"operator\""))
            #expect(running.browsers.all.map(\.name) == ["Chrome on Android"])
            // A code pairs once.
            #expect(try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"\(code.digits)\"}"]).status == 401)
        }
    }

    @Test("the cookie is the browser's role on the API; a change needs the page's header; a revoked browser is refused")
    func roles() async throws {
        try await Self.withWebServer { running in
            let operatorCookie = try await Self.pair(running, role: .operator)
            let viewerCookie = try await Self.pair(running, role: .viewer)
            let page = ["-H", "Unleashed-Web: 1"]
            #expect(try await Self.request(running.url + "/v1/status", ["-b", operatorCookie]).status == 200)
            #expect(try await Self.request(running.url + "/v1/cameras/demo/shoot", ["-X", "POST", "-b", operatorCookie] + page).status == 200)
            let forged = try await Self.request(running.url + "/v1/cameras/demo/shoot", ["-X", "POST", "-b", operatorCookie])
            #expect(forged.status == 403)
            #expect(forged.body.contains("Unleashed-Web"))
            #expect(try await Self.request(running.url + "/v1/status", ["-b", viewerCookie]).status == 200)
            let viewerChange = try await Self.request(running.url + "/v1/cameras/demo/settings/iso",
                                                      ["-X", "PUT", "-b", viewerCookie, "-d", "{\"value\": \"400\"}"] + page)
            #expect(viewerChange.status == 403)
            #expect(viewerChange.body.contains("viewer role"))

            let viewer = try #require(running.browsers.all.first { $0.role == .viewer })
            #expect(try await Curl.request(socket: running.socket, path: "/v1/web/clients/\(viewer.id)", arguments: ["-X", "DELETE"]).status == 204)
            let revoked = try await Self.request(running.url + "/v1/status", ["-b", viewerCookie])
            #expect(revoked.status == 401)
            #expect(revoked.body.contains("pair it with a code"))
            #expect(try await Self.request(running.url + "/web/session", ["-b", viewerCookie]).status == 401)
            #expect(try await Curl.request(socket: running.socket, path: "/v1/web/clients/\(viewer.id)", arguments: ["-X", "DELETE"]).status == 404)
        }
    }

    @Test("in the locked mode a browser's session says so and a change is refused with the reason; a shot is not")
    func locked() async throws {
        try await Self.withWebServer(locked: true) { running in
            let cookie = try await Self.pair(running, role: .operator)
            let session = try await Self.request(running.url + "/web/session", ["-b", cookie])
            #expect(session.body.contains("\"locked\":true"))
            #expect(session.body.contains("\"permissions\":[\"watch\",\"shoot\"]"))
            let page = ["-H", "Unleashed-Web: 1"]
            let change = try await Self.request(running.url + "/v1/cameras/demo/settings/iso",
                                                ["-X", "PUT", "-b", cookie, "-d", "{\"value\": \"400\"}"] + page)
            #expect(change.status == 403)
            #expect(change.body.contains("locked"))
            #expect(try await Self.request(running.url + "/v1/cameras/demo/shoot", ["-X", "POST", "-b", cookie] + page).status == 200)
        }
    }

    @Test("with a certificate the web app is HTTPS and the cookie is Secure")
    func https() async throws {
        let folder = try WebClientsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (cert, key) = (folder + "/cert.pem", folder + "/key.pem")
        let made = try await runProgram(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", cert,
        ], environment: ProcessInfo.processInfo.environment)
        #expect(made.status == 0)
        try await Self.withWebServer(certificate: (cert, key)) { running in
            #expect(running.url.hasPrefix("https://"))
            #expect(try await Self.request(running.url + "/").status == 200)
            let code = running.browsers.makeCode(role: .operator)
            let paired = try await Self.request(running.url + "/web/pair", ["-X", "POST", "-H", "Unleashed-Web: 1", "-d", "{\"code\": \"\(code.digits)\"}"])
            #expect(paired.headers.contains("SameSite=Strict; Secure"))
            // Plain HTTP on the HTTPS port gets no page.
            let plain = try await Curl.request(url: running.url.replacingOccurrences(of: "https", with: "http") + "/")
            #expect(plain.status != 200)
        }
    }

    @Test("a certificate that cannot be read fails the start with the paths")
    func badCertificate() async throws {
        await #expect {
            try await Self.withWebServer(certificate: ("/nonexistent/cert.pem", "/nonexistent/key.pem")) { _ in }
        } throws: { error in
            "\(error)".contains("cannot use the certificate /nonexistent/cert.pem")
        }
    }
}
