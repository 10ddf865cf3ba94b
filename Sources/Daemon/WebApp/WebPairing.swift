public import Foundation
public import NIOCore

/// The rules of pairing a browser with a short code, as a plain value: codes issued with a role
/// and a lifetime, redeemed once, and guesses limited. Time and randomness come from the caller,
/// so tests walk the rules without waiting.
///
/// A code is six digits: short enough to type on a phone in the dark, and guarded by the
/// limits below rather than by its length.
///
/// - After ``maxFailures`` wrong codes in a row from one client (an IPv4 address, an IPv6
///   address's /64), that client is refused for ``lockout``; others are not, so that a guesser
///   cannot keep the owner's valid code refused.
/// - After ``maxWrongPerIssue`` wrong codes from everyone together since the last code was
///   made, every code is void: a guesser with many addresses gets at most 50 guesses against
///   a million codes, one chance in 20,000, and the owner makes a new code at the daemon.
///
/// The codes themselves stay valid through a client's lockout, so that a photographer who
/// mistyped in the dark can try again a minute later without a new code.
public struct WebPairing: Sendable, Equatable {
    /// A code shown to the person at the daemon, to type into a browser.
    public struct Code: Sendable, Equatable {
        /// Six digits.
        public let digits: String
        public let role: DaemonConfiguration.AccessToken.Role
        public let expires: Date
    }

    /// Why a code was not accepted.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not six digits.
        case malformed
        /// No such code (or it expired, or it was used); `triesLeft` before pairing is locked.
        case unknown(triesLeft: Int)
        /// Too many wrong codes from this client; it may try again at `until`.
        case locked(until: Date)
        /// Too many wrong codes from everyone: every code is void until a new one is made.
        case voided

        public var description: String {
            switch self {
            case .malformed: "a pairing code is six digits"
            case .unknown(let triesLeft):
                "that code is not valid (it may have expired or been used); "
                    + "\(triesLeft) \(triesLeft == 1 ? "try" : "tries") left before pairing is locked for a minute"
            case .locked: "too many wrong codes: pairing is locked for a minute; then try the code again"
            case .voided: "too many wrong codes were tried: every pairing code is void; make a new one at the daemon (unleashed web code)"
            }
        }
    }

    public static let lifetime: TimeInterval = 600
    public static let maxFailures = 5
    public static let lockout: TimeInterval = 60
    public static let maxWrongPerIssue = 50
    /// The clients remembered at most: the oldest are forgotten beyond it.
    static let clientsKept = 4096

    private(set) var codes: [Code] = []
    /// Wrong codes in a row by client, and until when a client is locked.
    private var guesses: [String: Guesses] = [:]
    /// Wrong codes from every client since the last code was made.
    private var wrongSinceIssue = 0

    private struct Guesses: Sendable, Equatable {
        var failures = 0
        var lockedUntil: Date?
        var last: Date
    }

    public init() {}

    /// The codes that can still be used at `now`.
    public func valid(at now: Date) -> [Code] { codes.filter { $0.expires > now } }

    /// Issues a code for `role`, valid for ``lifetime`` from `now`; `random` gives a number in
    /// 0..<1,000,000. A code equal to one still valid is drawn again.
    @discardableResult
    public mutating func issue(role: DaemonConfiguration.AccessToken.Role, now: Date,
                               random: () -> Int) -> Code {
        codes.removeAll { $0.expires <= now }
        wrongSinceIssue = 0
        var digits: String
        repeat {
            digits = String(format: "%06d", random() % 1_000_000)
        } while codes.contains { $0.digits == digits }
        let code = Code(digits: digits, role: role, expires: now.addingTimeInterval(Self.lifetime))
        codes.append(code)
        return code
    }

    /// Takes `text` as a code typed by `client` at `now`: its role when it is a valid code,
    /// which is used up. Spaces and dashes people type between digit groups are ignored.
    public mutating func redeem(_ text: String, from client: String = "", now: Date) throws(Refusal) -> DaemonConfiguration.AccessToken.Role {
        forgetStale(now: now)
        if let until = guesses[client]?.lockedUntil, now < until { throw .locked(until: until) }
        let digits = text.filter { $0 != " " && $0 != "-" }
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw .malformed }
        codes.removeAll { $0.expires <= now }
        guard let index = codes.firstIndex(where: { $0.digits == digits }) else {
            wrongSinceIssue += 1
            if wrongSinceIssue >= Self.maxWrongPerIssue {
                codes.removeAll()
                throw .voided
            }
            var record = guesses[client] ?? Guesses(last: now)
            record.failures += 1
            record.last = now
            record.lockedUntil = nil
            if record.failures >= Self.maxFailures {
                record.failures = 0
                record.lockedUntil = now.addingTimeInterval(Self.lockout)
            }
            guesses[client] = record
            if let until = record.lockedUntil { throw .locked(until: until) }
            throw .unknown(triesLeft: Self.maxFailures - record.failures)
        }
        guesses[client] = nil
        return codes.remove(at: index).role
    }

    /// Forgets clients whose lockout has passed and who guessed nothing for as long, and the
    /// oldest beyond ``clientsKept``: the memory a flood of addresses takes stays bounded.
    private mutating func forgetStale(now: Date) {
        guesses = guesses.filter { _, record in
            (record.lockedUntil.map { now < $0 } ?? false) || now.timeIntervalSince(record.last) < Self.lockout
        }
        if guesses.count > Self.clientsKept {
            let oldest = guesses.sorted { $0.value.last < $1.value.last }.prefix(guesses.count - Self.clientsKept)
            for (client, _) in oldest { guesses[client] = nil }
        }
    }

    /// The client a peer's address counts as: an IPv4 address, or an IPv6 address's /64 (one
    /// host's share of a network, which it can change within at will); a Unix socket peer is
    /// `local`.
    public static func clientKey(_ address: SocketAddress?) -> String {
        switch address {
        case .v4?:
            return address?.ipAddress ?? "local"
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            // An IPv4 peer of a dual-stack listener (::ffff:a.b.c.d) is its IPv4 address.
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return bytes.suffix(4).map(String.init).joined(separator: ".")
            }
            let prefix = Array(bytes.prefix(8))
            return stride(from: 0, to: 8, by: 2).map { String(format: "%02x%02x", prefix[$0], prefix[$0 + 1]) }.joined(separator: ":") + "::/64"
        default:
            return "local"
        }
    }
}
