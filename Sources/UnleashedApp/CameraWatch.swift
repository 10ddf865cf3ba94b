public import CameraKit
public import JSON
import UnleashedKit

/// `watch`: a camera's events as a script reads them, for as long as asked.
public enum CameraWatch {
    /// `events` until `limit` has passed on `clock` (nil: until the caller's task is cancelled).
    public static func events(_ events: AsyncStream<CameraEvent>, for limit: Duration?,
                              clock: any Clock<Duration> = ContinuousClock()) -> AsyncStream<CameraEvent> {
        let (watched, sink) = AsyncStream.makeStream(of: CameraEvent.self)
        let forward = Task {
            for await event in events { sink.yield(event) }
            sink.finish()
        }
        let stopper = limit.map { limit in
            Task {
                try? await clock.sleep(for: limit)
                sink.finish()
            }
        }
        sink.onTermination = { _ in
            forward.cancel()
            stopper?.cancel()
        }
        return watched
    }

    /// An event's name and members in `watch --json` (which adds `time` and `event`).
    public static func document(_ event: CameraEvent) -> (name: String, members: [String: JSONValue]) {
        switch event {
        case .connection(let state):
            return ("connection", ["state": .string(state.phase.rawValue), "detail": .string(state.description)])
        case .shotCompleted(let counter, let cameraTime):
            var members: [String: JSONValue] = ["counter": .integer(Int64(counter))]
            members["cameraTime"] = cameraTime.map { .string(LocalTime.timestamp($0)) }
            return ("shotCompleted", members)
        case .settingChanged(let value):
            return ("settingChanged", ["setting": .string(value.setting.userName), "value": .string(value.text)])
        case .battery(let module, let camera):
            var members: [String: JSONValue] = ["module": .integer(Int64(module))]
            members["camera"] = camera.map { .integer(Int64($0)) }
            return ("battery", members)
        case .storage(let state, let left):
            var members: [String: JSONValue] = ["state": .string(state.description)]
            members["shotsRemaining"] = left.map { .integer(Int64($0)) }
            return ("storage", members)
        case .cameraPower(let power): return ("cameraPower", ["power": .string(power.description)])
        case .busy(let busy): return ("busy", ["busy": .bool(busy)])
        case .meteredEV(let ev): return ("meteredEV", ["ev": .string(ev.text)])
        case .bulbDeadlineFired(let length): return ("bulbDeadlineFired", ["exposedMs": .integer(length.wholeMilliseconds)])
        case .error(let status, let message):
            var members: [String: JSONValue] = ["status": .string(status.description)]
            members["message"] = message.map(JSONValue.string)
            return ("error", members)
        case .missedEvents(let count): return ("missedEvents", ["count": .integer(Int64(count))])
        case .fileSaved(let file): return ("fileSaved", file.json)
        case .fileNotSaved(let cameraPath, let reason): return ("fileNotSaved", ["cameraPath": .string(cameraPath), "reason": .string(reason)])
        }
    }
}
