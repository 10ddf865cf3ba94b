import Foundation
import Intervalometer
import Synchronization
import Testing
import UnleashedApp

/// A run that only notes what it was asked.
private final class NotingRun: RunController, Sendable {
    let asked = Mutex<[String]>([])
    let records = AsyncStream<FrameRecord> { $0.finish() }
    func current() async -> RunRecord? { nil }
    func stop(reason: String) async { asked.withLock { $0.append("stop: \(reason)") } }
    func stopAfterCurrentFrame() async { asked.withLock { $0.append("stopAfterFrame") } }
    func shootExtraFrame() async { asked.withLock { $0.append("extraFrame") } }
    func pause() async {}
    func continueSchedule() async {}
    func outcome() async -> RunOutcome { .notStarted }
}

@Suite struct RunSignalsTests {
    @Test("the first stop wins: SIGTERM then Ctrl-C stops the run once, and the exit status is SIGTERM's")
    func firstStopWins() async throws {
        let run = NotingRun()
        let signals = RunSignals(run, interrupt: true)
        defer { signals.disarm() }
        signals.stop(by: SIGTERM)
        signals.stop(by: SIGINT)
        #expect(signals.stoppedBy == .terminated)
        for _ in 0..<200 where run.asked.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(run.asked.withLock { $0 } == ["stop: stopped by SIGTERM"])
    }
}
