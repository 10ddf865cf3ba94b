public import Foundation

/// The programs this package builds, as the tests run them: next to the test bundle (the
/// build's products directory), unless `UNLEASHED_BIN` or `UNLEASHED_SIM_BIN` names another
/// build of `unleashed` or `unleashed-sim` (a release build, an installed package).
public enum Built {
    /// The build's products directory, where the test bundle itself is.
    public static let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    public static let unleashed = program("unleashed", overriddenBy: "UNLEASHED_BIN")
    public static let sim = program("unleashed-sim", overriddenBy: "UNLEASHED_SIM_BIN")
    /// The child-process probe of `ChildProcessesTests`.
    public static let childProbe = program("unleashed-child-probe")

    private static func program(_ name: String, overriddenBy variable: String? = nil) -> URL {
        if let variable, let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        return directory.appendingPathComponent(name)
    }
}
