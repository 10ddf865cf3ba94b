import Intervalometer

extension RunProgress {
    /// The live status line's fields at `elapsed` since slot 1 (nil before the run knows its
    /// start; `startingIn` is then the time left of the delay asked for), most important first
    /// to keep when the terminal is narrow.
    public func statusLine(elapsed: Duration?, startingIn: Duration) -> [TerminalLine.Field] {
        let state = self
        guard let elapsed, elapsed >= .zero else {
            let left = elapsed.map { .zero - $0 } ?? startingIn
            return [.init(left > .zero ? "Starting in \(RunReport.clock(left))" : "Starting")]
        }
        if case .video(let clip) = plan.exposure { return videoLine(state, elapsed: elapsed, clip: .milliseconds(clip)) }
        let of = state.totalSlots.map { "/\($0)" } ?? ""
        guard let last = state.last else { return [.init("Frame 1" + of)] }
        let filled = Int(state.fractionOfInterval(at: elapsed) * 20)
        var fields: [TerminalLine.Field] = [
            .init("Frame \(last.frame)" + of),
            .init("[" + String(repeating: "#", count: filled) + String(repeating: "·", count: 20 - filled) + "]", dropOrder: 6),
            .init("next \(RunReport.clock(max(state.nextDue - elapsed, .zero)))"),
            .init("elapsed \(RunReport.clock(elapsed))", dropOrder: 4),
        ]
        if let left = state.remaining(at: elapsed) { fields.append(.init("left \(RunReport.clock(left))", dropOrder: 3)) }
        if let lateness = state.lastLatenessMicros, let worst = state.maxLatenessMicros {
            fields.append(.init("late \(RunReport.lateness(lateness)) (max \(RunReport.lateness(worst)))", dropOrder: 2))
        }
        if let spread = state.lastSpreadMicros, let worst = state.maxSpreadMicros {
            fields.append(.init("spread \(RunReport.lateness(spread)) (max \(RunReport.lateness(worst)))", dropOrder: 5))
        }
        if state.failed + state.skipped > 0 { fields.append(.init("\(state.failed) failed, \(state.skipped) skipped")) }
        return fields
    }

    /// `REC  Clip 3/10  00:02.1 / 00:05.0  remaining 00:02.9  elapsed 02:02.1`, or between clips
    /// `Clip 3/10 done  next clip in 00:54.9  elapsed 02:05.1`. The clip clock runs from the
    /// clip's slot; the record of each clip corrects it when the clip ends.
    private func videoLine(_ state: RunProgress, elapsed: Duration, clip: Duration) -> [TerminalLine.Field] {
        let total = state.totalSlots
        let of = total.map { "/\($0)" } ?? ""
        let done = state.last?.frame ?? 0
        let nextDue = state.nextDue
        var fields: [TerminalLine.Field]
        if let total, done >= total {
            fields = [.init("Clip \(done)\(of) done")]
        } else if elapsed < nextDue {
            fields = [.init("Clip \(done)\(of) done"), .init("next clip in \(RunReport.clock(nextDue - elapsed))")]
        } else {
            let recorded = min(elapsed - nextDue, clip)
            fields = [.init("REC  Clip \(done + 1)\(of)"), .init("\(RunReport.clock(recorded)) / \(RunReport.clock(clip))"),
                      .init("remaining \(RunReport.clock(clip - recorded))", dropOrder: 2)]
        }
        if total != 1 { fields.append(.init("elapsed \(RunReport.clock(elapsed))", dropOrder: 3)) }
        if state.failed + state.skipped > 0 { fields.append(.init("\(state.failed) failed, \(state.skipped) skipped")) }
        return fields
    }
}
