import ArgumentParser
import CommandCore
import Foundation
import Intervalometer
import JSON
import UnleashedApp
import UnleashedKit

/// When a run starts and stops, and how it treats its slots: the options `timelapse` and
/// `video clips` share.
struct ScheduleOptions: ParsableArguments, Sendable {
    @Option(help: ArgumentHelp("Stop after this many slots.", valueName: "n"))
    var frames: Int?

    @Option(help: ArgumentHelp("Stop after this long: no slot is due at or after it, e.g. 2h.", valueName: "duration"))
    var duration: String?

    @Option(help: ArgumentHelp("Stop at this local time (HH:MM or HH:MM:SS; the next time it comes).", valueName: "time"))
    var until: String?

    @OptionGroup var start: StartOptions

    @Option(help: ArgumentHelp("What to do with slots missed while the camera was busy: skip, defer or burst.",
                               valueName: "policy"))
    var overrun: String = OverrunPolicy.skip.rawValue

    @Option(help: ArgumentHelp("Leave at least this long between one slot's work and the next command.", valueName: "duration"))
    var gap: String?

    @Option(help: ArgumentHelp("A program to run at init, start, each slot and stop.", valueName: "program"))
    var hook: String?

    @Option(name: .customLong("hook-timeout"),
            help: ArgumentHelp("Kill a hook call still running after this long (default 30s); the run goes on.", valueName: "duration"))
    var hookTimeout: String?

    /// The options as a request the library turns into a plan.
    var request: ScheduleRequest {
        ScheduleRequest(frames: frames, duration: duration, until: until, start: start.request, overrun: overrun, gap: gap, hook: hook,
                        hookTimeout: hookTimeout)
    }
}

/// When a run's first slot comes: after a delay or at a local time. Shared by every scheduled
/// command, `video record` included.
struct StartOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("start-in"), help: ArgumentHelp("Wait this long before the first slot.", valueName: "duration"))
    var startIn: String?

    @Option(name: .customLong("start-at"), help: ArgumentHelp("Start at this local time (HH:MM or HH:MM:SS).", valueName: "time"))
    var startAt: String?

    @Flag(help: "Hand the run to the daemon, print its job id and return; `unleashed attach JOB` follows it.")
    var detach = false

    var request: StartRequest { StartRequest(startIn: startIn, startAt: startAt) }
}

extension GlobalOptions {
    /// The plan `make` reads from the command line, its notices told, or its refusal as a usage
    /// error.
    func planned(_ make: () throws(PlanRefusal) -> PlannedRun) throws(ExitCode) -> PlannedRun {
        do throws(PlanRefusal) {
            let planned = try make()
            tell(planned.notices)
            return planned
        } catch {
            throw fail(error)
        }
    }

    /// A refused plan: a usage error (status 64) with the refusal's code.
    func fail(_ refusal: PlanRefusal) -> ExitCode {
        fail(code: refusal.code, refusal.message, status: .usage)
    }

    /// Tells what the schedule does that one might not expect: a time of day that falls on a
    /// later day, or comes twice that night. On standard error always, a terminal or not; with --json also as a
    /// `{"note": {...}}` line on standard output, ahead of the run's records.
    func tell(_ notes: [PlanNotice]) {
        for note in notes {
            Output.note("note: \(note.message)")
            if json { Output.line(Output.json(["note": note.json])) }
        }
    }

    /// A usage error (status 64) with `message`.
    func usage(_ message: String) -> ExitCode {
        fail(code: "usage", message, status: .usage)
    }
}
