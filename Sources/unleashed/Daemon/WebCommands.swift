import ArgumentParser
import DaemonClient
import Foundation
import UnleashedAPI

struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Pair phones with the daemon's web app, list the paired browsers, revoke one.",
        discussion: """
            The daemon serves the web app when started with --web HOST:PORT (or web.listen in its \
            configuration). A browser pairs once by entering a six-digit code the daemon shows; the \
            code gives it a role, operator or viewer, as a token in a cookie. The daemon prints an \
            operator code at start and a new one when it is used; `unleashed web code --role viewer` \
            makes a code for someone who should only watch. Codes expire after 10 minutes.
            """,
        subcommands: [WebCodeCommand.self, WebClientsCommand.self, WebRevokeCommand.self]
    )
}

struct WebCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Make a code that pairs one browser with the web app.",
        discussion: "Prints the code, the address with the code in it, and when it expires. Needs the operator role."
    )

    enum Role: String, ExpressibleByArgument, CaseIterable {
        case `operator`, viewer
    }

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Option(help: "The role the paired browser gets: operator (shoot, run, change settings) or viewer (watch only).")
    var role: Role = .operator

    func run() async throws {
        let client = try options.requireDaemon("web code")
        let code = try await options.ask { () throws(DaemonClientError) in try await client.makePairingCode(role: role.rawValue) }
        options.emit(code.json) {
            let grouped = code.code.prefix(3) + " " + code.code.dropFirst(3)
            return """
                Pairing code: \(grouped) (\(code.role)), valid until \(code.expires.formatted(date: .omitted, time: .shortened))
                \(code.url.map { "Open \($0) on the phone, or enter the code there." } ?? "")
                """
        }
    }
}

struct WebClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "List the browsers paired with the web app: id, role, name and when each paired."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let client = try options.requireDaemon("web clients")
        let clients = try await options.ask { () throws(DaemonClientError) in try await client.webClients() }
        options.emit(WebClientList(clients: clients).json) {
            clients.isEmpty ? "No browser is paired." : clients.map { entry in
                "\(entry.id)  \(entry.role.padding(toLength: 8, withPad: " ", startingAt: 0))  \(entry.name), paired \(entry.paired.formatted(date: .abbreviated, time: .shortened))"
            }.joined(separator: "\n")
        }
    }
}

struct WebRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Forget a paired browser: its next request is refused and it must pair again."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("The browser's id, as `unleashed web clients` lists it.", valueName: "id"))
    var id: String

    func run() async throws {
        let client = try options.requireDaemon("web revoke")
        try await options.ask { () throws(DaemonClientError) in try await client.revokeWebClient(id) }
        options.emit(["revoked": .string(id)]) { "Revoked \(id)." }
    }
}
