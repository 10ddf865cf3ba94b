import Foundation
import Intervalometer
import Synchronization
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

/// What a person or a script sees while a run goes on. On a terminal: one live line on standard
/// error (frame n of N, a bar filling up to the next slot, elapsed and remaining time, lateness
/// so far; for video, the running clock of the clip being recorded), with slots that were not
/// taken printed above it. With `--json`: one JSON object per
/// frame record on standard output. Otherwise (a log file, a pipe): one text line per record.
final class RunDisplay: Sendable {
    private enum Mode {
        case json, live, log
    }

    private struct State {
        var runID: Int64?
        var progress: RunProgress
    }

    private let plan: RunPlan
    private let mode: Mode
    private let created = ContinuousClock.now
    private let startDelay: Duration
    private let state: Mutex<State>
    private let ticker = Mutex<Task<Void, Never>?>(nil)
    private let resized = Mutex<SignalWatch?>(nil)
    private let current: @Sendable () async -> RunRecord?

    /// - Parameter current: the run as journalled, for its id once it has begun.
    init(plan: RunPlan, options: GlobalOptions, startDelay: Duration, current: @escaping @Sendable () async -> RunRecord?) {
        self.plan = plan
        state = Mutex(State(progress: RunProgress(plan: plan)))
        self.startDelay = startDelay
        self.current = current
        mode = options.json ? .json : isatty(STDERR_FILENO) == 1 ? .live : .log
        guard mode == .live else { return }
        // A resized window is redrawn at once, fitted to its new width.
        resized.withLock { $0 = SignalWatch([SIGWINCH: { [weak self] in self?.redraw() }]) }
        ticker.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled, let self {
                    await self.learnT0()
                    self.redraw()
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
        }
    }

    /// Shows every record as it comes, until the run ends.
    func show(_ records: AsyncStream<FrameRecord>) async {
        for await record in records {
            var runID = state.withLock { $0.runID }
            if runID == nil {
                runID = await current()?.id
                state.withLock { $0.runID = runID }
            }
            note(record)
            switch mode {
            case .json:
                var line = RunReport.json(encoding: record).objectValue ?? [:]
                line["run"] = runID.map(JSONValue.integer)
                Output.line(Output.json(.object(line)))
            case .log:
                Output.line(RunReport.line(record, plan: plan))
            case .live:
                if record.outcome != .taken { clearLine(); Output.note(RunReport.line(record, plan: plan)) }
                redraw()
            }
        }
    }

    /// Stops the live line and clears it.
    func finish() {
        ticker.withLock { $0?.cancel() }
        resized.withLock { $0?.disarm() }
        if mode == .live { clearLine() }
    }

    /// Takes `t0` from the run as journalled, so the clock runs from the first slot on, before
    /// any record has arrived.
    private func learnT0() async {
        guard state.withLock({ $0.progress.t0 == nil }), let run = await current() else { return }
        let now = ContinuousClock.now
        state.withLock { $0.progress.learn(t0UnixMs: run.t0UnixMs, now: now, wallMs: Self.wallMs()) }
    }

    private func note(_ record: FrameRecord) {
        let now = ContinuousClock.now
        state.withLock { $0.progress.note(record, now: now, wallMs: Self.wallMs()) }
    }

    private static func wallMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    private func redraw() {
        let fields = state.withLock { statusLine($0.progress, now: .now) }
        Output.noteRaw("\r\(TerminalLine.fit(fields, width: TerminalLine.width()))\u{1B}[K")
    }

    private func clearLine() {
        Output.noteRaw("\r\u{1B}[K")
    }

    /// `Frame 12/300  [######··············]  next 2.1s  elapsed 00:55.0  left 24:05.0  late 0.312 ms (max 1.204 ms)`;
    /// on a narrow terminal the bar, the spread, the elapsed and remaining time and the lateness
    /// give way, in that order.
    private func statusLine(_ state: RunProgress, now: ContinuousClock.Instant) -> [TerminalLine.Field] {
        let elapsed = state.t0.map { $0.duration(to: now) }
        guard let elapsed, elapsed >= .zero else {
            let left = elapsed.map { .zero - $0 } ?? startDelay - created.duration(to: now)
            return [.init(left > .zero ? "Starting in \(Output.clock(left))" : "Starting")]
        }
        if case .video(let clip) = plan.exposure { return videoLine(state, elapsed: elapsed, clip: .milliseconds(clip)) }
        let of = state.totalSlots.map { "/\($0)" } ?? ""
        guard let last = state.last else { return [.init("Frame 1" + of)] }
        let filled = Int(state.fractionOfInterval(at: elapsed) * 20)
        var fields: [TerminalLine.Field] = [
            .init("Frame \(last.frame)" + of),
            .init("[" + String(repeating: "#", count: filled) + String(repeating: "·", count: 20 - filled) + "]", dropOrder: 6),
            .init("next \(Output.clock(max(state.nextDue - elapsed, .zero)))"),
            .init("elapsed \(Output.clock(elapsed))", dropOrder: 4),
        ]
        if let left = state.remaining(at: elapsed) { fields.append(.init("left \(Output.clock(left))", dropOrder: 3)) }
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
            fields = [.init("Clip \(done)\(of) done"), .init("next clip in \(Output.clock(nextDue - elapsed))")]
        } else {
            let recorded = min(elapsed - nextDue, clip)
            fields = [.init("REC  Clip \(done + 1)\(of)"), .init("\(Output.clock(recorded)) / \(Output.clock(clip))"),
                      .init("remaining \(Output.clock(clip - recorded))", dropOrder: 2)]
        }
        if total != 1 { fields.append(.init("elapsed \(Output.clock(elapsed))", dropOrder: 3)) }
        if state.failed + state.skipped > 0 { fields.append(.init("\(state.failed) failed, \(state.skipped) skipped")) }
        return fields
    }
}
