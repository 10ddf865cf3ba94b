import Foundation
import Intervalometer
import Synchronization
import Testing
import UnleashedTestSupport
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
        // The stop reaches the run on a task of its own; the second never leaves RunSignals
        // (`stoppedBy` is set once, before any task), so one is all there can be.
        #expect(await eventually { !run.asked.withLock { $0.isEmpty } })
        #expect(run.asked.withLock { $0 } == ["stop: stopped by SIGTERM"])
    }
}
