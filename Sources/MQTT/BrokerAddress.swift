/// A broker as a configuration writes it: `mqtt://HOST[:PORT]` (1883 by default) or
/// `mqtts://HOST[:PORT]` (TLS, 8883 by default); an IPv6 address in brackets.
public struct BrokerAddress: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Reads `text`; nil for anything else (a path, credentials in the URL, a port out of range).
    public init?(_ text: String) {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            (tls, rest) = (false, text.dropFirst("mqtt://".count))
        } else if text.hasPrefix("mqtts://") {
            (tls, rest) = (true, text.dropFirst("mqtts://".count))
        } else {
            return nil
        }
        // Credentials belong in their own keys, where a log does not show them.
        guard !rest.isEmpty, !rest.contains("@"), !rest.contains("/"), !rest.contains(where: \.isWhitespace) else { return nil }
        var host = rest
        var port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let written = Int(after.dropFirst()) else { return nil }
                port = written
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let written = Int(rest[rest.index(after: colon)...]) else { return nil }
            host = rest[..<colon]
            port = written
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port, tls: tls)
    }

    public var description: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
