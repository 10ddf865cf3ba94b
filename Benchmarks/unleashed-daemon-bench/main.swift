// The daemon's costs, measured on the built binaries (docs/performance.md):
//   1. a status request through the control socket, as a script's HTTP client sees it;
//   2. `unleashed shoot` as a process: from its spawn to the shoot request reaching the module
//      behind the fake bluetoothd, with the daemon running (the CLI asks it) and without (the CLI
//      connects the module itself), side by side in one run; spawned straight, without the
//      wrapper every other child runs in (ChildProcesses.runUntied), whose 2 to 3 ms are not the command's;
//   3. a run's lateness p99 (200 slots 100 ms apart), and how late its shoot requests reached the
//      module, alone and with 50 API clients (25 polling the status 5 times a second, 25 following
//      the events), one after the other on the same module;
//   4. the idle daemon holding one connected module: its resident memory and CPU over 60 s.
// With --soak [--minutes 60] [--every SECONDS] it measures instead what the daemon holds under a
// steady load for a long time (Soak.swift; make bench-soak).
// Everything runs on a private dbus-daemon with the project's fake org.bluez in this process.
// --compare PATH times another build's `unleashed shoot` through the same daemon, in turn with
// this build's, run for run.
// Build first: swift build -c release --static-swift-stdlib --product unleashed (make bench-daemon does both).
import DaemonClient
import FakeBlueZ
import Foundation
import Intervalometer
import JSON
import UnleashedProtocol
import UnleashedTestSupport

func milliseconds(_ value: Double) -> String { String(format: "%.3f ms", value) }
func micros(_ value: Int64) -> String { String(format: "%.3f ms", Double(value) / 1000) }

let arguments = CommandLine.arguments
let shootRuns = arguments.firstIndex(of: "--runs").flatMap { Int(arguments[$0 + 1]) } ?? 200
let statusRequests = arguments.firstIndex(of: "--requests").flatMap { Int(arguments[$0 + 1]) } ?? 2000
let idleSeconds = arguments.firstIndex(of: "--idle").flatMap { Int(arguments[$0 + 1]) } ?? 60
/// Another build of `unleashed` (an older commit's, say) whose `shoot` through the same daemon
/// is timed in turn with this build's, run for run.
let compared = arguments.firstIndex(of: "--compare").map { URL(fileURLWithPath: arguments[$0 + 1]) }

let bench = try await BenchDaemon(unleashed: URL(fileURLWithPath: arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("unleashed"))
defer { bench.remove() }

if arguments.contains("--soak") {
    let minutes = arguments.firstIndex(of: "--minutes").flatMap { Int(arguments[$0 + 1]) } ?? 60
    let every = arguments.firstIndex(of: "--every").flatMap { Int(arguments[$0 + 1]) }
    try await Soak(bench: bench, minutes: minutes, sampleSeconds: every ?? max(minutes * 60 / 30, 10)).run()
    bench.remove()
    exit(0)
}

let fake = bench.fake
let address = bench.address
let socket = bench.socket
let directory = bench.directory

@MainActor func runUnleashed(_ arguments: [String], binary: URL? = nil) throws -> Int32 { try bench.run(arguments, binary: binary) }
@MainActor func startDaemon() async throws -> Process { try await bench.start() }
@MainActor func stopDaemon(_ process: Process) { bench.stop(process) }

/// How a timed command is started.
enum Start {
    /// Spawned straight (`ChildProcesses.runUntied`), this build's or another's: the command's own start.
    case straight(URL?)
    /// This build in the wrapper that every other child runs in, timed from before Foundation's
    /// `Process` starts it, as this benchmark timed it until 2026-11-27: the harness's own share.
    case wrapped
}

/// Milliseconds from starting `unleashed shoot` to the shoot request reaching the module, for
/// each way of starting it in `starts`, in turn run for run.
@MainActor func shootLatencies(_ arguments: [String], runs: Int, starts: [Start] = [.straight(nil)]) async throws -> [[Double]] {
    var latencies = Array(repeating: [Double](), count: starts.count)
    for run in 0..<runs {
        for (index, way) in starts.enumerated() {
            let status: Int32, start: UInt64
            switch way {
            case .straight(let binary):
                (status, start) = try bench.runTimed(arguments + ["shoot"], binary: binary)
            case .wrapped:
                start = monotonicNanoseconds()
                status = try runUnleashed(arguments + ["shoot"])
            }
            guard status == 0 else {
                let binary = if case .straight(let binary?) = way { binary.path } else { "unleashed" }
                fail("\(binary) \((arguments + ["shoot"]).joined(separator: " ")) exited \(status) on run \(run + 1): " + bench.lastErrors)
            }
            guard let request = try await shootRequests(since: start).first else {
                fail("run \(run + 1): no shoot request reached the module")
            }
            latencies[index].append(Double(request - start) / 1e6)
        }
    }
    return latencies
}

/// When each shoot request written since `start` reached the module (monotonic nanoseconds).
func shootRequests(since start: UInt64) async throws -> [UInt64] {
    var reassembler = try Reassembler(mtu: 247)
    return await fake.writes(since: start).filter { write in
        guard let bytes = reassembler.receive(write.packet).message,
              let message = try? Message(decoding: bytes) else { return false }
        if case .request(.shoot) = message.kind { return true }
        return false
    }.map(\.nanoseconds)
}

/// A run's lateness p99 as its journal has it (from each deadline to the run issuing the
/// command), and the p99 of how late its shoot requests reached the module: slot n's request
/// should arrive at t0 + (n - 1) × interval plus the path's own delay, and the run's earliest
/// request relative to its slot stands for t0 plus that delay.
struct RunTiming {
    var latenessP99Micros: Int64
    var arrivalDelayP99Ms: Double
    /// The share of CPU time the hypervisor gave to others (steal) during the run: on a shared
    /// virtual machine, what says whether a run measured the program or its neighbours.
    var stealPercent: Double
}


/// Runs 200 slots 100 ms apart on the daemon's module.
func runTiming(_ client: DaemonClient) async throws -> RunTiming {
    let start = monotonicNanoseconds()
    let ticksBefore = cpuTicks()
    let id = try await client.startJob(RunPlan(intervalMs: 100, stop: .frames(200), overrun: .burst)).id
    while true {
        try await Task.sleep(for: .milliseconds(500))
        let now = try await client.job(id)
        guard now.state == "finished" else { continue }
        guard now.summary.taken == 200, let p99 = now.summary.p99LatenessMicros else {
            fail("job \(id) did not take its 200 slots: \(now)")
        }
        let arrivals = try await shootRequests(since: start)
        guard arrivals.count == 200 else { fail("job \(id): \(arrivals.count) shoot requests reached the module, not 200") }
        let relative = arrivals.enumerated().map { slot, arrival in Double(arrival) / 1e6 - Double(slot) * 100 }
        let earliest = relative.min() ?? 0
        let ticksAfter = cpuTicks()
        let steal = (ticksAfter.steal - ticksBefore.steal) / max(ticksAfter.total - ticksBefore.total, 1) * 100
        return RunTiming(latenessP99Micros: p99, arrivalDelayP99Ms: percentile(99, relative.map { $0 - earliest }),
                         stealPercent: steal)
    }
}

// 1 and 2 with the daemon running.
var daemon = try await startDaemon()
let client = DaemonClient(socketPath: socket)
var statusTimes: [Double] = []
for _ in 0..<statusRequests {
    let start = ContinuousClock.now
    _ = try await client.status()
    statusTimes.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e15
        + Double((ContinuousClock.now - start).components.seconds) * 1000)
}
// The first run of a fresh daemon pays for warming up (the journal's first writes, code paged in);
// it is run and thrown away so that the two measured runs differ only in the clients.
_ = try await runTiming(client)
let quiet = try await runTiming(client)
let (pollers, followers) = try Curl.apiClients(socket: socket, pollers: 25, followers: 25, polls: 115, outputs: directory)
try await Task.sleep(for: .seconds(1))
let loaded = try await runTiming(client)
let stillFollowing = followers.filter { $0.0.isRunning }.count
for (process, _) in pollers + followers where process.isRunning { kill(process.processIdentifier, SIGKILL) }

_ = try runUnleashed(["shoot"])  // warm the page cache for both modes alike
if let compared { _ = try runUnleashed(["shoot"], binary: compared) }
let throughDaemonRuns = try await shootLatencies([], runs: shootRuns,
                                                 starts: [.straight(nil), .wrapped] + (compared.map { [.straight($0)] } ?? []))
let throughDaemon = throughDaemonRuns[0]
let throughWrapper = throughDaemonRuns[1]
let throughCompared = throughDaemonRuns.dropFirst(2).first
stopDaemon(daemon)

// 2 without it: each command connects the module itself.
_ = try runUnleashed(["--module", address, "shoot"])
let direct = try await shootLatencies(["--module", address], runs: shootRuns)[0]

// 3: the idle daemon.
daemon = try await startDaemon()
try await Task.sleep(for: .seconds(2))
let before = ProcessUsage(daemon.processIdentifier)
try await Task.sleep(for: .seconds(idleSeconds))
let after = ProcessUsage(daemon.processIdentifier)
stopDaemon(daemon)
let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
let cpuPercent = Double(after.ticks - before.ticks) / ticksPerSecond / Double(idleSeconds) * 100

print("""
    status request through the socket (\(statusRequests) requests, one client): \
    p50 \(milliseconds(percentile(50, statusTimes))), p99 \(milliseconds(percentile(99, statusTimes)))

    unleashed shoot, from its spawn to the shoot request at the module (\(shootRuns) runs each):
      mode                            p50          p99          max
      through daemon                  \(milliseconds(percentile(50, throughDaemon)))  \(milliseconds(percentile(99, throughDaemon)))  \(milliseconds(throughDaemon.max() ?? 0))\(
        throughCompared.map { "\n  --compare build                 \(milliseconds(percentile(50, $0)))  \(milliseconds(percentile(99, $0)))  \(milliseconds($0.max() ?? 0))" } ?? "")
      through daemon, in the wrapper  \(milliseconds(percentile(50, throughWrapper)))  \(milliseconds(percentile(99, throughWrapper)))  \(milliseconds(throughWrapper.max() ?? 0))
      direct                          \(milliseconds(percentile(50, direct)))  \(milliseconds(percentile(99, direct)))  \(milliseconds(direct.max() ?? 0))
      (in the wrapper: started by Foundation's Process through setpriv and sh, as every other child is)

    a run of 200 slots at 100 ms, p99      alone       with 50 API clients  difference
      lateness (journal)                 \(micros(quiet.latenessP99Micros))    \(micros(loaded.latenessP99Micros))             \(micros(loaded.latenessP99Micros - quiet.latenessP99Micros))
      shoot request at the module, delay \(milliseconds(quiet.arrivalDelayP99Ms))    \(milliseconds(loaded.arrivalDelayP99Ms))             \(milliseconds(loaded.arrivalDelayP99Ms - quiet.arrivalDelayP99Ms))
      CPU stolen by the host             \(String(format: "%.1f %%", quiet.stealPercent))       \(String(format: "%.1f %%", loaded.stealPercent))
      (\(stillFollowing)/25 followers connected to the end)

    idle daemon with one connected module, over \(idleSeconds) s: RSS \(before.rssKiB) KiB -> \(after.rssKiB) KiB \
    (anonymous \(after.anonymousKiB) KiB, \(after.threads) threads, \(after.descriptors) descriptors), \
    CPU \(String(format: "%.2f", cpuPercent)) % of one core (\(after.ticks - before.ticks) ticks)
    """)
var members: [String: JSONValue] = [
    "statusMs": ["p50": .number(percentile(50, statusTimes)), "p99": .number(percentile(99, statusTimes))],
    "shootThroughDaemonMs": ["p50": .number(percentile(50, throughDaemon)), "p99": .number(percentile(99, throughDaemon))],
    "shootThroughDaemonInWrapperMs": ["p50": .number(percentile(50, throughWrapper)), "p99": .number(percentile(99, throughWrapper))],
    "shootDirectMs": ["p50": .number(percentile(50, direct)), "p99": .number(percentile(99, direct))],
    "latenessP99Micros": ["alone": .integer(quiet.latenessP99Micros), "with50Clients": .integer(loaded.latenessP99Micros)],
    "arrivalDelayP99Ms": ["alone": .number(quiet.arrivalDelayP99Ms), "with50Clients": .number(loaded.arrivalDelayP99Ms)],
    "stealPercent": ["alone": .number(quiet.stealPercent), "with50Clients": .number(loaded.stealPercent)],
    "idle": ["seconds": .integer(Int64(idleSeconds)), "rssKiB": .integer(Int64(after.rssKiB)),
             "anonymousKiB": .integer(Int64(after.anonymousKiB)), "threads": .integer(Int64(after.threads)),
             "cpuPercent": .number(cpuPercent)],
]
if let throughCompared {
    members["shootComparedThroughDaemonMs"] = ["p50": .number(percentile(50, throughCompared)), "p99": .number(percentile(99, throughCompared))]
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(JSONValue.object(members)), as: UTF8.self))
