// Time-lapse timing: how late the shot command goes out against its deadline, for the
// intervalometer engine on the demo simulator (zero shutter lag, zero write time) on the real
// monotonic clock, beside the floor the machine allows: a plain thread sleeping to absolute
// deadlines with clock_nanosleep, doing nothing else. Once on an idle machine, then with every
// core loaded by a busy-loop process the bench starts (this program with --spin) and stops
// itself; loaded, the floor and the engine run at the normal policy and with a real-time
// priority (SCHED_FIFO 10, where the system grants it), side by side. Each row says what its
// thread was granted. --naive adds a loop that sleeps the interval after each shot, idle and
// loaded.
//
// By default 250 frames at 200 ms per row, six rows, about five minutes: an interval that leaves
// the shot before a slot and the slot's readiness check (50 ms ahead) room on a loaded machine,
// as any real time-lapse interval does.
//
// Usage: unleashed-timing-bench [--frames N] [--interval-ms MS] [--naive] [--json]
//        (build with -c release; `make bench-timing`)

import Foundation
import Intervalometer
import Synchronization
import UnleashedKit
import UnleashedSimulator

let arguments = CommandLine.arguments
if arguments.contains("--spin") {
    // One of the load processes: spin on arithmetic until the bench ends it, or ends itself.
    let bench = getppid()
    var value: UInt64 = 1
    while true {
        for _ in 0..<10_000_000 { value = value &* 6_364_136_223_846_793_005 &+ 1 }
        if getppid() != bench { exit(value == 0 ? 1 : 0) }
    }
}
func option(_ name: String) -> Int? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } }
let frames = option("--frames") ?? 250
let intervalMs = option("--interval-ms") ?? 200
let printJSON = arguments.contains("--json")
let withNaive = arguments.contains("--naive")
guard frames >= 2, intervalMs >= 1 else {
    FileHandle.standardError.write(Data("usage: unleashed-timing-bench [--frames N (2 or more)] [--interval-ms MS] [--naive] [--json]\n".utf8))
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

/// The normal policy at the nice value runs had before real-time priority.
let normalPriority = ExecutorThread.Priority(realTime: nil, niceness: -10)
/// A run's default: SCHED_FIFO 10 where granted, else nice -10.
let realTimePriority = Timelapse<ContinuousClock>.realTimeThreadPriority

func engine(_ scenario: String, priority: ExecutorThread.Priority) async throws -> Measurement {
    let demo = try await fastCamera()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timing-bench-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let journal = try SQLiteJournal(path: directory.appendingPathComponent("journal.sqlite").path)
    let run = Timelapse(plan: RunPlan(intervalMs: Int64(intervalMs), stop: .frames(frames)), camera: demo.camera, journal: journal,
                        clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) }, threadPriority: priority)
    let ending = try await run.start(cameraName: "bench")
    let records = try journal.frames(of: ending.run.id)
    try await demo.finish()
    let lateness = records.compactMap(\.latenessMicros)
    return Measurement(scenario: "engine [\(run.threadScheduling)], \(scenario)", lateness: lateness, drift: lateness.last ?? 0,
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
    return Measurement(scenario: "naive loop, \(scenario)", lateness: lateness, drift: lateness.last ?? 0, notTaken: failed)
}

/// The floor: a thread of its own sleeping to each absolute deadline of the monotonic clock, and
/// nothing else; what the machine's scheduler gives any program. With `realTime`, the thread asks
/// for SCHED_FIFO at that priority first, as a run's thread does.
func floor(_ scenario: String, realTime: Int32? = nil) -> Measurement {
    let result = Mutex<([Int64], String)>(([], "normal"))
    let finished = DispatchSemaphore(value: 0)
    Thread {
        var granted = "normal"
        if let realTime {
            var parameters = sched_param()
            parameters.sched_priority = realTime
            if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 { granted = "SCHED_FIFO \(realTime)" }
        }
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
        result.withLock { $0 = (lateness, granted) }
        finished.signal()
    }.start()
    finished.wait()
    let (lateness, granted) = result.withLock { $0 }
    return Measurement(scenario: "floor [\(granted)], \(scenario)", lateness: lateness, drift: lateness.last ?? 0, notTaken: 0)
}

func micros(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
}

/// One busy-loop process per core (this program with --spin), at the normal policy: every CPU
/// has something to run whenever a deadline comes. Stopped by their process ids.
final class Load {
    private let processes: [Process]

    init(processes count: Int) throws {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        processes = try (0..<count).map { _ in
            let process = Process()
            process.executableURL = me
            process.arguments = ["--spin"]
            try process.run()
            return process
        }
    }

    func stop() {
        // SIGKILL: a Swift program's threads block SIGTERM (the async main runs on one of them).
        for process in processes { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
    }
}

func milliseconds(_ micros: Int64) -> String { String(format: "%.3f", Double(micros) / 1000) }

let cores = ProcessInfo.processInfo.activeProcessorCount
let loaded = "\(cores) busy processes"
var results: [Measurement] = []
do {
    results.append(floor("idle"))
    results.append(try await engine("idle", priority: realTimePriority))
    if withNaive { results.append(try await naive("idle")) }
    let load = try Load(processes: cores)
    defer { load.stop() }
    results.append(floor(loaded))
    results.append(floor(loaded, realTime: 10))
    results.append(try await engine(loaded, priority: normalPriority))
    results.append(try await engine(loaded, priority: realTimePriority))
    if withNaive { results.append(try await naive(loaded)) }
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
    let header = "scenario".padding(toLength: 46, withPad: " ", startingAt: 0)
        + ["p50", "p99", "max", "drift"].map { String(repeating: " ", count: 11 - $0.count) + $0 }.joined() + "  not taken"
    print(header)
    for result in results {
        let cells = [result.percentile(50), result.percentile(99), result.percentile(100), result.drift].map {
            String(repeating: " ", count: max(1, 11 - milliseconds($0).count)) + milliseconds($0)
        }
        print(result.scenario.padding(toLength: 46, withPad: " ", startingAt: 0) + cells.joined() + String(format: "%11d", result.notTaken))
    }
    print("")
    print("drift: the last frame's lateness, i.e. how far the run's end moved from t0 + (frames - 1) x interval")
    print("not taken: slots skipped because the one before was still being shot or journalled when they came")
}
