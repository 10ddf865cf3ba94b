import CameraKit
import Foundation
import Hummingbird
import JSON
import NIOCore
import UnleashedAPI
import UnleashedKit
import UnleashedProtocol

/// The routes that drive one camera through the ``Camera`` protocol, so that a client (the CLI's
/// `RemoteCamera`) can do through the daemon whatever it does with the camera itself and get the
/// same values and the same errors back.
///
/// Every value travels in its JSON form from UnleashedKit (`CameraJSON`). A ``CameraError``
/// answers with a status by its kind and `{"error": {"code", "message", "camera": <the error>}}`,
/// from which a client rebuilds the very error. An operation runs while its client is there:
/// a client that goes away cancels it, as Ctrl-C would cancel it in the CLI, and the camera ends
/// it cleanly (a bulb exposure closes the shutter) before the request is done with.
struct CameraOperationRoutes: Sendable {
    let cameras: CameraRegistry
    /// The pictures the cameras' backends saved, for their thumbnails.
    let pictures: SavedPictures

    func add(to router: APIRoutes) {
        router.on(API.cameras, requires: .watch) { _, _ in
            CameraList(cameras: await cameras.all.map { CameraList.Entry(name: $0.name, source: $0.source, identity: $0.camera.identity) })
        }
        router.on(API.camera) { request, context in
            try context.authorize(.watch)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                let status = try await entry.statusReader.status()
                return .document(.ok, CameraDocument(name: entry.name, source: entry.source, identity: entry.camera.identity, status: status))
            }
        }
        router.on(API.settings) { request, context in
            try context.authorize(.watch)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                .document(.ok, SettingList(settings: try await entry.camera.settings()))
            }
        }
        router.on(API.setting) { request, context in
            try context.authorize(.watch)
            let setting = try Self.setting(context)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                .document(.ok, try await entry.camera.value(of: try setting.get()))
            }
        }
        router.on(API.setSetting) { request, context in
            try context.authorize(.operate)
            let setting = try Self.setting(context)
            return try await operate(request, context, body: SettingChange.self) { entry, change throws(CameraError) in
                let setting = try setting.get()
                let value = try Self.value(of: setting, change, camera: entry.camera)
                return .document(.ok, try await entry.camera.set(value))
            }
        }
        // The named camera's, or with no name in the path the only camera's.
        for endpoint in [API.shoot, API.shootOnlyCamera] {
            router.on(endpoint) { request, context in
                try context.authorize(.shoot)
                return try await operate(request, context, followingClient: true) { entry, _ throws(CameraError) in
                    .document(.ok, try await entry.camera.shoot())
                }
            }
        }
        router.on(API.bulb) { request, context in
            try context.authorize(.shoot)
            return try await operate(request, context, body: BulbRequest.self, followingClient: true) { entry, body throws(CameraError) in
                .document(.ok, try await entry.camera.bulb(.milliseconds(body.milliseconds)))
            }
        }
        router.on(API.focus) { request, context in
            try context.authorize(.shoot)
            return try await operate(request, context, body: FocusRequest.self, followingClient: true) { entry, body throws(CameraError) in
                .document(.ok, try await entry.camera.focus(hold: body.hold))
            }
        }
        router.on(API.release) { request, context in
            try context.authorize(.shoot)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                try await entry.camera.release()
                return Response(status: .noContent)
            }
        }
        router.on(API.startVideo) { request, context in
            try context.authorize(.operate)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                try await entry.camera.startVideo()
                return Response(status: .noContent)
            }
        }
        router.on(API.stopVideo) { request, context in
            try context.authorize(.operate)
            return try await operate(request, context) { entry, _ throws(CameraError) in
                .document(.ok, VideoClipLength(milliseconds: try await entry.camera.stopVideo().wholeMilliseconds))
            }
        }
        router.on(API.setTime) { request, context in
            try context.authorize(.operate)
            return try await operate(request, context, body: WallTime.self) { entry, time throws(CameraError) in
                try await entry.camera.setTime(time)
                return Response(status: .noContent)
            }
        }
        router.on(API.geotag) { request, context in
            try context.authorize(.operate)
            return try await operate(request, context, body: GeoPosition.self) { entry, position throws(CameraError) in
                try await entry.camera.geotag(position)
                return Response(status: .noContent)
            }
        }
        router.on(API.cameraEvents) { request, context in
            try context.authorize(.watch)
            let entry = try await lookUp(context)
            return await eventStream(request, from: [entry])
        }
        router.on(API.pictures) { _, context in
            try context.authorize(.watch)
            let entry = try await lookUp(context)
            let listed = await pictures.list(camera: entry.name).map { picture in
                PictureList.Picture(name: picture.name, bytes: picture.file.bytes, cameraPath: picture.file.cameraPath,
                                    frame: picture.file.frame, shotCounter: picture.file.shotCounter, saved: picture.saved)
            }
            return .document(.ok, PictureList(pictures: listed))
        }
        router.on(API.thumbnail) { request, context in
            try context.authorize(.watch)
            let entry = try await lookUp(context)
            let name = try context.requirePathParameter("name")
            let thumbnail: Data
            do throws(SavedPictures.ThumbnailError) {
                thumbnail = try await pictures.thumbnail(camera: entry.name, name: name)
            } catch {
                switch error {
                case .unknown: throw HTTPError(.notFound, message: error.description)
                case .notJPEG: throw HTTPError(.unsupportedMediaType, message: error.description)
                case .unreadable: throw HTTPError(.gone, message: error.description)
                }
            }
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            // A saved picture never changes under its name.
            headers[.cacheControl] = "private, max-age=86400, immutable"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: thumbnail)))
        }
    }

    /// The camera the path names, or the only one for a path that names none; with the
    /// registry's words, 404 when it holds none of that name, 503 when it holds no camera, 409
    /// when it holds several and the path names none (the request is right; the daemon's state
    /// does not let it choose).
    private func lookUp(_ context: ControlRequestContext) async throws -> CameraRegistry.Entry {
        let name = context.pathParameter("camera")
        do {
            return try await cameras.camera(named: name)
        } catch {
            let status: HTTPResponse.Status = switch error {
            case .none: .serviceUnavailable
            case .ambiguous: .conflict
            case .unknown: .notFound
            }
            throw HTTPError(status, message: error.description)
        }
    }

    /// Runs `operation` on the camera the path names, with the request's body read as `Body`
    /// (none is read for ``NoDocument``); a ``CameraError`` becomes its answer. A body that is
    /// missing or not JSON answers 400 with the daemon's words; one that is not a `Body` (a
    /// member of the wrong type, or one `Body` does not name, as the jobs API refuses one: a
    /// misspelt member is not silently ignored) answers the camera's `invalidArgument` naming
    /// the member. With `followingClient`, for the operations that take the camera's time (a
    /// shot, a bulb exposure, focusing), a client that goes away cancels the operation, which
    /// the camera then ends cleanly. That watch ends the connection with the request, so the
    /// quick operations, which keep connections alive, do without it.
    private func operate<Body: JSONForm>(
        _ request: Request, _ context: ControlRequestContext, body _: Body.Type, followingClient: Bool = false,
        _ operation: @escaping @Sendable (CameraRegistry.Entry, Body) async throws(CameraError) -> Response
    ) async throws -> Response {
        let entry = try await lookUp(context)
        let run = { @Sendable (requestBody: RequestBody) async throws -> Response in
            let body = try await Self.read(Body.self, from: requestBody)
            let response: Response
            do throws(CameraError) {
                response = try await operation(entry, try body.get())
            } catch {
                response = .cameraError(error, context: context)
            }
            // Whatever the API does to a camera may have changed its status, done or not.
            if request.method != .get { await entry.statusReader.changed() }
            return response
        }
        guard followingClient else { return try await run(request.body) }
        do {
            return try await request.body.consumeWithCancellationOnInboundClose(run)
        } catch is CancellationError {
            // The client went away; nobody reads this answer.
            return .cameraError(.cancelled, context: context)
        }
    }

    /// ``operate(_:_:body:followingClient:_:)`` for an operation that takes no body.
    private func operate(
        _ request: Request, _ context: ControlRequestContext, followingClient: Bool = false,
        _ operation: @escaping @Sendable (CameraRegistry.Entry, NoDocument) async throws(CameraError) -> Response
    ) async throws -> Response {
        try await operate(request, context, body: NoDocument.self, followingClient: followingClient, operation)
    }

    /// The body as `Body`, or the camera's `invalidArgument` naming what does not fit; throws
    /// the daemon's 400 for a body that is missing or not JSON.
    private static func read<Body: JSONForm>(_: Body.Type, from body: RequestBody) async throws -> Result<Body, CameraError> {
        if Body.self == NoDocument.self, let none = NoDocument() as? Body { return .success(none) }
        let document = try await APIRoutes.json(of: body)
        do throws(JSONShapeError) {
            return .success(try Body(requestBody: document))
        } catch {
            return .failure(.invalidArgument(error.description))
        }
    }

    /// The setting the path names, or the error that says it names none: thrown where a
    /// camera error can be answered.
    private static func setting(_ context: ControlRequestContext) throws -> Result<SettingID, CameraError> {
        let name = try context.requirePathParameter("setting")
        guard let setting = SettingID(userName: name) else { return .failure(.unknownSetting(name)) }
        return .success(setting)
    }

    /// `{"value": "1/125"}` as a person writes it, or `{"raw": 1048701}`, the wire number a
    /// program that read the value from this API has, which names it exactly.
    private static func value(of setting: SettingID, _ change: SettingChange, camera: any Camera) throws(CameraError) -> SettingValue {
        if let raw = change.raw {
            // A number the schema allows that the path's setting has no value for: unreadable (422).
            guard let value = SettingValue(setting: setting, wireValue: raw) else { throw .unreadableValue(setting, "raw \(raw)") }
            return value
        }
        guard let text = change.value else {
            throw .invalidArgument("the body needs \"value\" as a string, like {\"value\": \"1/125\"}")
        }
        return try camera.parse(text, for: setting)
    }
}

extension CameraError {
    /// The HTTP status for the error (``CameraError/httpStatusCode``), with its reason phrase.
    var httpStatus: HTTPResponse.Status {
        let code = httpStatusCode
        return Self.statuses.first { $0.code == code } ?? HTTPResponse.Status(code: code)
    }

    private static let statuses: [HTTPResponse.Status] = [
        .badRequest, .unprocessableContent, .conflict, .internalServerError, .serviceUnavailable,
        HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"),
    ]
}

extension Response {
    /// `{"error": {"code": "<stable code>", "message": "<in words>", "camera": <the error>}}`.
    static func cameraError(_ error: CameraError, context: ControlRequestContext) -> Response {
        if error.httpStatus.code >= 500 { context.logger.info("camera operation failed: \(error)") }
        return .document(error.httpStatus, ErrorDocument(error))
    }
}
