import Foundation
import UnleashedKit
import UnleashedProtocol

extension JSONValue {
    static func optional(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func int(_ value: Int) -> JSONValue { .integer(Int64(value)) }

    /// Compact UTF-8 JSON with sorted keys, so that the same value always reads the same.
    var data: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of strings, numbers and containers cannot fail.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }
}

extension WireEnumeration {
    /// The value's name, or its description for a value this version does not know.
    var apiName: String { name ?? description }
}

extension Duration {
    /// Seconds as a JSON number.
    var apiSeconds: JSONValue {
        let (seconds, attoseconds) = components
        return .number(Double(seconds) + Double(attoseconds) / 1e18)
    }
}

extension CameraStatus {
    /// Every field of the snapshot; the connection both as its phase, for programs, and in words.
    var json: JSONValue {
        .object([
            "connection": .string(connection.phase.rawValue),
            "connectionDetail": .string(connection.description),
            "moduleBattery": .optional(moduleBattery),
            "cameraBattery": .optional(cameraBattery),
            "storage": .optional(storage?.apiName),
            "shotsRemaining": .optional(shotsRemaining),
            "cameraPower": .string(cameraPower.apiName),
            "exposureMode": .optional(exposureMode?.apiName),
            "meteredEV": .optional(meteredEV?.text),
            "busy": .bool(busy),
            "shotCounter": .int(shotCounter),
        ])
    }
}

extension CameraEvent {
    /// The SSE `event:` name and the `data:` fields of the event.
    var api: (name: String, fields: [String: JSONValue]) {
        switch self {
        case .connection(let state):
            ("connection", ["connection": .string(state.phase.rawValue), "connectionDetail": .string(state.description)])
        case .shotCompleted(let counter, let cameraTime):
            ("shotCompleted", ["counter": .int(counter), "cameraTime": cameraTime.map { .int(Int(clamping: $0)) } ?? .null])
        case .settingChanged(let value):
            ("settingChanged", ["setting": .string(value.setting.userName), "value": .string(value.text)])
        case .battery(let module, let camera):
            ("battery", ["moduleBattery": .int(module), "cameraBattery": .optional(camera)])
        case .storage(let state, let shotsRemaining):
            ("storage", ["storage": .string(state.apiName), "shotsRemaining": .optional(shotsRemaining)])
        case .cameraPower(let power):
            ("cameraPower", ["cameraPower": .string(power.apiName)])
        case .busy(let busy):
            ("busy", ["busy": .bool(busy)])
        case .meteredEV(let stops):
            ("meteredEV", ["meteredEV": .string(stops.text)])
        case .bulbDeadlineFired(let duration):
            ("bulbDeadlineFired", ["seconds": duration.apiSeconds])
        case .error(let status, let message):
            ("error", ["status": .string(status.apiName), "message": .optional(message)])
        case .missedEvents(let count):
            ("missedEvents", ["count": .int(count)])
        case .fileSaved(let file):
            ("fileSaved", [
                "path": .string(file.path), "bytes": .int(file.bytes), "cameraPath": .string(file.cameraPath),
                "frame": .optional(file.frame), "shotCounter": .int(file.shotCounter),
            ])
        case .fileNotSaved(let cameraPath, let reason):
            ("fileNotSaved", ["cameraPath": .string(cameraPath), "reason": .string(reason)])
        }
    }

    /// The event as one Server-Sent Events message: its name, then its fields and the camera's
    /// name as one JSON line.
    func serverSentEvent(camera: String) -> String {
        var (name, fields) = api
        fields["camera"] = .string(camera)
        return "event: \(name)\ndata: \(String(decoding: JSONValue.object(fields).data, as: UTF8.self))\n\n"
    }
}
