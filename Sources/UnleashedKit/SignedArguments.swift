/// Negative numbers on a command line: `-33.8` reads as an option (a cluster of short flags), so
/// a value or an argument that starts with a minus has to be written so that it does not.
public enum SignedArguments {
    /// `-33.8`, `-2/3`, `-33.9,151.2`, `-.5`: a minus followed by a digit or a point and a digit.
    public static func isNegativeNumber(_ argument: String) -> Bool {
        var rest = Substring(argument)
        guard rest.first == "-" else { return false }
        rest = rest.dropFirst()
        if rest.first == "." { rest = rest.dropFirst() }
        return rest.first.map { $0.isASCII && $0.isNumber } ?? false
    }

    /// How to write the first negative number among `arguments` (a command line without the
    /// program's name) so that it is read as a value: joined to its option by `=`
    /// (`--frames=-1`) when it follows `optionMissingValue`, the option the parser found without
    /// its value; else after `--`, which ends the options (`geotag -- -33.8 151.2`). Nil when none
    /// of them is a negative number read as an option.
    public static func hint(for arguments: [String], program: String, optionMissingValue: String? = nil) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { return nil }
            guard isNegativeNumber(argument) else { continue }
            if index > 0, let option = optionMissingValue, arguments[index - 1] == option {
                return "a value that starts with '-' reads as an option; join it to its option with '=': \(option)=\(argument)"
            }
            let after = arguments[index...]
            var advice = "an argument that starts with '-' reads as an option; put -- before it, after every option"
            if !after.contains(where: { $0.hasPrefix("-") && !isNegativeNumber($0) }) {
                advice += ": " + ([program] + arguments[..<index] + ["--"] + after).joined(separator: " ")
            }
            return advice
        }
        return nil
    }
}
