import Foundation
import Intervalometer
import UnleashedAPI


extension JobUpdate {
    /// The update as the API's job event.
    func event(job id: Int64) -> JobEvent {
        switch self {
        case .frame(let frame): .frame(frame, job: id)
        case .ended(let ending, let summary):
            .end(run: ending.run, state: JobState(ended: ending.state), reason: ending.reason, summary: summary)
        }
    }
}

extension JobDocument {
    /// The job with its wall times (`t0`, the next slot, an `until` stop) read on a wall clock
    /// that has jumped `milliseconds` since they were: the moments they name stay where they were.
    func movingWallTimes(by milliseconds: Int64) -> JobDocument {
        guard milliseconds != 0 else { return self }
        var moved = self
        moved.t0UnixMs = t0UnixMs.map { $0 + milliseconds }
        moved.nextSlot = nextSlot.map { NextSlot(frame: $0.frame, dueUnixMs: $0.dueUnixMs + milliseconds) }
        if case .until(let unix) = plan.stop { moved.plan.stop = .until(unixMilliseconds: unix + milliseconds) }
        return moved
    }
}
