import ArgumentParser
import CameraKit
import CommandCore
import Foundation
import UnleashedApp
import UnleashedKit

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the camera's events as they happen, until Ctrl-C.",
        discussion: """
            One line per event: link state, shots, setting changes, battery, card, camera power, \
            busy/ready, metered EV, bulb deadlines and errors. The first line is the status bar. \
            With --json, one JSON object per line ({"time", "event", ...}). --for ends the watch \
            after a time; Ctrl-C ends it with exit status 0.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @Option(name: .customLong("for"), help: ArgumentHelp("Stop after this long (e.g. 30s, 5m).", valueName: "duration"))
    var limit: String?

    func run() async throws {
        let options = options
        let limit = try limit.map { try options.duration($0, for: "--for") }
        try await options.withCamera(events: true) { camera throws(CameraError) in
            let events = await camera.events()
            let status = try await camera.status()
            Self.print(.connection(status.connection), options: options)
            if let ev = status.meteredEV { Self.print(.meteredEV(ev), options: options) }
            // The watch ends at --for, or when Ctrl-C cancels this task (iteration then stops).
            for await event in CameraWatch.events(events, for: limit) {
                Self.print(event, options: options)
            }
        }
    }

    static func print(_ event: CameraEvent, options: GlobalOptions) {
        let (name, members) = CameraWatch.document(event)
        let now = Date()
        var json = members
        json["time"] = .string(Output.timestamp(UInt64(now.timeIntervalSince1970 * 1000)))
        json["event"] = .string(name)
        options.emit(.object(json)) {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss.SSS"
            return Output.style.paint(formatter.string(from: now), .dim) + "  " + text(event)
        }
    }

    /// What a person reads for an event.
    static func text(_ event: CameraEvent) -> String {
        switch event {
        case .connection(let state): Output.style.paint("link \(state)", state == .ready ? .green : .yellow)
        case .shotCompleted(let counter, _): "shot \(counter) taken"
        case .settingChanged(let value): "\(value.setting.userName) is now \(value.text)"
        case .battery(let module, let camera): "battery: module \(module)%, camera \(Output.percent(camera))"
        case .storage(let state, let left): "card \(state)" + (left.map { ", \(English.counting($0, "shot")) left" } ?? "")
        case .cameraPower(let power): "camera \(power)"
        case .busy(let busy): busy ? "camera busy" : "camera ready"
        case .meteredEV(let ev): "metered EV \(Output.ev(ev))"
        case .bulbDeadlineFired(let length): "bulb closed by the module after \(RunReport.clock(length))"
        case .error(let status, let message):
            Output.style.paint("camera error: \(status)" + (message.map { " (\($0))" } ?? ""), .red)
        case .missedEvents(let count): "\(count) events lost on the way"
        case .fileSaved(let file): "saved \(file.path) (\(file.bytes) bytes)"
        case .fileNotSaved(let cameraPath, let reason): Output.style.paint("could not save \(cameraPath): \(reason)", .red)
        }
    }
}
