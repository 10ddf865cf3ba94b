// Time-lapse timing: how late the shot command goes out against its deadline, for the
// intervalometer engine and, side by side in the same run, for a naive loop that sleeps the
// interval after each shot. Both drive the demo simulator (zero shutter lag, zero write time) on
// the real monotonic clock, once on an idle machine and once with two threads spinning. A third
// row is the floor the machine allows: a plain thread sleeping to absolute deadlines with
// clock_nanosleep, doing nothing else.
//
// Usage: unleashed-timing-bench [--frames N] [--interval-ms MS] [--json]
//        (build with -c release; `make bench-timing`)

import Foundation
import Intervalometer
import Synchronization
import UnleashedKit
import UnleashedSimulator

let arguments = CommandLine.arguments
func option(_ name: String) -> Int? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } }
let frames = option("--frames") ?? 2000
let intervalMs = option("--interval-ms") ?? 50
let printJSON = arguments.contains("--json")
guard frames >= 2, intervalMs >= 1 else {
    FileHandle.standardError.write(Data("usage: unleashed-timing-bench [--frames N (2 or more)] [--interval-ms MS] [--json]\n".utf8))
    exit(64)
}

/// What one scenario measured, in microseconds.
struct Measurement {
    let scenario: String
    let lateness: [Int64]
    /// The last command's lateness: how far the schedule moved over the whole run.
    let drift: Int64
    /// Slots not shot (the engine skips a slot whose time passed while the previous one was
    /// still being shot or journalled).
    let notTaken: Int

    func percentile(_ p: Double) -> Int64 {
        let sorted = lateness.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[max(min(rank, sorted.count) - 1, 0)]
    }
}

/// A demo camera as fast as a camera can be, with a battery and a card that outlast the run, so
/// that only the scheduling is measured.
func fastCamera() async throws -> Demo {
    guard var profile = CameraProfile.named("nikon-z") else { fatalError("the nikon-z profile is missing") }
    profile.shutterLag = .zero
    profile.writeTime = .zero
    profile.batteryDrain = CameraProfile.BatteryDrain(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
    profile.cardCapacity = UInt32(max(frames * 2, 10_000))
    return try await Demo.start(stateFile: nil, options: DemoOptions(profile: profile))
}

func engine(_ scenario: String) async throws -> Measurement {
    let demo = try await fastCamera()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timing-bench-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let journal = try SQLiteJournal(path: directory.appendingPathComponent("journal.sqlite").path)
    let run = Timelapse(plan: RunPlan(intervalMs: Int64(intervalMs), stop: .frames(frames)), camera: demo.camera, journal: journal,
                        clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
    let ending = try await run.start(cameraName: "bench")
    let records = try journal.frames(of: ending.run.id)
    try await demo.finish()
    let lateness = records.compactMap(\.latenessMicros)
    return Measurement(scenario: scenario, lateness: lateness, drift: lateness.last ?? 0,
                       notTaken: records.count(where: { $0.outcome != .taken }))
}

/// What remotes that time each step from the previous one do: shoot, then sleep the interval.
func naive(_ scenario: String) async throws -> Measurement {
    let demo = try await fastCamera()
    let clock = ContinuousClock()
    let interval = Duration.milliseconds(intervalMs)
    let t0 = clock.now
    var lateness: [Int64] = []
    var failed = 0
    for frame in 0..<frames {
        let due = t0.advanced(by: interval * frame)
        lateness.append(micros(due.duration(to: clock.now)))
        do {
            _ = try await demo.camera.shoot()
        } catch {
            failed += 1
        }
        try await Task.sleep(for: interval)
    }
    try await demo.finish()
    return Measurement(scenario: scenario, lateness: lateness, drift: lateness.last ?? 0, notTaken: failed)
}

/// The floor: a thread of its own sleeping to each absolute deadline of the monotonic clock, and
/// nothing else; what the machine's scheduler gives any program.
func floor(_ scenario: String) -> Measurement {
    let result = Mutex<[Int64]>([])
    let finished = DispatchSemaphore(value: 0)
    Thread {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let t0 = Int64(start.tv_sec) * 1_000_000_000 + Int64(start.tv_nsec)
        var lateness: [Int64] = []
        for frame in 0..<frames {
            let due = t0 + Int64(frame) * Int64(intervalMs) * 1_000_000
            var deadline = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            lateness.append((Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - due) / 1000)
        }
        result.withLock { $0 = lateness }
        finished.signal()
    }.start()
    finished.wait()
    let lateness = result.withLock { $0 }
    return Measurement(scenario: scenario, lateness: lateness, drift: lateness.last ?? 0, notTaken: 0)
}

func micros(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
}

/// Two threads spinning on arithmetic, to load both cores of the machine the numbers come from.
final class Load: Sendable {
    private let running = Atomic(true)

    init(threads: Int) {
        for _ in 0..<threads {
            Thread { [self] in
                var value: UInt64 = 1
                while running.load(ordering: .relaxed) { value = value &* 6_364_136_223_846_793_005 &+ 1 }
                if value == 0 { print("") }
            }.start()
        }
    }

    func stop() { running.store(false, ordering: .relaxed) }
}

func milliseconds(_ micros: Int64) -> String { String(format: "%.3f", Double(micros) / 1000) }

var results: [Measurement] = []
do {
    results.append(try await engine("engine, idle"))
    results.append(try await naive("naive loop, idle"))
    results.append(floor("floor (bare thread), idle"))
    let load = Load(threads: 2)
    results.append(try await engine("engine, 2 busy threads"))
    results.append(try await naive("naive loop, 2 busy threads"))
    results.append(floor("floor (bare thread), 2 busy"))
    load.stop()
} catch {
    FileHandle.standardError.write(Data("unleashed-timing-bench: \(error)\n".utf8))
    exit(1)
}

if printJSON {
    let rows = results.map {
        "{\"scenario\":\"\($0.scenario)\",\"frames\":\($0.lateness.count),\"notTaken\":\($0.notTaken),\"p50Micros\":\($0.percentile(50)),"
            + "\"p99Micros\":\($0.percentile(99)),\"maxMicros\":\($0.percentile(100)),\"driftMicros\":\($0.drift)}"
    }
    print("{\"frames\":\(frames),\"intervalMs\":\(intervalMs),\"results\":[\(rows.joined(separator: ","))]}")
} else {
    print("\(frames) frames at \(intervalMs) ms; lateness of the shot command against its deadline, in ms")
    print("")
    let header = "scenario".padding(toLength: 28, withPad: " ", startingAt: 0)
        + ["p50", "p99", "max", "drift"].map { String(repeating: " ", count: 11 - $0.count) + $0 }.joined() + "  not taken"
    print(header)
    for result in results {
        let cells = [result.percentile(50), result.percentile(99), result.percentile(100), result.drift].map {
            String(repeating: " ", count: max(1, 11 - milliseconds($0).count)) + milliseconds($0)
        }
        print(result.scenario.padding(toLength: 28, withPad: " ", startingAt: 0) + cells.joined() + String(format: "%11d", result.notTaken))
    }
    print("")
    print("drift: the last frame's lateness, i.e. how far the run's end moved from t0 + (frames - 1) x interval")
    print("not taken: slots skipped because the one before was still being shot or journalled when they came")
}
