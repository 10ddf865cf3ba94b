import ArgumentParser

/// `unleashed-sim`: the project's simulated hardware, served to real clients over real
/// interfaces. Each kind of hardware is a subcommand.
@main
struct UnleashedSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unleashed-sim",
        abstract: "Serves simulated Unleashed modules to real clients, for tests and trying things out without hardware.",
        subcommands: [BlueZCommand.self, PTPIPCommand.self]
    )
}
