/// Why a text is not a duration.
public enum DurationTextError: Error, Hashable, Sendable {
    /// Not written like a duration: empty, a sign, a number without its unit, an unknown,
    /// repeated or misplaced unit.
    case malformed
    /// Written like one, but too long to count in milliseconds (more than twelve digits before
    /// a unit, or some 292 million years in all).
    case tooLong
}

/// Reads a duration as people write it, on a command line, in the web app, a configuration or
/// a program file: numbers with units, largest first, each unit once: `250ms`, `30s`, `1m30s`,
/// `2h`, `1h2m3s`. A number may have a decimal fraction, with a point or a comma (`0.5s`,
/// `1,5s`, `1.5h`); the total is rounded to the nearest millisecond, half up. Spaces may stand
/// around numbers and units (`1h 30m`, `10 s`), and units may be capitals. A bare `0` is zero;
/// any other number needs its unit (`90` could be seconds or minutes).
///
/// The web app reads durations by the same rules (`parseDuration` in app.js); the cases in
/// Tests/Fixtures/text-grammar.json hold both to them.
///
/// Throws ``DurationTextError/malformed`` for anything else (empty text, signs, a number without
/// its unit, unknown or repeated units, units out of order), and ``DurationTextError/tooLong``
/// for values too large for a `Duration` of milliseconds in an `Int64`.
public func readDuration(_ text: String) throws(DurationTextError) -> Duration {
    var rest = Substring(text.lowercased()).drop { $0 == " " }
    while rest.last == " " { rest = rest.dropLast() }
    func skipSpaces() { rest = rest.drop { $0 == " " } }
    if rest == "0" { return .zero }
    let units: [(String, Int64)] = [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)]
    var milliseconds: Int64 = 0
    var overflow = false
    var nextUnit = 0
    guard !rest.isEmpty else { throw .malformed }
    while !rest.isEmpty {
        let whole = rest.prefix { $0.isASCII && $0.isNumber }
        guard !whole.isEmpty else { throw .malformed }
        rest = rest.dropFirst(whole.count)
        var fraction = Substring()
        if let separator = rest.first, separator == "." || separator == "," {
            fraction = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
            guard (1...9).contains(fraction.count) else { throw .malformed }
            rest = rest.dropFirst(1 + fraction.count)
        }
        skipSpaces()
        let unitText = rest.prefix { $0.isASCII && $0.isLetter }
        rest = rest.dropFirst(unitText.count)
        skipSpaces()
        guard let index = units.firstIndex(where: { $0.0 == unitText }), index >= nextUnit else { throw .malformed }
        nextUnit = index + 1
        let size = units[index].1
        guard whole.count <= 12, let number = Int64(whole) else {
            overflow = true
            continue
        }
        // The fraction's part, exactly: digits × unit ÷ 10^digits, rounded half up.
        let scale = (0..<fraction.count).reduce(Int64(1)) { value, _ in value * 10 }
        let part = ((Int64(fraction) ?? 0) * size * 2 + scale) / (2 * scale)
        let (product, productOverflow) = number.multipliedReportingOverflow(by: size)
        let (sum, sumOverflow) = milliseconds.addingReportingOverflow(product)
        let (total, totalOverflow) = sum.addingReportingOverflow(part)
        overflow = overflow || productOverflow || sumOverflow || totalOverflow
        milliseconds = total
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
