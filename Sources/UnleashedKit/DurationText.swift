/// Why a text is not a duration.
public enum DurationTextError: Error, Hashable, Sendable {
    /// Not written like a duration: empty, a sign, a fraction, an unknown, repeated or
    /// misplaced unit.
    case malformed
    /// Written like one, but too long to count in milliseconds (more than twelve digits before
    /// a unit, or some 292 million years in all).
    case tooLong
}

/// Reads a duration as people write it on a command line or in a fault plan: whole numbers with
/// units, largest first: `250ms`, `30s`, `1m30s`, `2h`, `1h2m3s`. A bare `0` is zero.
///
/// Throws ``DurationTextError/malformed`` for anything else (empty text, signs, fractions,
/// unknown or repeated units, units out of order), and ``DurationTextError/tooLong`` for
/// values too large for a `Duration` of milliseconds in an `Int64`.
public func readDuration(_ text: String) throws(DurationTextError) -> Duration {
    if text == "0" { return .zero }
    let units: [(String, Int64)] = [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)]
    var milliseconds: Int64 = 0
    var overflow = false
    var rest = Substring(text)
    var nextUnit = 0
    guard !rest.isEmpty else { throw .malformed }
    while !rest.isEmpty {
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { throw .malformed }
        rest = rest.dropFirst(digits.count)
        let unitText = rest.prefix { $0.isASCII && $0.isLetter }
        rest = rest.dropFirst(unitText.count)
        guard let index = units.firstIndex(where: { $0.0 == unitText }), index >= nextUnit else { throw .malformed }
        nextUnit = index + 1
        guard digits.count <= 12, let number = Int64(digits) else {
            overflow = true
            continue
        }
        let (product, productOverflow) = number.multipliedReportingOverflow(by: units[index].1)
        let (sum, sumOverflow) = milliseconds.addingReportingOverflow(product)
        overflow = overflow || productOverflow || sumOverflow
        milliseconds = sum
    }
    if overflow { throw .tooLong }
    return .milliseconds(milliseconds)
}

/// ``readDuration(_:)``, or nil for a text that is not a duration.
public func parseDuration(_ text: String) -> Duration? {
    try? readDuration(text)
}

extension Duration {
    /// The duration as ``parseDuration(_:)`` reads it back: `1m30s`, `250ms`, `2h`.
    public var compactText: String {
        var milliseconds = wholeMilliseconds
        guard milliseconds > 0 else { return "0s" }
        var text = ""
        for (unit, size) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1000), ("ms", 1)] where milliseconds >= size {
            text += "\(milliseconds / size)\(unit)"
            milliseconds %= size
        }
        return text
    }
}
