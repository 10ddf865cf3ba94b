public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A browser that was paired with the daemon: the token its cookie carries and the role it got.
public struct WebClient: Codable, Sendable, Equatable {
    /// Short and public: how `unleashed web clients` and `revoke` name it.
    public var id: String
    /// What the browser called itself when it paired (its user agent's gist, or a label).
    public var name: String
    public var role: DaemonConfiguration.AccessToken.Role
    /// The cookie's secret; never shown.
    public var secret: String
    public var paired: Date
}

extension DaemonConfiguration.AccessToken.Role: Codable {}

/// The browsers paired with this daemon and the pairing codes it shows, kept in a file of their
/// own (mode 0600, replaced whole on each change) so that a paired phone stays paired across
/// restarts, and shared by every listener: the web app pairs and identifies browsers, the
/// control API lists and revokes them and makes codes.
public final class WebClients: Sendable {
    /// Why the file of paired browsers could not be read or written.
    public struct StoreError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private struct State {
        var clients: [WebClient]
        var pairing = WebPairing()
    }

    private let file: String?
    private let state: Mutex<State>
    private let now: @Sendable () -> Date
    /// Called with each code as it is made, to show it to the person at the daemon.
    private let announce: Mutex<(@Sendable (WebPairing.Code) -> Void)?> = Mutex(nil)
    /// Told of each browser revoked, to close what it has open.
    private let revoked: Mutex<(@Sendable (String) -> Void)?> = Mutex(nil)
    private let address: Mutex<String?> = Mutex(nil)

    /// Where browsers reach the web app (`http://192.168.1.20:8080/`), once it listens: codes
    /// are shown with it, as a link and a QR code.
    public var url: String? {
        get { address.withLock { $0 } }
        set { address.withLock { $0 = newValue } }
    }

    /// The address that pairs a browser with `code` when opened: the page reads the code from it.
    public func pairingURL(for code: WebPairing.Code) -> String? { url.map { $0 + "#code=" + code.digits } }

    /// Reads the paired browsers from `file`, if it exists; nil keeps them in memory only.
    /// A file that cannot be read is an error, never replaced: it holds pairings people made.
    public init(file: String?, now: @escaping @Sendable () -> Date = Date.init) throws(StoreError) {
        self.file = file
        self.now = now
        var clients: [WebClient] = []
        if let file, FileManager.default.fileExists(atPath: file) {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                clients = try decoder.decode([WebClient].self, from: data)
            } catch {
                throw StoreError(description: "cannot read the paired browsers in \(file): \(error.localizedDescription); "
                    + "move the file away to start with none")
            }
        }
        state = Mutex(State(clients: clients))
    }

    /// Shows each code made from now on through `announce` (the daemon's log and terminal).
    public func onCode(_ announce: @escaping @Sendable (WebPairing.Code) -> Void) {
        self.announce.withLock { $0 = announce }
    }

    /// Tells `close` the id of each browser revoked from now on, so that its open streams end
    /// at once rather than at their next check.
    public func onRevoke(_ close: @escaping @Sendable (String) -> Void) {
        revoked.withLock { $0 = close }
    }

    /// A new pairing code for `role`.
    @discardableResult
    public func makeCode(role: DaemonConfiguration.AccessToken.Role) -> WebPairing.Code {
        let code = state.withLock { $0.pairing.issue(role: role, now: now()) { Int.random(in: 0..<1_000_000) } }
        announce.withLock { $0 }?(code)
        return code
    }

    /// Pairs a browser that typed `code`: a client with the code's role, saved before it is
    /// returned. When the last operator code is used up a new one is shown, so the next phone
    /// can pair without a trip to the shell.
    /// - Parameter address: Who typed it (``WebPairing/clientKey(_:)``), whose wrong codes are
    ///   counted apart from others'.
    public func pair(code: String, name: String, from address: String = "") throws -> WebClient {
        let client: WebClient = try state.withLock { state in
            let role = try state.pairing.redeem(code, from: address, now: now())
            let client = WebClient(id: Self.randomHex(bytes: 4), name: Self.cleanName(name), role: role,
                                   secret: Self.randomHex(bytes: 32), paired: now())
            var clients = state.clients
            clients.append(client)
            try save(clients)
            state.clients = clients
            return client
        }
        if client.role == .operator, !state.withLock({ $0.pairing.valid(at: now()).contains { $0.role == .operator } }) {
            makeCode(role: .operator)
        }
        return client
    }

    /// The client whose cookie carries `secret`. Every secret is compared in full, so the time
    /// taken tells nothing about how much of one a guess matched.
    public func client(secret: some StringProtocol) -> WebClient? {
        state.withLock { state in
            var found: WebClient?
            for client in state.clients where AccessPolicy.constantTimeEqual(client.secret.utf8, secret.utf8) {
                found = client
            }
            return found
        }
    }

    /// Every paired browser, oldest first.
    public var all: [WebClient] { state.withLock { $0.clients } }

    /// The codes still valid, for `unleashed web code` to show without making another.
    public var validCodes: [WebPairing.Code] { state.withLock { $0.pairing.valid(at: now()) } }

    /// Forgets the client `id`: its browser is asked to pair again. False when there is none.
    public func revoke(id: String) throws(StoreError) -> Bool {
        let done = try state.withLock { (state: inout State) throws(StoreError) -> Bool in
            var clients = state.clients
            guard let index = clients.firstIndex(where: { $0.id == id }) else { return false }
            clients.remove(at: index)
            try save(clients)
            state.clients = clients
            return true
        }
        if done { revoked.withLock { $0 }?(id) }
        return done
    }

    /// Writes `clients` to a new file (mode 0600 from its creation, since it holds secrets),
    /// flushed, then renamed over the old one: a full disk or a crash leaves the old file whole.
    private func save(_ clients: [WebClient]) throws(StoreError) {
        guard let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data: Data
        do { data = try encoder.encode(clients) } catch { throw StoreError(description: "cannot encode the paired browsers: \(error)") }
        let directory = (file as NSString).deletingLastPathComponent
        if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let temporary = file + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot save the paired browsers to \(file)") }
        var written = 0
        let complete = data.withUnsafeBytes { bytes -> Bool in
            while written < bytes.count {
                let result = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
                if result < 0 { if errno == EINTR { continue }; return false }
                written += result
            }
            return fsync(descriptor) == 0
        }
        let failure = complete ? nil : Self.failure("cannot save the paired browsers to \(file)")
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, file) == 0 else {
            let failure = Self.failure("cannot save the paired browsers to \(file)")
            unlink(temporary)
            throw failure
        }
    }

    private static func failure(_ what: String) -> StoreError {
        StoreError(description: "\(what): \(String(cString: strerror(errno)))")
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// A name safe to print in a terminal and a page: printable, at most 60 characters.
    private static func cleanName(_ name: String) -> String {
        let printable = String(name.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        return printable.isEmpty ? "a browser" : String(printable.prefix(60))
    }
}
