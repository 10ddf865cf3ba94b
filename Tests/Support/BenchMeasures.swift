import Foundation

/// CLOCK_MONOTONIC now, in nanoseconds: the clock every process on the machine shares, so a
/// benchmark can compare its own instants with those a fake bluetoothd logged.
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The nearest-rank percentile of `values`: always a value that was measured.
public func percentile(_ p: Double, _ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[max(Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1, 0)]
}

/// Total and stolen CPU time so far, in clock ticks, from /proc/stat's first line. On a shared
/// virtual machine the steal share says whether a run measured the program or its neighbours.
public func cpuTicks() -> (total: Double, steal: Double) {
    let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
    let fields = stat.split(separator: "\n").first?.split(separator: " ").dropFirst().compactMap { Double($0) } ?? []
    return (fields.prefix(8).reduce(0, +), fields.count > 7 ? fields[7] : 0)
}
