public import CameraKit
import UnleashedKit

/// A camera's status as the API answers it: one read of the module shared by every client.
///
/// Each read of a module's status is a request over the radio, and it competes with a run's
/// shots for the link. Fifty scripts polling `GET /v1/status` must not become fifty reads: a
/// request that arrives while a read is under way shares it, and an answer is reused until the
/// camera reports a change (any event), the API acts on the camera, or ``maximumAge`` passes.
/// An answer read before a change is never reused after it.
public actor StatusReader {
    /// The longest an answer is reused when nothing has been reported.
    public static let maximumAge = Duration.seconds(1)

    private let camera: any Camera
    private var answer: (status: CameraStatus, read: ContinuousClock.Instant)?
    /// The last status read, however old: what a client that cannot wait is given.
    private var lastAnswer: CameraStatus?
    private var reading: (task: Task<Result<CameraStatus, CameraError>, Never>, generation: Int)?
    /// Counts changes: an answer is kept only when no change came while it was read.
    private var generation = 0
    private var watching = false
    private var watch: Task<Void, Never>?

    /// When an answer was read and how old it is, on `now`'s clock: a test freezes it to tell
    /// an answer dropped for a change from one that aged out.
    private let now: @Sendable () -> ContinuousClock.Instant

    public init(camera: any Camera, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.camera = camera
        self.now = now
    }

    deinit {
        watch?.cancel()
    }

    /// The camera's status, read now or shared with a read under way, or an answer read since
    /// the last change.
    public func status() async throws(CameraError) -> CameraStatus {
        if let answer, now() - answer.read < Self.maximumAge { return answer.status }
        await watchForChanges()
        if let reading, reading.generation == generation { return try await reading.task.value.get() }
        let camera = camera
        let task = Task { () async -> Result<CameraStatus, CameraError> in
            do throws(CameraError) {
                return .success(try await camera.status())
            } catch {
                return .failure(error)
            }
        }
        let started = generation
        reading = (task, started)
        let result = await task.value
        if reading?.generation == started { reading = nil }
        if case .success(let status) = result {
            lastAnswer = status
            if generation == started { answer = (status, now()) }
        }
        return try result.get()
    }

    /// The status for a client that must not wait on a camera that is away (a module out of
    /// range answers only once it is back, up to half a minute later): a read that answers
    /// within `limit`, else the last status read, however old. The read goes on and keeps its
    /// answer for the next client.
    public func status(waitingAtMost limit: Duration) async throws(CameraError) -> CameraStatus {
        if let answer, now() - answer.read < Self.maximumAge { return answer.status }
        let (outcomes, outcome) = AsyncStream.makeStream(of: Result<CameraStatus, CameraError>?.self)
        // The read is not awaited here: past the limit it goes on, and its answer is kept.
        Task {
            do throws(CameraError) { outcome.yield(.success(try await self.status())) } catch { outcome.yield(.failure(error)) }
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            outcome.yield(nil)
        }
        defer {
            timer.cancel()
            outcome.finish()
        }
        for await first in outcomes {
            if let first { return try first.get() }
            break
        }
        if let lastAnswer { return lastAnswer }
        throw .timedOut("status", after: limit)
    }

    /// Forgets the answer: the camera changed, or the API has just acted on it.
    public func changed() {
        generation += 1
        answer = nil
    }

    /// Follows the camera's events from the first read on, so that a camera nobody asks
    /// about costs no subscription.
    private func watchForChanges() async {
        guard !watching else { return }
        watching = true
        let events = await camera.events()
        watch = Task { [weak self] in
            for await _ in events {
                guard let self else { return }
                await self.changed()
            }
        }
    }
}
