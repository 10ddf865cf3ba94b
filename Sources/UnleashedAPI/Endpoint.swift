public import CameraKit
import Foundation
import UnleashedKit

/// The HTTP methods of the control API.
public enum APIMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
}

/// One operation of the control API: its method and its path, with the document it takes
/// (`Body`) and the one it answers (`Answer`). The server registers its routes from these and
/// the client sends its requests through them, so a path is spelt once, here.
public struct Endpoint<Body: JSONForm, Answer: JSONForm>: Sendable, Hashable {
    public let method: APIMethod
    /// The path as docs/api/openapi.yaml writes it: `/v1/cameras/{camera}`.
    public let template: String
    /// Whether the answer is a stream of Server-Sent Events, each an `Answer`.
    public let streams: Bool

    init(_ method: APIMethod, _ template: String, streams: Bool = false) {
        self.method = method
        self.template = template
        self.streams = streams
    }

    /// The method and template without the documents' types, for listings.
    public var route: Route { Route(method: method, template: template, streams: streams) }

    /// The path with `values` in place of the template's parameters, in order, each
    /// percent-encoded so that a camera named `a/b` stays one path segment.
    public func path(_ values: String...) -> String { path(values) }

    /// The path with `values` in place of the template's parameters, in order.
    public func path(_ values: [String]) -> String {
        var path = ""
        var remaining = values[...]
        for segment in template.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            path += "/"
            if segment.hasPrefix("{"), let value = remaining.popFirst() {
                path += value.addingPercentEncoding(withAllowedCharacters: pathSegmentCharacters) ?? value
            } else {
                path += segment
            }
        }
        return path
    }
}

/// What a path segment may hold as it is; a `/` in a name is encoded.
private let pathSegmentCharacters = CharacterSet.urlPathAllowed.subtracting(["/"])

/// An endpoint's method and path template, whatever its documents.
public struct Route: Sendable, Hashable {
    public let method: APIMethod
    public let template: String
    public let streams: Bool

    public init(method: APIMethod, template: String, streams: Bool = false) {
        self.method = method
        self.template = template
        self.streams = streams
    }

    /// The template in the router's form: `{camera}` becomes `:camera`.
    public var routerPath: String {
        template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : String(segment)
        }.joined(separator: "/")
    }
}

/// Every operation of the control API, version 1, with its documents.
public enum API {
    /// Where version 1 lives; every path below starts with it.
    public static let version = "/v1"

    public static let status = Endpoint<NoDocument, DaemonStatus>(.get, version + "/status")
    /// The daemon's version and the API's, answered without asking any camera.
    public static let daemonVersion = Endpoint<NoDocument, DaemonVersion>(.get, version + "/version")
    /// The daemon's wall clock: the host's, synchronised or not, and the correction a client's
    /// clock gave it.
    public static let clock = Endpoint<NoDocument, HostClockState>(.get, version + "/clock")
    /// A client's clock (the phone's), for a host whose own cannot be trusted: taken or kept
    /// out, and why; either way 200.
    public static let offerClock = Endpoint<ClockReading, ClockOffer>(.put, version + "/clock")
    public static let groups = Endpoint<NoDocument, GroupList>(.get, version + "/groups")
    /// Every host on the MQTT broker, for the web app's rig view.
    public static let fleet = Endpoint<NoDocument, FleetDocument>(.get, version + "/fleet")
    /// Every camera's events, each naming its camera.
    public static let events = Endpoint<NoDocument, CameraEventMessage>(.get, version + "/events", streams: true)

    public static let cameras = Endpoint<NoDocument, CameraList>(.get, version + "/cameras")
    /// Connects a module by address or configured name (201), or answers the one held (200).
    public static let connect = Endpoint<ConnectRequest, ConnectedCamera>(.post, version + "/cameras")
    public static let camera = Endpoint<NoDocument, CameraDocument>(.get, version + "/cameras/{camera}")
    public static let disconnect = Endpoint<NoDocument, ConnectedCamera>(.delete, version + "/cameras/{camera}")
    public static let settings = Endpoint<NoDocument, SettingList>(.get, version + "/cameras/{camera}/settings")
    public static let setting = Endpoint<NoDocument, SettingValue>(.get, version + "/cameras/{camera}/settings/{setting}")
    public static let setSetting = Endpoint<SettingChange, SettingValue>(.put, version + "/cameras/{camera}/settings/{setting}")
    public static let shoot = Endpoint<NoDocument, Shot>(.post, version + "/cameras/{camera}/shoot")
    /// A picture from the daemon's only camera, for a client that names none (`unleashed shoot`
    /// with one camera): one request instead of listing the cameras first.
    public static let shootOnlyCamera = Endpoint<NoDocument, Shot>(.post, version + "/shoot")
    public static let bulb = Endpoint<BulbRequest, BulbExposure>(.post, version + "/cameras/{camera}/bulb")
    public static let focus = Endpoint<FocusRequest, FocusResult>(.post, version + "/cameras/{camera}/focus")
    public static let release = Endpoint<NoDocument, NoDocument>(.post, version + "/cameras/{camera}/release")
    public static let startVideo = Endpoint<NoDocument, NoDocument>(.post, version + "/cameras/{camera}/video/start")
    public static let stopVideo = Endpoint<NoDocument, VideoClipLength>(.post, version + "/cameras/{camera}/video/stop")
    public static let setTime = Endpoint<WallTime, NoDocument>(.put, version + "/cameras/{camera}/time")
    public static let geotag = Endpoint<GeoPosition, NoDocument>(.put, version + "/cameras/{camera}/geotag")
    public static let cameraEvents = Endpoint<NoDocument, CameraEventMessage>(.get, version + "/cameras/{camera}/events", streams: true)
    /// The pictures the camera's backend saved on the daemon's disk (`[downloads]`), newest first.
    public static let pictures = Endpoint<NoDocument, PictureList>(.get, version + "/cameras/{camera}/pictures")
    /// A saved picture's thumbnail: a JPEG, not a JSON document.
    public static let thumbnail = Endpoint<NoDocument, NoDocument>(.get, version + "/cameras/{camera}/pictures/{name}/thumbnail")

    public static let startJob = Endpoint<JobSubmission, JobDocument>(.post, version + "/jobs")
    public static let jobs = Endpoint<NoDocument, JobList>(.get, version + "/jobs")
    public static let job = Endpoint<NoDocument, JobDocument>(.get, version + "/jobs/{id}")
    public static let stopJob = Endpoint<StopWhen, JobDocument>(.post, version + "/jobs/{id}/stop")
    public static let extraFrame = Endpoint<NoDocument, JobDocument>(.post, version + "/jobs/{id}/extra-frame")
    public static let pauseJob = Endpoint<NoDocument, JobDocument>(.post, version + "/jobs/{id}/pause")
    public static let continueJob = Endpoint<NoDocument, JobDocument>(.post, version + "/jobs/{id}/continue")
    /// Takes up an interrupted (`suspended`) job again on its original schedule, as the daemon
    /// does by itself when it holds the job's cameras: for one it left (``JobDocument/resumable``).
    public static let resumeJob = Endpoint<NoDocument, JobDocument>(.post, version + "/jobs/{id}/resume")
    /// A job's frames as CSV, the columns of `unleashed runs export --csv`: a download, not a
    /// JSON document.
    public static let jobFramesCSV = Endpoint<NoDocument, NoDocument>(.get, version + "/jobs/{id}/frames.csv")
    /// A job's frames as they are journalled, then its end; `?from=N` replays from frame N.
    public static let jobEvents = Endpoint<NoDocument, JobEvent>(.get, version + "/jobs/{id}/events", streams: true)

    /// Everything a dashboard shows on one stream: a snapshot of the cameras and jobs, then
    /// every camera event, job change and frame.
    public static let live = Endpoint<NoDocument, LiveEvent>(.get, version + "/live", streams: true)

    /// A new code that pairs one browser with the web app, with the role it will give.
    public static let makePairingCode = Endpoint<PairingCodeRequest, PairingCodeDocument>(.post, version + "/web/codes")
    public static let webClients = Endpoint<NoDocument, WebClientList>(.get, version + "/web/clients")
    /// Forgets a paired browser: its next request is refused and it must pair again.
    public static let revokeWebClient = Endpoint<NoDocument, NoDocument>(.delete, version + "/web/clients/{client}")
}

