import CameraKit
import UnleashedKit

/// What one command of a slot produced, for the journal.
struct SlotWork: Sendable {
    /// The camera's shot counter, for pictures.
    var shotCounter: Int?
    /// The exposure, when it differs from the planned one (a bulb ended early, a clip).
    var exposure: String?
    /// What went wrong on the way without spoiling the slot.
    var note: String?
    /// Why the slot failed after its command had gone through (a clip that could not be
    /// stopped): the slot is journalled as failed, with what it did.
    var failure: String?
    /// Requests the camera's link sent again meanwhile (``Shot/resent``).
    var resent = 0

    init(_ shot: Shot, exposure: String? = nil) {
        shotCounter = shot.counter
        self.exposure = exposure
        resent = shot.resent
    }

    init(exposure: String, note: String?) {
        self.exposure = exposure
        self.note = note
    }
}

/// One clip of a video slot: recording started, held for its length on the run's clock, then
/// stopped. The stop is retried until it succeeds or a safety deadline passes, so that a lost
/// reply or a short link drop does not leave the camera recording until its card is full.
struct VideoClip<C: Clock>: Sendable where C.Duration == Duration {
    /// How long after the clip's planned end the stop is still retried.
    static var safetyMargin: Duration { .seconds(10) }
    /// The pause between two attempts to stop.
    static var retryPause: Duration { .milliseconds(500) }

    let length: Duration
    let camera: any Camera
    let clock: C

    /// Records the clip. Cancelling the calling task (a stop of the run) ends it early, and the
    /// recording is still stopped.
    func record() async throws(CameraError) -> SlotWork {
        if Task.isCancelled { throw .cancelled }
        let planned = "video \(length.wholeMilliseconds)ms"
        do {
            try await camera.startVideo()
        } catch {
            // No answer: the camera may have started all the same, so it is told to stop.
            if case .timedOut = error { _ = try? await camera.stopVideo() }
            throw error
        }
        let started = clock.now
        let endedEarly = (try? await clock.sleep(until: started.advanced(by: length), tolerance: nil)) == nil
        let recorded = started.duration(to: clock.now)
        let deadline = started.advanced(by: length + Self.safetyMargin)
        var failures: [CameraError] = []
        while true {
            do {
                let clip = try await camera.stopVideo()
                var exposure = planned
                if endedEarly { exposure += ", ended early after \(recorded.wholeMilliseconds)ms" }
                exposure += ", clip \(clip.wholeMilliseconds)ms"
                let note = failures.last.map { "the recording stopped on attempt \(failures.count + 1); before that: \($0)" }
                return SlotWork(exposure: exposure, note: note)
            } catch {
                failures.append(error)
                guard clock.now.advanced(by: Self.retryPause) <= deadline else {
                    var work = SlotWork(exposure: planned, note: nil)
                    work.failure = "the recording could not be stopped in \(English.counting(failures.count, "attempt")) up to the safety deadline, "
                        + "\((length + Self.safetyMargin).compactText) after it started; last error: \(error)"
                    return work
                }
                await pauseBeforeRetry()
            }
        }
    }

    /// Waits between attempts even when the run is being stopped: a stop must not turn the
    /// retries into a busy loop.
    private func pauseBeforeRetry() async {
        let clock = clock
        await Task { try? await clock.sleep(for: Self.retryPause) }.value
    }
}
