import ArgumentParser
import CommandCore
import DaemonClient
import Foundation
import Intervalometer
import UnleashedAPI
import UnleashedApp
import UnleashedKit

extension GlobalOptions {
    /// The daemon, for commands that only it can answer.
    func requireDaemon(_ command: String) throws(ExitCode) -> DaemonClient {
        guard !direct, let client = daemonClient() else {
            throw fail(code: "noDaemon", "`unleashed \(command)` asks the daemon, and none answers on "
                + "\(DaemonClient.defaultSocketPath(environment: ProcessInfo.processInfo.environment)); start it with `unleashed daemon`",
                status: .unavailable)
        }
        return client
    }

    /// One request to the daemon; failures become messages and exit statuses.
    func ask<T>(_ request: () async throws(DaemonClientError) -> T) async throws(ExitCode) -> T {
        do {
            return try await request()
        } catch {
            throw fail(error)
        }
    }
}

struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List the daemon's jobs: the runs it is doing and the last ones it did.",
        discussion: """
            Each line shows the job id (the run's id in the journal), what it is, its camera, its \
            state (waiting, running, paused, finished, failed, suspended) and its frames so far. \
            `unleashed attach JOB` follows one, `unleashed stop JOB` ends it.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let client = try options.requireDaemon("jobs")
        let jobs = try await options.ask { () throws(DaemonClientError) in try await client.jobs() }
        options.emit(JobList(jobs: jobs).json) {
            jobs.isEmpty ? "No jobs." : jobs.map(RunReport.line).joined(separator: "\n")
        }
    }
}

struct AttachCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attach",
        abstract: "Follow one of the daemon's jobs: the live display, or JSON lines, until it ends.",
        discussion: """
            Shows the frames already taken, then each new one as the daemon journals it, and the \
            run's outcome at the end, as `unleashed timelapse` does. Ctrl-C stops following and \
            leaves the job running; `unleashed stop JOB` ends it.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("The job's id, as `unleashed jobs` lists it.", valueName: "job"))
    var job: Int64

    func run() async throws {
        let client = try options.requireDaemon("attach")
        let document = try await options.ask { () throws(DaemonClientError) in try await client.job(job) }
        let run = JobRun(document, client: client, owned: false)
        try await RunExecution.follow(run, plan: document.plan, startDelay: .zero, options: options, clock: await CommandClock.of(client),
                                      interruptible: true)
    }
}

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "End one of the daemon's jobs: now (a bulb or clip is ended first), or after the current frame.",
        discussion: "The job's frames stay in the journal; its outcome is 'stopped on request'."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Argument(help: ArgumentHelp("The job's id, as `unleashed jobs` lists it.", valueName: "job"))
    var job: Int64

    @Flag(name: .customLong("after-frame"), help: "Let the current frame finish, then stop.")
    var afterFrame = false

    func run() async throws {
        let client = try options.requireDaemon("stop")
        let when: StopWhen = afterFrame ? .afterFrame : .now
        let answer = try await options.ask { () throws(DaemonClientError) in try await client.stopJob(job, when: when) }
        options.emit(answer.json) { RunReport.stopped(answer, when: when) }
    }
}
