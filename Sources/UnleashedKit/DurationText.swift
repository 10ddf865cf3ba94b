/// Reads a duration as people write it on a command line or in a fault plan: whole numbers with
/// units, largest first: `250ms`, `30s`, `1m30s`, `2h`, `1h2m3s`. A bare `0` is zero.
///
/// Returns nil for anything else (empty text, signs, fractions, unknown or repeated units,
/// units out of order, values too large for a `Duration` of milliseconds in an `Int64`).
public func parseDuration(_ text: String) -> Duration? {
    if text == "0" { return .zero }
    let units: [(String, Int64)] = [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)]
    var milliseconds: Int64 = 0
    var rest = Substring(text)
    var nextUnit = 0
    guard !rest.isEmpty else { return nil }
    while !rest.isEmpty {
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 12, let number = Int64(digits) else { return nil }
        rest = rest.dropFirst(digits.count)
        let unitText = rest.prefix { $0.isASCII && $0.isLetter }
        rest = rest.dropFirst(unitText.count)
        guard let index = units.firstIndex(where: { $0.0 == unitText }), index >= nextUnit else { return nil }
        nextUnit = index + 1
        let (product, overflow) = number.multipliedReportingOverflow(by: units[index].1)
        guard !overflow else { return nil }
        let (sum, sumOverflow) = milliseconds.addingReportingOverflow(product)
        guard !sumOverflow else { return nil }
        milliseconds = sum
    }
    return .milliseconds(milliseconds)
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
