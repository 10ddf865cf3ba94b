public import Foundation

/// The rules of pairing a browser with a short code, as a plain value: codes issued with a role
/// and a lifetime, redeemed once, and guesses limited. Time and randomness come from the caller,
/// so tests walk the rules without waiting.
///
/// A code is six digits: short enough to type on a phone in the dark, and guarded by the
/// limits below rather than by its length. After ``maxFailures`` wrong codes in a row, pairing
/// is refused for ``lockout``: a guesser gets five tries a minute against codes that live ten
/// minutes, about one chance in 20,000 per code. The codes themselves stay valid, so that a
/// photographer who mistyped in the dark can try again a minute later without a new code.
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
        /// Too many wrong codes; pairing opens again at `until`.
        case locked(until: Date)

        public var description: String {
            switch self {
            case .malformed: "a pairing code is six digits"
            case .unknown(let triesLeft):
                "that code is not valid (it may have expired or been used); "
                    + "\(triesLeft) \(triesLeft == 1 ? "try" : "tries") left before pairing is locked for a minute"
            case .locked: "too many wrong codes: pairing is locked for a minute; then try the code again"
            }
        }
    }

    public static let lifetime: TimeInterval = 600
    public static let maxFailures = 5
    public static let lockout: TimeInterval = 60

    private(set) var codes: [Code] = []
    private var failures = 0
    private var lockedUntil: Date?

    public init() {}

    /// The codes that can still be used at `now`.
    public func valid(at now: Date) -> [Code] { codes.filter { $0.expires > now } }

    /// Issues a code for `role`, valid for ``lifetime`` from `now`; `random` gives a number in
    /// 0..<1,000,000. A code equal to one still valid is drawn again.
    @discardableResult
    public mutating func issue(role: DaemonConfiguration.AccessToken.Role, now: Date,
                               random: () -> Int) -> Code {
        codes.removeAll { $0.expires <= now }
        var digits: String
        repeat {
            digits = String(format: "%06d", random() % 1_000_000)
        } while codes.contains { $0.digits == digits }
        let code = Code(digits: digits, role: role, expires: now.addingTimeInterval(Self.lifetime))
        codes.append(code)
        return code
    }

    /// Takes `text` as a code at `now`: its role when it is a valid code, which is used up.
    /// Spaces and dashes people type between digit groups are ignored.
    public mutating func redeem(_ text: String, now: Date) throws(Refusal) -> DaemonConfiguration.AccessToken.Role {
        if let lockedUntil, now < lockedUntil { throw .locked(until: lockedUntil) }
        lockedUntil = nil
        let digits = text.filter { $0 != " " && $0 != "-" }
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw .malformed }
        codes.removeAll { $0.expires <= now }
        guard let index = codes.firstIndex(where: { $0.digits == digits }) else {
            failures += 1
            guard failures < Self.maxFailures else {
                failures = 0
                let until = now.addingTimeInterval(Self.lockout)
                lockedUntil = until
                throw .locked(until: until)
            }
            throw .unknown(triesLeft: Self.maxFailures - failures)
        }
        failures = 0
        return codes.remove(at: index).role
    }
}
