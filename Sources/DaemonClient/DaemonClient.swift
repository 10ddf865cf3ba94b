import AsyncHTTPClient
public import CameraKit
public import Foundation
import Glibc
import JSON
import NIOCore
import NIOHTTP1
public import UnleashedAPI
import UnleashedKit

/// A connection to a running daemon's control API on its Unix socket: each operation of
/// ``API`` as a method that takes and returns its documents (TypedRequests.swift), Server-Sent
/// Event streams as typed events, and the daemon's errors read back into values.
///
/// It holds no connection of its own: requests go through the process's shared HTTP client, so
/// a command that makes one request and exits leaves no threads behind.
public struct DaemonClient: Sendable {
    /// The daemon's control socket.
    public let socketPath: String
    /// Sent as a bearer token, for daemons that ask for one.
    public let token: String?

    /// How long a request may take unless its caller says otherwise: longer than any camera
    /// operation's own time limit, so that the camera's error, not this one, is what a user sees.
    public static let defaultTimeout: Duration = .seconds(120)

    public init(socketPath: String, token: String? = nil) {
        self.socketPath = socketPath
        self.token = token
    }

    /// The client the commands use: the daemon at ``defaultSocketPath(environment:)`` with
    /// `$UNLEASHED_TOKEN`, or nil when no socket is there (no daemon runs).
    public static func commands(environment: [String: String]) -> DaemonClient? {
        let path = defaultSocketPath(environment: environment)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return DaemonClient(socketPath: path, token: environment["UNLEASHED_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Where the CLI looks for a daemon: `$UNLEASHED_SOCKET`, else the user's daemon's socket, else
    /// the system service's when only that one is there.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let named = environment["UNLEASHED_SOCKET"], !named.isEmpty { return named }
        let user = unleashedUserSocketPath(environment: environment)
        // A user's own daemon first; else the system service's, when one runs.
        if FileManager.default.fileExists(atPath: user) || !FileManager.default.fileExists(atPath: unleashedSystemSocketPath) {
            return user
        }
        return unleashedSystemSocketPath
    }

    /// Whether something listens on the socket: a connection made and closed at once, no
    /// request. False for a socket a daemon left behind when it did not stop cleanly, so that a
    /// caller can tell "no daemon" from a daemon that failed a request it was sent.
    public func isListening() -> Bool {
        (try? probe()) != nil
    }

    /// Whether a daemon answers on the socket within `timeout`: a quick ``API/status``. False
    /// at once when there is no socket or nobody listens on it, so the CLI can fall back to
    /// talking to the camera itself without a noticeable wait.
    public func isAnswering(timeout: Duration = .milliseconds(500)) async -> Bool {
        do {
            _ = try await send(API.status, timeout: timeout)
            return true
        } catch {
            return false
        }
    }

    /// Sends `endpoint` with the path's `parameters` in order and `body`, and reads its answer.
    /// An answer with an error status throws ``DaemonClientError/http(status:code:message:camera:)``;
    /// one that is not the endpoint's document throws ``DaemonClientError/badAnswer(_:)``.
    public func send<Body, Answer>(
        _ endpoint: Endpoint<Body, Answer>, _ parameters: String..., body: Body, query: String = "",
        timeout: Duration = DaemonClient.defaultTimeout
    ) async throws(DaemonClientError) -> Answer {
        try await send(endpoint, parameters, body: body is NoDocument ? nil : body.json, query: query, timeout: timeout)
    }

    /// Sends `endpoint`, which takes no body.
    public func send<Answer>(
        _ endpoint: Endpoint<NoDocument, Answer>, _ parameters: String..., query: String = "",
        timeout: Duration = DaemonClient.defaultTimeout
    ) async throws(DaemonClientError) -> Answer {
        try await send(endpoint, parameters, body: nil, query: query, timeout: timeout)
    }

    private func send<Body, Answer>(
        _ endpoint: Endpoint<Body, Answer>, _ parameters: [String], body: JSONValue?, query: String, timeout: Duration
    ) async throws(DaemonClientError) -> Answer {
        let path = endpoint.path(parameters) + query
        let document = try await request(endpoint.method.rawValue, path, body: body, timeout: timeout)
        do {
            return try Answer(json: document)
        } catch {
            throw .badAnswer("\(endpoint.method.rawValue) \(path): \(error)")
        }
    }

    /// The events of `endpoint` as they arrive, each read as its document (one this version
    /// cannot read is left out), until the daemon ends the stream or the consumer stops.
    public func events<Answer: ServerSentDocument>(
        _ endpoint: Endpoint<NoDocument, Answer>, _ parameters: String..., query: String = ""
    ) -> AsyncThrowingStream<Streamed<Answer>, any Error> {
        let raw = events(endpoint.path(parameters) + query)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await message in raw {
                        if message.isComment {
                            if message.data == "subscribed" { continuation.yield(.subscribed) }
                            continue
                        }
                        guard let data = try? JSONDecoder().decode(JSONValue.self, from: Data(message.data.utf8)),
                              let document = try? Answer(eventName: message.name, data: data) else { continue }
                        continuation.yield(.event(document))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Sends one request and returns its JSON answer (`.null` for an empty one, such as 204).
    func request(
        _ method: String, _ path: String, body: JSONValue? = nil, timeout: Duration = DaemonClient.defaultTimeout
    ) async throws(DaemonClientError) -> JSONValue {
        var headers = [("Accept", "application/json"), ("Connection", "close")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let exchange = SocketExchange(socketPath: socketPath, method: method, path: path, headers: headers,
                                      body: body.map(Self.encode))
        let answer = try await exchange.perform(timeout: timeout)
        let document: JSONValue
        if answer.body.isEmpty {
            document = .null
        } else {
            do {
                document = try JSONDecoder().decode(JSONValue.self, from: Data(answer.body))
            } catch {
                throw .badAnswer("\(method) \(path) answered \(answer.status) with something that is not JSON")
            }
        }
        guard (200..<300).contains(answer.status) else {
            throw DaemonClientError(status: answer.status, document: document)
        }
        return document
    }

    /// A request's body as the API reads it.
    private static func encode(_ body: JSONValue) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A tree of strings, numbers and containers always encodes.
        return Array((try? encoder.encode(body)) ?? Data("null".utf8))
    }

    /// The Server-Sent Events of `path`, as they arrive, until the daemon ends the stream or the
    /// consumer stops listening (which closes the connection, so the daemon lets go too).
    func events(_ path: String) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let prepared: HTTPClientRequest
        do {
            prepared = try eventsRequest(path)
            try probe()
        } catch {
            continuation.finish(throwing: error)
            return stream
        }
        let socketPath = socketPath
        let task = Task {
            do {
                let response = try await HTTPClient.shared.execute(prepared, deadline: .distantFuture)
                guard response.status.code == 200 else {
                    let bytes = try await response.body.collect(upTo: 1024 * 1024)
                    let document = (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes.readableBytesView))) ?? .null
                    throw DaemonClientError(status: Int(response.status.code), document: document)
                }
                var parser = ServerSentEventParser()
                for try await chunk in response.body {
                    for event in parser.feed(chunk.readableBytesView) { continuation.yield(event) }
                }
                continuation.finish()
            } catch let error as DaemonClientError {
                continuation.finish(throwing: error)
            } catch {
                if Task.isCancelled {
                    continuation.finish()
                } else {
                    continuation.finish(throwing: DaemonClientError.notReachable(socket: socketPath, reason: Self.describe(error)))
                }
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// What a connection to the socket finds, without a request: for `unleashed doctor`, which
    /// tells a user the daemon's socket keeps out from one that nobody listens on.
    public enum Reach: Sendable, Equatable {
        /// Something listens (a full backlog counts: a daemon is there, if busy).
        case listening
        /// No file at the path.
        case absent
        /// A socket file nobody listens on: a daemon that did not stop cleanly left it.
        case notListening
        /// The socket's permissions keep this user out.
        case denied
        case failed(String)
    }

    /// Connects once and closes at once; see ``Reach``.
    public func reach() -> Reach {
        // No look at the file first: in a folder this user may not enter (the system service's
        // /run/unleashed is 0750), it would seem absent, where connect(2) says EACCES.
        let connection = SocketExchange.Connection(path: socketPath)
        defer { connection.close() }
        do throws(DaemonClientError) {
            _ = try connection.open()
            return .listening
        } catch {
            switch connection.connectError {
            case EACCES, EPERM: return .denied
            case ECONNREFUSED: return .notListening
            case ENOENT, ENOTDIR: return .absent
            default: return .failed(error.description)
            }
        }
    }

    /// Fails at once when nobody listens on the socket. The HTTP client would keep retrying the
    /// connection until the request's deadline, minutes for a camera operation, where a
    /// refused connection on a local socket already says all there is to say.
    private func probe() throws(DaemonClientError) {
        let connection = SocketExchange.Connection(path: socketPath)
        defer { connection.close() }
        // A full backlog says a daemon is there, if busy.
        _ = try connection.open()
    }

    /// An event stream's request, for the shared HTTP client.
    private func eventsRequest(_ path: String) throws(DaemonClientError) -> HTTPClientRequest {
        guard let url = URL(httpURLWithSocketPath: socketPath, uri: path) else {
            throw .notReachable(socket: socketPath, reason: "the socket path cannot be put in a URL")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Accept", value: "text/event-stream")
        // A connection per stream: no request ever lands on a kept-alive connection that the
        // daemon has just closed.
        request.headers.add(name: "Connection", value: "close")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        return request
    }

    /// Connection failures in words: "connection refused", not a type name.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
            return "it did not answer in time"
        }
        if let error = error as? IOError { return error.description }
        return String(describing: error)
    }
}

/// Why a request to the daemon did not give an answer.
public enum DaemonClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing answered on the socket, or the connection broke before the answer was complete:
    /// no daemon runs, or it went away.
    case notReachable(socket: String, reason: String)
    /// The daemon answered with an error: its status, its stable code, its words and, for a
    /// camera operation, the camera's error itself.
    case http(status: Int, code: String, message: String, camera: CameraError?)
    /// The daemon answered something this client cannot read (a newer or broken daemon).
    case badAnswer(String)

    /// Reads the API's error document (``ErrorDocument``). An answer with no body is the
    /// daemon's refusal by its status alone. A body that is not an error document this client
    /// can read (a camera error of a newer daemon, say) is ``badAnswer(_:)``, never an error
    /// without a camera: a caller must not take it for a refusal made before any camera was asked.
    init(status: Int, document: JSONValue) {
        if document == .null {
            self = .http(status: status, code: String(status), message: "the daemon answered \(status)", camera: nil)
            return
        }
        do throws(JSONShapeError) {
            let error = try ErrorDocument(json: document)
            self = .http(status: status, code: error.code, message: error.message, camera: error.camera)
        } catch {
            self = .badAnswer("an error (\(status)) this client cannot read: \(error)")
        }
    }

    public var description: String {
        switch self {
        case .notReachable(let socket, let reason): "no daemon answers on \(socket): \(reason)"
        case .http(_, _, let message, let camera): camera?.description ?? message
        case .badAnswer(let why): "the daemon's answer cannot be read: \(why)"
        }
    }
}

/// What an event stream delivers: the daemon's word that it has subscribed (so nothing that
/// happens from then on is missed), then the events.
public enum Streamed<Document: Sendable>: Sendable {
    case subscribed
    case event(Document)
}

/// One message of a Server-Sent Events stream.
public struct ServerSentEvent: Hashable, Sendable {
    /// The `event:` name (`message` when the server named none); empty for a comment.
    public var name: String
    /// The `data:` lines, joined by newlines; a comment's text for a comment.
    public var data: String
    /// A `: text` line. The daemon sends `: subscribed` once its subscriptions are made, so a
    /// client knows from then on that no event is missed.
    public var isComment: Bool

    public init(name: String, data: String, isComment: Bool = false) {
        self.name = name
        self.data = data
        self.isComment = isComment
    }
}

/// Cuts a Server-Sent Events byte stream into messages, whatever the chunks' boundaries.
struct ServerSentEventParser {
    private var line: [UInt8] = []
    private var name = ""
    private var data: [String] = []

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            let text = String(decoding: line, as: UTF8.self)
            line.removeAll(keepingCapacity: true)
            if let event = take(text) { events.append(event) }
        }
        return events
    }

    private mutating func take(_ text: String) -> ServerSentEvent? {
        if text.isEmpty {
            defer { name = ""; data = [] }
            guard !data.isEmpty else { return nil }
            return ServerSentEvent(name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"))
        }
        if text.hasPrefix(":") {
            return ServerSentEvent(name: "", data: String(text.dropFirst()).trimmingCharacters(in: .whitespaces), isComment: true)
        }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = Substring(text)
            value = ""
        }
        switch field {
        case "event": name = String(value)
        case "data": data.append(String(value))
        default: break
        }
        return nil
    }
}

extension Duration {
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
