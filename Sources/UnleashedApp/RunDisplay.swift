import CommandCore
import Foundation
public import Intervalometer
import JSON
import ProcessSignals
import Synchronization
import UnleashedKit

/// What a person or a script sees while a run goes on. On a terminal: one live line on standard
/// error (frame n of N, a bar filling up to the next slot, elapsed and remaining time, lateness
/// so far; for video, the running clock of the clip being recorded), with slots that were not
/// taken printed above it. With `--json`: one JSON object per
/// frame record on standard output. Otherwise (a log file, a pipe): one text line per record.
public final class RunDisplay: Sendable {
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
    private let wallClock: CommandClock

    /// - Parameters:
    ///   - json: a JSON line a record, for scripts, instead of text.
    ///   - wallClock: the clock the run's `t0` was read on: a daemon's for its job.
    ///   - current: the run as journalled, for its id once it has begun.
    public init(plan: RunPlan, json: Bool, startDelay: Duration, wallClock: CommandClock = .local,
                current: @escaping @Sendable () async -> RunRecord?) {
        self.plan = plan
        self.wallClock = wallClock
        state = Mutex(State(progress: RunProgress(plan: plan)))
        self.startDelay = startDelay
        self.current = current
        mode = json ? .json : isatty(STDERR_FILENO) == 1 ? .live : .log
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
    public func show(_ records: AsyncStream<FrameRecord>) async {
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
    public func finish() {
        ticker.withLock { $0?.cancel() }
        resized.withLock { $0?.disarm() }
        if mode == .live { clearLine() }
    }

    /// Takes `t0` from the run as journalled, so the clock runs from the first slot on, before
    /// any record has arrived.
    private func learnT0() async {
        guard state.withLock({ $0.progress.t0 == nil }), let run = await current() else { return }
        let now = ContinuousClock.now
        let wallMs = wallClock.unixMs
        state.withLock { $0.progress.learn(t0UnixMs: run.t0UnixMs, now: now, wallMs: wallMs) }
    }

    private func note(_ record: FrameRecord) {
        let now = ContinuousClock.now
        let wallMs = wallClock.unixMs
        state.withLock { $0.progress.note(record, now: now, wallMs: wallMs) }
    }

    private func redraw() {
        let now = ContinuousClock.now
        let fields = state.withLock { state in
            state.progress.statusLine(elapsed: state.progress.t0.map { $0.duration(to: now) },
                                      startingIn: startDelay - created.duration(to: now))
        }
        Output.noteRaw("\r\(TerminalLine.fit(fields, width: TerminalLine.width()))\u{1B}[K")
    }

    private func clearLine() {
        Output.noteRaw("\r\u{1B}[K")
    }
}
