import ArgumentParser
import CommandCore
import DaemonClient
import Foundation
import JSON
import UnleashedAPI
import UnleashedApp
import UnleashedKit

struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Fire or watch the daemons of several hosts at once, through their MQTT broker.",
        discussion: """
            Every host's daemon with [mqtt] in its configuration takes fleet commands from the \
            broker (docs/mqtt.md). This command reads the broker's address and login from the same \
            configuration (--config FILE, or the files the daemon reads), so it runs on any host of \
            the rig, or on a laptop with that file.
            """,
        subcommands: [FleetShootCommand.self, FleetTimelapseCommand.self, FleetStopCommand.self, FleetStatusCommand.self]
    )
}

/// The options every fleet command shares: where the configuration that names the broker is.
struct FleetConfigurationOptions: ParsableArguments {
    @Flag(help: "Read the system service's configuration only.")
    var system = false

    @Option(help: ArgumentHelp("Read the broker's settings from this configuration file.", valueName: "file"))
    var config: String?

    /// Runs `work` on the broker the configuration names, prints the summary it returns (`text`
    /// for people, the answers themselves with --json), and exits with what the hosts say.
    func report(_ options: GlobalOptions, as text: (FleetShotSummary) -> String,
                _ work: (FleetOperations) async throws(CameraFailure) -> FleetShotSummary) async throws {
        let (system, config) = (system, config)
        let summary = try await options.reporting { () async throws(CameraFailure) in
            try await work(try FleetOperations(system: system, file: config, environment: ProcessInfo.processInfo.environment))
        }
        options.emit(summary.json) { text(summary) }
        if summary.status != 0 { throw ExitCode(summary.status) }
    }
}

struct FleetShootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shoot",
        abstract: "Fire every host's cameras at one UTC instant, each on its own clock.",
        discussion: """
            Each host fires at the time on its own clock (through the module's own scheduled fire \
            where it has one), and answers with its clock's estimated error and each camera's shot. \
            A host refuses a time it cannot meet (less than 50 ms ahead when the command reaches it, \
            or more than an hour) and says so. Hosts fire together only as closely as their clocks \
            agree: keep them synchronised (chrony, PTP).

            Exit status: 0 when every host that answered fired every camera; 65 when one refused or \
            a camera failed; 69 when no host answered.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var where_: FleetConfigurationOptions

    @Option(help: ArgumentHelp("When: +DURATION from now (+2s, +500ms), or a UTC time like 2026-11-27T21:00:00Z.", valueName: "time"))
    var at = "+2s"

    @Option(help: ArgumentHelp("Only the cameras of this [[groups]] name on each host; hosts without it say so.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("How long after the time to wait for the hosts' answers.", valueName: "duration"))
    var wait = "3s"

    func run() async throws {
        guard let time = FleetTime.read(at, now: Date()) else {
            throw options.fail(code: "usage", "--at '\(at)' is neither +DURATION (+2s) nor a UTC time like 2026-11-27T21:00:00Z", status: .usage)
        }
        guard let waiting = parseDuration(wait) else {
            throw options.fail(code: "usage", "--wait '\(wait)' is not a duration like 3s", status: .usage)
        }
        try await where_.report(options, as: \.text) { fleet throws(CameraFailure) in try await fleet.shoot(at: time, group: group, wait: waiting) }
    }
}

struct FleetTimelapseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timelapse",
        abstract: "Start one time-lapse on every host: the same start and interval, each on its own engine.",
        discussion: """
            Each host runs its cameras (a group's with --group) from the start time on its own \
            clock, journals the frames locally (`unleashed runs` on that host) and publishes them \
            on the broker; a host with several cameras fires them together, as a rig. The answer \
            names each host's job; `unleashed fleet status` shows the frames as they come.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var where_: FleetConfigurationOptions

    @Option(help: ArgumentHelp("Start-to-start time between slots, at least 100ms.", valueName: "duration"))
    var interval: String

    @Option(help: ArgumentHelp("Stop after this many slots; without it, the runs go on until stopped.", valueName: "n"))
    var frames: Int?

    @Option(help: ArgumentHelp("When slot 1 is due: +DURATION from now, or a UTC time.", valueName: "time"))
    var start = "+5s"

    @Option(help: ArgumentHelp("Only the cameras of this [[groups]] name on each host.", valueName: "name"))
    var group: String?

    func run() async throws {
        guard let every = parseDuration(interval), every >= .milliseconds(100) else {
            throw options.fail(code: "usage", "--interval '\(interval)' is not a duration of 100ms or more", status: .usage)
        }
        if let frames, frames < 1 { throw options.fail(code: "usage", "--frames must be 1 or more", status: .usage) }
        guard let time = FleetTime.read(start, now: Date()) else {
            throw options.fail(code: "usage", "--start '\(start)' is neither +DURATION (+5s) nor a UTC time like 2026-11-27T21:00:00Z", status: .usage)
        }
        try await where_.report(options, as: \.timelapseText) { fleet throws(CameraFailure) in
            try await fleet.timelapse(start: time, interval: every, frames: frames, group: group)
        }
    }
}

struct FleetStopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the time-lapses of every host now (with --group, those on the group's cameras).",
        discussion: """
            Each host stops every time-lapse job it runs (a bulb or clip under way is ended and its \
            frame recorded) and answers with the jobs it stopped and the slot each reached. The \
            frames stay in each host's journal (`unleashed runs`). A host with nothing running \
            says so.

            Exit status: 0 when every host that answered stopped all it ran; 65 when one refused \
            or a job would not stop; 69 when no host answered.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var where_: FleetConfigurationOptions

    @Option(help: ArgumentHelp("Only the time-lapses on this [[groups]] name's cameras; hosts without it say so.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("How long to wait for the hosts' answers.", valueName: "duration"))
    var wait = "3s"

    func run() async throws {
        guard let waiting = parseDuration(wait) else {
            throw options.fail(code: "usage", "--wait '\(wait)' is not a duration like 3s", status: .usage)
        }
        try await where_.report(options, as: \.stopText) { fleet throws(CameraFailure) in try await fleet.stop(group: group, wait: waiting) }
    }
}

struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every host on the broker: online or not, its clock, its cameras' state and runs.",
        discussion: "What the broker keeps of each host (its retained messages), read in under a second."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions
    @OptionGroup var where_: FleetConfigurationOptions

    func run() async throws {
        let (system, config) = (where_.system, where_.config)
        let hosts = try await options.reporting { () async throws(CameraFailure) in
            try await FleetOperations(system: system, file: config, environment: ProcessInfo.processInfo.environment).status()
        }
        options.emit(hosts) { FleetShotSummary.statusText(hosts) }
    }
}
