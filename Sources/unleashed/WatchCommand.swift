import ArgumentParser
import CameraKit
import Foundation
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

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
        try await options.withCamera { camera throws(CameraError) in
            let events = await camera.events()
            let status = try await camera.status()
            Self.print(.connection(status.connection), options: options)
            if let ev = status.meteredEV { Self.print(.meteredEV(ev), options: options) }
            // The watch ends at --for, or when Ctrl-C cancels this task (iteration then stops).
            let (watched, sink) = AsyncStream.makeStream(of: CameraEvent.self)
            let forward = Task {
                for await event in events { sink.yield(event) }
                sink.finish()
            }
            let stopper = limit.map { limit in
                Task {
                    try? await Task.sleep(for: limit)
                    sink.finish()
                }
            }
            for await event in watched {
                Self.print(event, options: options)
            }
            forward.cancel()
            stopper?.cancel()
        }
    }

    static func print(_ event: CameraEvent, options: GlobalOptions) {
        let (name, members, text) = describe(event)
        let now = Date()
        var json = members
        json["time"] = .string(Output.timestamp(UInt64(now.timeIntervalSince1970 * 1000)))
        json["event"] = .string(name)
        options.emit(.object(json)) {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss.SSS"
            return Output.style.paint(formatter.string(from: now), .dim) + "  " + text
        }
    }

    static func describe(_ event: CameraEvent) -> (String, [String: JSONValue], String) {
        switch event {
        case .connection(let state):
            return ("connection", ["state": .string(state.phase.rawValue), "detail": .string(state.description)],
                    Output.style.paint("link \(state)", state == .ready ? .green : .yellow))
        case .shotCompleted(let counter, let cameraTime):
            var members: [String: JSONValue] = ["counter": .integer(Int64(counter))]
            members["cameraTime"] = cameraTime.map { .string(Output.timestamp($0)) }
            return ("shotCompleted", members, "shot \(counter) taken")
        case .settingChanged(let value):
            return ("settingChanged", ["setting": .string(value.setting.userName), "value": .string(value.text)],
                    "\(value.setting.userName) is now \(value.text)")
        case .battery(let module, let camera):
            var members: [String: JSONValue] = ["module": .integer(Int64(module))]
            members["camera"] = camera.map { .integer(Int64($0)) }
            return ("battery", members, "battery: module \(module)%, camera \(Output.percent(camera))")
        case .storage(let state, let left):
            var members: [String: JSONValue] = ["state": .string(state.description)]
            members["shotsRemaining"] = left.map { .integer(Int64($0)) }
            return ("storage", members, "card \(state)" + (left.map { ", \(English.counting($0, "shot")) left" } ?? ""))
        case .cameraPower(let power):
            return ("cameraPower", ["power": .string(power.description)], "camera \(power)")
        case .busy(let busy):
            return ("busy", ["busy": .bool(busy)], busy ? "camera busy" : "camera ready")
        case .meteredEV(let ev):
            return ("meteredEV", ["ev": .string(ev.text)], "metered EV \(Output.ev(ev))")
        case .bulbDeadlineFired(let length):
            return ("bulbDeadlineFired", ["exposedMs": .integer(length.wholeMilliseconds)],
                    "bulb closed by the module after \(Output.clock(length))")
        case .error(let status, let message):
            var members: [String: JSONValue] = ["status": .string(status.description)]
            members["message"] = message.map(JSONValue.string)
            return ("error", members, Output.style.paint("camera error: \(status)" + (message.map { " (\($0))" } ?? ""), .red))
        case .missedEvents(let count):
            return ("missedEvents", ["count": .integer(Int64(count))], "\(count) events lost on the way")
        case .fileSaved(let file):
            return ("fileSaved", file.json, "saved \(file.path) (\(file.bytes) bytes)")
        case .fileNotSaved(let cameraPath, let reason):
            return ("fileNotSaved", ["cameraPath": .string(cameraPath), "reason": .string(reason)],
                    Output.style.paint("could not save \(cameraPath): \(reason)", .red))
        }
    }
}
