/// Words for messages: a count with its noun in the right number, and the article a phrase is
/// read with, so that no message says "1 frames" or "a ISO value".
public enum English {
    /// `1 frame`, `3 frames`; `plural` for a noun that does not just take an s.
    public static func counting(_ count: some BinaryInteger, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }

    /// `an ISO value`, `a shutter speed value`, `an 8ms exposure`, `a 1/250 exposure`, `an f/8
    /// aperture`: `phrase` after the indefinite article it is read with.
    public static func withArticle(_ phrase: String) -> String {
        (startsWithVowelSound(phrase) ? "an " : "a ") + phrase
    }

    /// Whether `phrase` is read starting with a vowel sound: numbers as they are said (eight,
    /// eleven, eighteen, eighty, eight hundred, eleven thousand), abbreviations and single
    /// letters letter by letter (ISO, SD, f/8), words by their first letter, with the common
    /// exceptions (a unit, a one-off, an hour).
    static func startsWithVowelSound(_ phrase: String) -> Bool {
        let word = phrase.drop { $0.isWhitespace }.prefix { !$0.isWhitespace }
        guard let first = word.first else { return false }
        if first.isASCII && first.isNumber {
            let digits = word.prefix { $0.isASCII && $0.isNumber }
            // The first group of three digits is the one said first: "11" of 11000.
            let lead = digits.prefix(digits.count % 3 == 0 ? 3 : digits.count % 3)
            return lead.first == "8" || lead == "11" || lead == "18"
        }
        guard first.isLetter else { return false }
        let letters = word.prefix { $0.isLetter }
        if letters.count == 1 || letters.allSatisfy(\.isUppercase) {
            return "aefhilmnorsx".contains(first.lowercased())
        }
        let lower = letters.lowercased()
        if ["uni", "use", "usu", "uti", "eu", "one", "once"].contains(where: { lower.hasPrefix($0) }) { return false }
        if ["hour", "honest", "honour", "honor"].contains(where: { lower.hasPrefix($0) }) { return true }
        return "aeiou".contains(lower.prefix(1))
    }
}
