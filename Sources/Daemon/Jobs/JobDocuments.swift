import Foundation
import Intervalometer
import UnleashedAPI

extension JobSnapshot {
    /// The API's job document.
    var document: JobDocument {
        JobDocument(id: id, camera: camera, cameras: cameras, kind: kind, state: state, plan: plan, t0UnixMs: t0UnixMs,
                    reason: reason, summary: summary, lastFrame: lastFrame)
    }
}

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
