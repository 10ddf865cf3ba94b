import Foundation
import Hummingbird
import Intervalometer
import ServiceLifecycle
import UnleashedAPI

/// The routes that submit, list, follow and stop jobs.
struct JobRoutes: Sendable {
    let jobs: JobManager
    let cameras: CameraRegistry

    func add(to router: APIRoutes) {
        router.on(API.startJob) { request, context -> Response in
            try context.authorize(.operate)
            let body = try await Self.body(of: request)
            let submitted: JobSubmission
            // A time of day in the plan is read on the daemon's wall clock, as the runs' `t0` is.
            do throws(JobRequestError) { submitted = try JobSubmission(body: body, now: jobs.wallClock.now) } catch {
                throw HTTPError(error.isUnprocessable ? .unprocessableContent : .badRequest, message: error.description)
            }
            let job = try await Self.answer { () async throws(JobError) in
                if let cameras = submitted.cameras {
                    return try await jobs.submit(rig: cameras, plan: submitted.plan, startDelay: submitted.startDelay)
                }
                return try await jobs.submit(camera: submitted.camera, plan: submitted.plan, startDelay: submitted.startDelay)
            }
            return .document(.created, job)
        }
        router.on(API.jobs, requires: .watch) { _, _ in
            JobList(jobs: try await Self.answer { () async throws(JobError) in try await jobs.jobs() })
        }
        router.on(API.job, requires: .watch) { _, context in
            let id = try Self.id(context)
            return try await Self.answer { () async throws(JobError) in try await jobs.job(id) }
        }
        router.on(API.stopJob) { request, context -> Response in
            try context.authorize(.operate)
            let id = try Self.id(context)
            let body = try await Self.body(of: request)
            let when: StopWhen
            do throws(JobRequestError) { when = try StopWhen(body: body) } catch { throw HTTPError(.badRequest, message: error.description) }
            let reason = "stopped by \(context.client.recognisedAs)"
            let job = try await Self.answer { () async throws(JobError) in
                try await jobs.stop(id, afterCurrentFrame: when == .afterFrame, reason: reason)
            }
            return .document(.ok, job)
        }
        router.on(API.extraFrame, requires: .shoot) { _, context in
            let id = try Self.id(context)
            return try await Self.answer { () async throws(JobError) in try await jobs.extraFrame(id) }
        }
        router.on(API.pauseJob, requires: .operate) { _, context in
            let id = try Self.id(context)
            return try await Self.answer { () async throws(JobError) in try await jobs.pause(id) }
        }
        router.on(API.continueJob, requires: .operate) { _, context in
            let id = try Self.id(context)
            return try await Self.answer { () async throws(JobError) in try await jobs.continueJob(id) }
        }
        router.on(API.resumeJob, requires: .operate) { _, context in
            let id = try Self.id(context)
            return try await Self.answer { () async throws(JobError) in try await jobs.resume(id) }
        }
        router.on(API.jobFramesCSV) { _, context in
            try context.authorize(.watch)
            let id = try Self.id(context)
            let first = try await Self.answer { () async throws(JobError) in try jobs.framePage(of: id, after: nil, limit: Self.csvPageSize) }
            return Self.csv(job: id, from: first, jobs: jobs)
        }
        router.on(API.jobEvents) { request, context -> Response in
            try context.authorize(.watch)
            let id = try Self.id(context)
            var from: Int?
            if let text = request.uri.queryParameters.get("from") {
                guard let number = Int(text), number >= 1 else {
                    throw HTTPError(.badRequest, message: "from: expected a frame number, 1 or more, not '\(text)'")
                }
                from = number
            }
            let subscription = try await Self.answer { () async throws(JobError) in try await jobs.subscribe(id, fromFrame: from) }
            return Self.events(request, job: id, subscription)
        }
    }

    /// The job's updates as Server-Sent Events. The subscription is made before the first byte
    /// is sent (a `: subscribed` comment), so no frame recorded after a client sees it is
    /// missed. The stream ends after the `end` event, when the client goes away or the server
    /// stops; a client that fell too far behind is told so and let go.
    private static func events(_ request: Request, job id: Int64,
                               _ subscription: (updates: AsyncStream<JobUpdate>, control: AsyncStream<JobUpdate>.Continuation))
        -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let (updates, control) = subscription
            try await request.body.consumeWithInboundCloseHandler { _ in
                try await withGracefulShutdownHandler {
                    try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                    var ended = false
                    var lastFrame: Int?
                    for await update in updates {
                        if case .ended = update { ended = true }
                        if case .frame(let frame) = update { lastFrame = frame.frame }
                        try await writer.write(ByteBuffer(string: update.event(job: id).serverSentEvent))
                    }
                    if !ended, !Task.isCancelled {
                        let resume = lastFrame.map { "?from=\($0 + 1)" } ?? ""
                        let message = "the stream ended before the job did; follow again with \(API.jobEvents.path(String(id)))\(resume)"
                        try await writer.write(ByteBuffer(string: JobEvent.streamError(message: message).serverSentEvent))
                    }
                } onGracefulShutdown: {
                    control.finish()
                }
            } onInboundClosed: {
                control.finish()
            }
            try await writer.finish(nil)
        })
    }

    /// How many frame records the CSV of a job reads from the journal at a time.
    static let csvPageSize = 1000

    /// Job `id`'s frames as CSV (``FrameRecord/csvHeaderLine``, then each record's line), read
    /// and written a page at a time, `first` page first. Streamed rather than built whole: a
    /// run of 100,000 frames is some 10 MB of text, which a phone on a slow link takes long to
    /// read, and the daemon then holds one page, never the run; each page is a read of its own,
    /// so a running job appends meanwhile, and its CSV has the frames up to the last page read.
    /// A page the journal fails to give cuts the download short (no last chunk), which the
    /// client reports as incomplete rather than taking a part for the whole.
    private static func csv(job id: Int64, from first: FramePage, jobs: JobManager) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"unleashed-run-\(id).csv\""
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: FrameRecord.csvHeaderLine))
            var page = first
            while true {
                if !page.frames.isEmpty { try await writer.write(ByteBuffer(string: page.frames.map(\.csvLine).joined())) }
                guard let next = page.next else { break }
                page = try jobs.framePage(of: id, after: next, limit: csvPageSize)
            }
            try await writer.finish(nil)
        })
    }

    /// The request's body, refused when it is over the API's limit.
    private static func body(of request: Request) async throws -> Data {
        Data(try await APIRoutes.bytes(of: request.body).readableBytesView)
    }

    /// The job id in the path; a path that names no job by number is a job that does not exist.
    private static func id(_ context: ControlRequestContext) throws -> Int64 {
        let text = context.pathParameter("id") ?? ""
        guard let id = Int64(text) else { throw HTTPError(.notFound, message: "there is no job \(text)") }
        return id
    }

    /// Runs a job operation, turning its refusal into the status that says whose move it is.
    private static func answer<T>(_ operation: () async throws(JobError) -> T) async throws -> T {
        do {
            return try await operation()
        } catch {
            // A camera's refusal keeps the camera's error, so that a client can act on it
            // (offer to set the shutter speed to bulb), as the camera routes answer it.
            switch error {
            case .refused(.camera(let cameraError)):
                throw CameraRefusal(status: status(of: error), error: cameraError, message: error.description)
            case .refused(.rigCamera(_, let cameraError)):
                throw CameraRefusal(status: status(of: error), error: cameraError, message: error.description)
            default:
                throw HTTPError(status(of: error), message: error.description)
            }
        }
    }

    private static func status(of error: JobError) -> HTTPResponse.Status {
        switch error {
        // The body is right; the daemon's state (several cameras) does not let it choose, as
        // for a camera route that names none.
        case .camera(.ambiguous): .conflict
        case .camera: .notFound
        case .unknownJob: .notFound
        case .cameraBusy, .notRunning, .notInterrupted, .shotElsewhere, .cameraNotHeld: .conflict
        // The run is shot by another process after all (it claimed it after the check).
        case .refused(.owned): .conflict
        case .refused(.camera): .conflict
        case .refused(.journal), .journal, .shuttingDown: .serviceUnavailable
        // The body fits the schema; its numbers break a rule a schema cannot state (a bulb and
        // its gap longer than the interval), or its hook refuses.
        case .refused: .unprocessableContent
        }
    }
}
