import ArgumentParser
import CommandCore
import UnleashedApp

struct AdaptersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "adapters",
                                                    abstract: "List the Bluetooth adapters BlueZ knows, and whether they are powered.")
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        try await options.report { modules throws(ModuleCommandError) in try await modules.adapters() }
    }
}

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "Look for Unleashed modules in range and list them as they are found.",
                                                    discussion: """
        Scans for Bluetooth LE devices that advertise the Unleashed service. Each module is listed once, with its address, \
        name, signal strength, camera connector and state. With --json, one JSON object per line as each module is found.
        """)
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @Option(help: ArgumentHelp("How long to scan.", valueName: "duration")) var timeout = "10s"

    func run() async throws {
        let duration = try options.duration(timeout, for: "--timeout")
        let found = try await options.onModules { modules throws(ModuleCommandError) in
            try await modules.scan(for: duration) { module in options.emit(module.sightingJSON) { module.sightingLine } }
        }
        if found == 0 && !options.json {
            Output.line("No modules found in \(duration.shortDescription).")
        }
    }
}

/// Options for answering the module's pairing questions.
struct PairingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The passkey the module shows, if it asks for one.", valueName: "nnnnnn")) var passkey: UInt32?
    @Flag(help: "Confirm the passkey without asking (for scripts; check it first).") var yes = false
}

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pair", abstract: "Pair with a module (once; BlueZ keeps the bond).", discussion: """
        The module must have its pairing window open. If it asks to confirm or enter a passkey, the question is asked on the \
        terminal, or answered by --yes or --passkey.
        """)
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var pairing: PairingOptions
    @Argument(help: ArgumentHelp("The module's address or name, as `unleashed scan` lists it.", valueName: "address")) var address: String

    func run() async throws {
        try await options.report { modules throws(ModuleCommandError) in try await modules.pair(address, answers: options.pairingAnswers(pairing)) }
    }
}

struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect", abstract: "Connect to a module, check it, show it and its camera, and remember it as the default.",
        discussion: """
            Without an address: the remembered module, else the only module in range. Pairs first if needed. Later commands use \
            the remembered module unless --module names another; each connects, acts and disconnects. While a daemon runs, \
            `connect ADDRESS` (or a name from its configuration) asks the daemon to connect the module and keep it connected, \
            and `disconnect` asks it to let go.
            """)
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var pairing: PairingOptions
    @Argument(help: ArgumentHelp("The module's address or name.", valueName: "address")) var address: String?

    func run() async throws {
        try await options.report { modules throws(ModuleCommandError) in
            let connected = try await modules.connect(address, answers: options.pairingAnswers(pairing))
            if let failure = connected.rememberFailure { Output.noteRaw("warning: \(failure)\n") }
            return connected
        }
    }
}

/// The module's address, else the remembered one (`disconnect`, `forget`).
private let addressOrRemembered = ArgumentHelp("The module's address (default: the remembered one).", valueName: "address")

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disconnect",
                                                    abstract: "Make BlueZ drop the link to the module (for example one left by a crashed program).")
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @Argument(help: addressOrRemembered) var address: String?

    func run() async throws {
        try await options.report { modules throws(ModuleCommandError) in try await modules.disconnect(address) }
    }
}

struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "forget",
                                                    abstract: "Unpair a module and remove it from BlueZ; it is no longer the default.")
    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @Argument(help: addressOrRemembered) var address: String?

    func run() async throws {
        try await options.report { modules throws(ModuleCommandError) in try await modules.forget(address) }
    }
}
