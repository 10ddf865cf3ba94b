import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import JSON
import UnleashedApp
import UnleashedKit

struct VideoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "video",
        abstract: "Start, stop or record video; record clips on a schedule.",
        subcommands: [Start.self, Stop.self, Record.self, Clips.self]
    )

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Start recording; 'unleashed video stop' ends it.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        func run() async throws {
            try await options.onEachCamera(rig, { camera throws(CameraError) in try await camera.startVideo() },
                                           json: { _ in ["recording": .bool(true)] }, human: { _ in "Recording" })
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop recording and print the length of the clip.")

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        func run() async throws {
            try await options.onEachCamera(rig, { camera throws(CameraError) in try await camera.stopVideo() }, json: { length in
                ["recording": .bool(false), "clipMs": .integer(length.wholeMilliseconds)]
            }, human: { length in "Stopped; the clip is \(RunReport.clock(length)) long" })
        }
    }

    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record",
            abstract: "Record one clip of the given length, now or later, with a running clock.",
            discussion: """
                DURATION is written like 30s, 1m30s or 2h. The clip is timed on the host's \
                monotonic clock and journalled as a one-slot run (see 'unleashed runs'). If the \
                camera does not answer the stop, it is retried every 0.5 s for up to 10 s after the \
                planned end (the safety stop); a clip that still could not be stopped is recorded \
                as failed, saying so. Ctrl-C stops the recording early (exit status 130), SIGTERM too \
                (143); the clip is kept and recorded with its real length. SIGUSR1 takes a still \
                picture only while waiting for --start-in or --start-at: one asked for during the clip \
                is not taken, as no slot follows it.
                """
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @OptionGroup var start: StartOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        @Argument(help: ArgumentHelp("How long to record.", valueName: "duration"))
        var duration: String

        func run() async throws {
            let clock = await options.commandClock()
            let planned = try options.planned { () throws(PlanRefusal) in try start.request.recording(duration, now: clock.now) }
            try await RunExecution.begin(planned.plan, delay: planned.delay, detach: start.detach, options: options, clock: clock,
                                         rig: rig.isRig ? rig : nil)
        }
    }

    struct Clips: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clips",
            abstract: "Record a clip of LENGTH every INTERVAL: a video time-lapse.",
            discussion: """
                Clip n starts at t0 + (n - 1) x INTERVAL on the host's monotonic clock, like the \
                slots of 'unleashed timelapse', and is stopped LENGTH later; INTERVAL must leave room \
                for LENGTH plus --gap. Stop after --frames clips, after --duration, or --until a \
                local time. Each clip is journalled (see 'unleashed runs'); an interrupted run \
                continues with 'unleashed timelapse --resume ID'. The stop is retried for up to 10 s \
                after a clip's planned end (the safety stop).

                Signals: SIGUSR1 takes an extra still picture once the clip being recorded has been \
                stopped, before the next clip (none after the last), journalled as part 2 of that \
                clip's slot; SIGUSR2 stops after the current clip; Ctrl-C and SIGTERM stop the \
                recording at once and end the run.
                """
        )

        @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

        @Argument(help: ArgumentHelp("How long each clip is, e.g. 5s.", valueName: "length"))
        var length: String

        @Option(help: ArgumentHelp("Time from one clip's start to the next one's, e.g. 1m.", valueName: "interval"))
        var every: String

        @OptionGroup var schedule: ScheduleOptions

        @OptionGroup(title: "Rig") var rig: RigOptions

        func run() async throws {
            let request = schedule.request
            let clock = await options.commandClock()
            let planned = try options.planned { () throws(PlanRefusal) in try request.clips(length, every: every, now: clock.now) }
            try await RunExecution.begin(planned.plan, delay: planned.delay, detach: schedule.start.detach, options: options,
                                         clock: clock, rig: rig.isRig ? rig : nil)
        }
    }
}

extension GlobalOptions {
    /// Runs `command` on the camera, or on every camera of the rig at once, and prints what it
    /// gave; `check` then judges a single camera's value. A `clock` (label, total) runs on the
    /// terminal meanwhile.
    func onEachCamera<Value: Sendable>(_ rig: RigOptions, clock: (String, Duration)? = nil,
                                       _ command: @escaping @Sendable (any Camera) async throws(CameraError) -> Value,
                                       json: @escaping @Sendable (Value) -> JSONValue, human: @escaping @Sendable (Value) -> String,
                                       check: @escaping @Sendable (Value) throws(CameraError) -> Void = { _ in }) async throws {
        let options = self
        guard rig.isRig else {
            return try await withCamera { camera throws(CameraError) in
                let shown = clock.map { LiveClock($0.0, total: $0.1, enabled: !options.json) }
                let value: Value
                do {
                    defer { shown?.stop() }
                    value = try await command(camera)
                }
                options.emit(json(value)) { human(value) }
                try check(value)
            }
        }
        try await withRig(rig) { rig throws(ExitCode) in
            let shown = clock.map { LiveClock($0.0, total: $0.1, enabled: !options.json) }
            defer { shown?.stop() }
            try await options.fire(rig, command, json: json, human: human)
        }
    }
}
