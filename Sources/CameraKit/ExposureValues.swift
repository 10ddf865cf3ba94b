/// An exposure quantity in exact 1/24 stops (PROTOCOL.md §6.1).
///
/// 24 is divisible by 2, 3, 4, 6 and 8, so the half-, third- and eighth-stop steps that cameras
/// use are all exact: no floating point, no rounding drift when steps are added up.
public struct ExposureStops: Hashable, Comparable, Sendable {
    /// The value in 1/24 stops.
    public var twentyFourths: Int32

    public init(twentyFourths: Int32) { self.twentyFourths = twentyFourths }

    /// `thirds` third-stops (`ExposureStops(thirds: 1)` is +1/3 EV).
    public init(thirds: Int32) { self.twentyFourths = thirds * 8 }

    public static let zero = ExposureStops(twentyFourths: 0)

    /// The value in stops, for display and arithmetic that tolerates rounding.
    public var stops: Double { Double(twentyFourths) / 24 }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.twentyFourths < rhs.twentyFourths }

    /// The canonical text: `0`, `+1/3`, `-2/3`, `+1`, `+1 1/3`, `-2 1/2` (PROTOCOL.md §11.1).
    public var text: String {
        guard twentyFourths != 0 else { return "0" }
        let sign = twentyFourths < 0 ? "-" : "+"
        let magnitude = twentyFourths.magnitude
        let whole = magnitude / 24
        let remainder = magnitude % 24
        var parts: [String] = []
        if whole > 0 { parts.append(String(whole)) }
        if remainder > 0 {
            let divisor = gcd(remainder, 24)
            parts.append("\(remainder / divisor)/\(24 / divisor)")
        }
        return sign + parts.joined(separator: " ")
    }

    /// Reads the canonical text, plain fractions (`2/3`, `-4/3`) and camera-style decimals, where
    /// `.3` and `.7` mean thirds as cameras display them (`+0.3`, `-1.7`, `+1.5`).
    public init?(text: String) {
        var rest = Substring(text.trimmingWhitespace())
        var negative = false
        if let first = rest.first, first == "+" || first == "-" {
            negative = first == "-"
            rest = rest.dropFirst()
        }
        guard let magnitude = Self.parseMagnitude(rest) else { return nil }
        twentyFourths = negative ? -magnitude : magnitude
    }

    private static func parseMagnitude(_ text: Substring) -> Int32? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        switch words.count {
        case 1:
            return parseFraction(words[0]) ?? parseWhole(words[0]).map { $0 * 24 } ?? parseCameraDecimal(words[0])
        case 2:
            guard let whole = parseWhole(words[0]), let fraction = parseFraction(words[1]), fraction < 24 else { return nil }
            return whole * 24 + fraction
        default:
            return nil
        }
    }

    private static func parseWhole(_ text: Substring) -> Int32? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), let value = Int32(text), value <= 1000 else { return nil }
        return value
    }

    /// `n/d` with `d` dividing 24.
    private static func parseFraction(_ text: Substring) -> Int32? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let numerator = parseWhole(parts[0]), let denominator = parseWhole(parts[1]),
              denominator > 0, 24 % denominator == 0 else { return nil }
        return numerator * (24 / denominator)
    }

    private static func parseCameraDecimal(_ text: Substring) -> Int32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let whole = parseWhole(parts[0]) else { return nil }
        let fraction: Int32
        switch parts[1] {
        case "0": fraction = 0
        case "3", "33": fraction = 8
        case "5": fraction = 12
        case "7", "67", "66": fraction = 16
        default: return nil
        }
        return whole * 24 + fraction
    }
}

/// An ISO sensitivity, or automatic ISO.
public struct ISOSpeed: Hashable, Sendable {
    /// The nominal ISO number; 0 for auto.
    public let rawValue: UInt32

    static let range: ClosedRange<UInt32> = 1...3_276_800

    /// Automatic ISO.
    public static let auto = ISOSpeed(validated: 0)

    /// A fixed ISO, 1...3 276 800.
    public init?(_ value: UInt32) {
        guard Self.range.contains(value) else { return nil }
        rawValue = value
    }

    private init(validated: UInt32) { rawValue = validated }

    public var isAuto: Bool { rawValue == 0 }

    /// `auto` or the number.
    public var text: String { isAuto ? "auto" : String(rawValue) }

    /// Reads `auto`, `800` or `ISO 800`.
    public init?(text: String) {
        let lowered = text.trimmingWhitespace().lowercased()
        if lowered == "auto" { self = .auto; return }
        let digits = lowered.hasPrefix("iso") ? String(lowered.dropFirst(3)).trimmingWhitespace() : lowered
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let value = UInt32(digits) else { return nil }
        self.init(value)
    }
}

/// A nominal shutter speed as a camera shows it, kept as an exact fraction of a second, or bulb.
///
/// Nominal values are what users see and type (1/125, not the exact 2^-7), so the fraction is the
/// identity; ``stops`` gives the exposure arithmetic.
public struct ShutterSpeed: Hashable, Sendable {
    /// Numerator of the exposure time in seconds; 0 for bulb.
    public let numerator: UInt16
    /// Denominator of the exposure time in seconds; 0 for bulb.
    public let denominator: UInt16

    /// The shutter stays open for as long as the button is held (or the module's deadline).
    public static let bulb = ShutterSpeed(uncheckedNumerator: 0, denominator: 0)

    /// `numerator/denominator` seconds, reduced to lowest terms; nil if either is 0.
    public init?(seconds numerator: Int, per denominator: Int = 1) {
        guard numerator > 0, denominator > 0 else { return nil }
        let divisor = gcd(numerator, denominator)
        guard let top = UInt16(exactly: numerator / divisor), let bottom = UInt16(exactly: denominator / divisor) else { return nil }
        self.init(uncheckedNumerator: top, denominator: bottom)
    }

    private init(uncheckedNumerator: UInt16, denominator: UInt16) {
        self.numerator = uncheckedNumerator
        self.denominator = denominator
    }

    public var isBulb: Bool { numerator == 0 }

    /// The exposure time in seconds (0 for bulb).
    public var seconds: Double { isBulb ? 0 : Double(numerator) / Double(denominator) }

    /// Canonical text (PROTOCOL.md §11.1): `bulb`, `1/125`, `30s`, `0.3s`, `2.5s`, else `n/d`.
    public var text: String {
        if isBulb { return "bulb" }
        if numerator == 1 && denominator != 1 { return "1/\(denominator)" }
        if denominator == 1 { return "\(numerator)s" }
        let tenths = UInt32(numerator) * 10
        if tenths % UInt32(denominator) == 0 {
            let value = tenths / UInt32(denominator)
            return "\(value / 10).\(value % 10)s"
        }
        return "\(numerator)/\(denominator)"
    }

    /// Reads the canonical text and the forms cameras print: `1/125`, `30s`, `30"`, `30`, `0.3s`,
    /// `0"3`, `2.5`, `bulb`.
    public init?(text: String) {
        var value = text.trimmingWhitespace().lowercased()
        if value == "bulb" || value == "b" { self = .bulb; return }
        if value.contains("/") {
            let parts = value.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let top = Int(parts[0]), let bottom = Int(parts[1]) else { return nil }
            self.init(seconds: top, per: bottom)
            return
        }
        value = value.replacing("\"", with: ".")
        if value.hasSuffix(".") || value.hasSuffix("s") { value.removeLast() }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
              let whole = Int(parts[0]), whole <= 65535 else { return nil }
        if parts.count == 1 {
            self.init(seconds: whole)
        } else {
            guard parts[1].count <= 3, let fraction = Int(parts[1]) else { return nil }
            var scale = 1
            for _ in 0..<parts[1].count { scale *= 10 }
            self.init(seconds: whole * scale + fraction, per: scale)
        }
    }
}

/// A nominal f-number, kept exact in tenths (f/7.1 is 71).
public struct Aperture: Hashable, Comparable, Sendable {
    /// The f-number times ten, 5...10 000.
    public let tenths: UInt16

    static let range: ClosedRange<UInt32> = 5...10_000

    /// The f-number `tenths / 10`; nil outside f/0.5...f/1000.
    public init?(tenths: UInt32) {
        guard Self.range.contains(tenths) else { return nil }
        self.tenths = UInt16(tenths)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.tenths < rhs.tenths }

    /// The f-number, for display and exposure arithmetic.
    public var fNumber: Double { Double(tenths) / 10 }

    /// `f/5.6`, `f/8`.
    public var text: String {
        tenths % 10 == 0 ? "f/\(tenths / 10)" : "f/\(tenths / 10).\(tenths % 10)"
    }

    /// Reads `f/5.6`, `F5.6`, `5.6` or `8`.
    public init?(text: String) {
        var value = Substring(text.trimmingWhitespace().lowercased())
        if value.hasPrefix("f/") { value = value.dropFirst(2) } else if value.hasPrefix("f") { value = value.dropFirst() }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
              parts.count == 1 || parts[1].count == 1, let whole = UInt32(parts[0]), whole <= 1000 else { return nil }
        let tenth = parts.count == 2 ? UInt32(parts[1])! : 0
        self.init(tenths: whole * 10 + tenth)
    }
}

func gcd<T: BinaryInteger>(_ a: T, _ b: T) -> T {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
