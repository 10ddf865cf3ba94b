import CameraKit
import Foundation
import Hummingbird
import UnleashedAPI

// The documents themselves live in UnleashedAPI, shared with the clients; what is left here
// is how the server writes them.

extension Duration {
    /// Seconds as a JSON number.
    var apiSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension ServerSentDocument {
    /// The document as one Server-Sent Events message: its name, then its data as one JSON line.
    var serverSentEvent: String {
        "event: \(eventName)\ndata: \(String(decoding: data.data, as: UTF8.self))\n\n"
    }
}

extension Response {
    /// A document as a JSON answer.
    static func document(_ status: HTTPResponse.Status, _ document: some JSONForm) -> Response {
        .json(status, document.json)
    }
}
