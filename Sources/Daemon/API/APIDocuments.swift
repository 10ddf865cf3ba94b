import CameraKit
import Foundation
import UnleashedKit
import UnleashedProtocol

// The JSON forms of cameras' values live with the values (UnleashedKit's CameraJSON), so that
// the daemon and its clients read and write the same shapes; what is left here is the wire.

extension JSONValue {
    /// Compact UTF-8 JSON with sorted keys, so that the same value always reads the same.
    var data: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of strings, numbers and containers cannot fail.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }
}

extension Duration {
    /// Seconds as a JSON number.
    var apiSeconds: JSONValue {
        let (seconds, attoseconds) = components
        return .number(Double(seconds) + Double(attoseconds) / 1e18)
    }
}

extension CameraEvent {
    /// The event as one Server-Sent Events message: its name, then its fields and the camera's
    /// name as one JSON line.
    func serverSentEvent(camera: String) -> String {
        var fields = jsonFields
        fields["camera"] = .string(camera)
        return "event: \(jsonName)\ndata: \(String(decoding: JSONValue.object(fields).data, as: UTF8.self))\n\n"
    }
}
