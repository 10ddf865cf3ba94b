import Glibc
import Synchronization

/// The latest shutter presses of every module, kept from the modules' own actors as they happen
/// so that each is stamped when it is handled, not when the fake's actor gets to it.
final class PressLog: Sendable {
    private let entries = Mutex<[FakeBlueZ.LoggedPress]>([])
    static let capacity = 4096

    func append(_ module: String, lateness: Duration) {
        let handled = FakeBlueZ.monotonicNanoseconds()
        let late = UInt64(max(0, lateness.wholeNanoseconds))
        entries.withLock { log in
            log.append(FakeBlueZ.LoggedPress(nanoseconds: handled - min(late, handled), latenessNanoseconds: late, module: module))
            // Trimmed in batches, so that a press does not move the whole log.
            if log.count > 2 * Self.capacity { log.removeFirst(log.count - Self.capacity) }
        }
    }

    func entries(since nanoseconds: UInt64) -> [FakeBlueZ.LoggedPress] {
        entries.withLock { $0.filter { $0.nanoseconds >= nanoseconds } }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : scaled + attoseconds / 1_000_000_000
    }
}
