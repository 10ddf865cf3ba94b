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
