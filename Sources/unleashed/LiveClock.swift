import UnleashedApp
import CommandCore
import Foundation

/// A running clock on standard error (`Bulb  00:12.3 / 00:30.0`), shown only when standard
/// error is a terminal and the output is not JSON, so that it never mixes into results.
final class LiveClock: Sendable {
    private let task: Task<Void, Never>?

    init(_ label: String, total: Duration?, enabled: Bool) {
        guard enabled, isatty(STDERR_FILENO) == 1 else {
            task = nil
            return
        }
        let started = ContinuousClock.now
        task = Task {
            while !Task.isCancelled {
                let elapsed = started.duration(to: .now)
                let line = "\(label)  \(RunReport.clock(elapsed))" + (total.map { " / \(RunReport.clock($0))" } ?? "")
                Output.noteRaw("\r\(TerminalLine.fit([.init(line)], width: TerminalLine.width()))\u{1B}[K")
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Stops the clock and clears its line.
    func stop() {
        guard let task else { return }
        task.cancel()
        Output.noteRaw("\r\u{1B}[K")
    }
}
