import ArgumentParser
import CameraKit
import UnleashedKit

struct FocusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "focus",
        abstract: "Press the shutter button half-way and wait for focus.",
        discussion: """
            Prints whether focus was acquired. With --hold the button stays half-pressed until \
            'unleashed release'. A camera that is asleep wakes up. Exit status 65 when the camera \
            could not focus.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Flag(help: "Keep the button half-pressed until 'unleashed release'.")
    var hold = false

    func run() async throws {
        let (options, hold) = (options, hold)
        try await options.withCamera { camera throws(CameraError) in
            let result = try await camera.focus(hold: hold)
            guard result != .failed else { throw .focusFailed }
            options.emit(["focus": .string(result.description), "held": .bool(hold)]) {
                result == .manualFocus
                    ? "The lens is in manual focus; nothing to do"
                    : "Focus acquired" + (hold ? "; holding the button half-pressed" : "")
            }
        }
    }
}

struct ReleaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Release every button held by 'focus --hold'."
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    func run() async throws {
        let options = options
        try await options.withCamera { camera throws(CameraError) in
            try await camera.release()
            options.emit(["released": .bool(true)]) { "Released" }
        }
    }
}
