/// Whether a command runs on the built-in simulator because the environment asks for it.
public enum DemoMode {
    /// `UNLEASHED_DEMO` set to 1, true or yes (any case); anything else, or nothing, is not.
    public static func requested(by environment: [String: String]) -> Bool {
        ["1", "true", "yes"].contains(environment["UNLEASHED_DEMO"]?.lowercased() ?? "")
    }
}
