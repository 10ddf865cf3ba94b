import ArgumentParser
import UnleashedKit
import UnleashedProtocol

struct VideoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "video",
        abstract: "Start, stop or record video.",
        subcommands: [Start.self, Stop.self, Record.self]
    )

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start recording; 'unleashed video stop' ends it.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let options = options
            try await options.withCamera { camera throws(CameraError) in
                try await camera.startVideo()
                options.emit(["recording": .bool(true)]) { "Recording" }
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop recording and print the length of the clip.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let options = options
            try await options.withCamera { camera throws(CameraError) in
                let length = try await camera.stopVideo()
                options.emit(["recording": .bool(false), "clipMs": .integer(length.wholeMilliseconds)]) {
                    "Stopped; the clip is \(Output.clock(length)) long"
                }
            }
        }
    }

    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record a clip of the given length, with a running clock.",
            discussion: """
                DURATION is written like 30s, 1m30s or 2h. Ctrl-C stops the recording early; the \
                clip is kept and the exit status is 130.
                """
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: ArgumentHelp("How long to record.", valueName: "duration"))
        var duration: String

        func run() async throws {
            let options = options
            let length = try options.duration(duration, for: "video record")
            guard length > .zero else {
                throw options.fail(code: "invalidDuration", "video record: the duration must be longer than 0", status: .usage)
            }
            try await options.withCamera { camera throws(CameraError) in
                try await camera.startVideo()
                let clock = LiveClock("Recording", total: length, enabled: !options.json)
                // Sleeping on the host clock is fine here: the clip length comes from the module.
                let interrupted = (try? await Task.sleep(for: length)) == nil
                clock.stop()
                let clip = try await camera.stopVideo()
                options.emit(["clipMs": .integer(clip.wholeMilliseconds), "stoppedEarly": .bool(interrupted)]) {
                    "Recorded a clip of \(Output.clock(clip))" + (interrupted ? " (stopped early)" : "")
                }
                if interrupted { throw .cancelled }
            }
        }
    }
}
