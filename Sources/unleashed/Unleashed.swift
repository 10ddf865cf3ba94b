import ArgumentParser

@main
struct Unleashed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unleashed",
        abstract: "Remote-control a camera through an Unleashed Bluetooth module.",
        discussion: """
            Without hardware, add --demo (or set UNLEASHED_DEMO=1) to use the built-in simulator: a \
            simulated module and camera that speak the same protocol over an in-memory link. The \
            simulated camera keeps its settings and shot count between runs in \
            ~/.local/state/unleashed/demo-camera.json (or $UNLEASHED_DEMO_STATE).

            Connecting to a real module over Bluetooth is not available in this version yet.

            Exit status:
              0   success
              64  bad command line, setting name or value
              65  the camera refused the value or the request
              69  no module, or the link to it failed
              70  internal error
              75  the camera is busy; try again
            """,
        subcommands: [StatusCommand.self, SettingsCommand.self, ShootCommand.self]
    )

    @OptionGroup var options: GlobalOptions
}
