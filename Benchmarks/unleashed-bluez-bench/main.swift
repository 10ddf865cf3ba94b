// The BlueZ path's cost: a request's round trip (the Command write out, the response notification
// back) through a real dbus-daemon and the fake bluetoothd (`unleashed-sim bluez`), the time from
// "connect" to a ready module, and the CPU time each request costs the client, the fake
// bluetoothd and the bus daemon. Side by side in the same run: the same requests over the
// in-process simulated link (demo mode), which has no D-Bus at all.
//
// This client runs twice: with the characteristics' sockets (AcquireWrite and AcquireNotify, its
// default) and with D-Bus messages only (WriteValue out, PropertiesChanged signals in).
//
// The anchor, in the same run and on the same fake: bleak (PyPI), a Python BLE client, making
// the same requests (bleak-client.py beside this file), with its own CPU time per request: with
// its default notifications (StartNotify) and with AcquireNotify's socket; it always writes
// with WriteValue.
//
// Usage: unleashed-bluez-bench [--requests N] [--connects N] [--python PATH | --no-bleak] [--json]
//        (build with -c release; `make bench-bluez` also makes the Python environment for bleak)

import BlueZ
import DBus
import Foundation
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

let arguments = CommandLine.arguments
func stringOption(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil } }
func option(_ name: String) -> Int? { stringOption(name).flatMap { Int($0) } }
let requests = option("--requests") ?? 5000
let connects = option("--connects") ?? 20
let printJSON = arguments.contains("--json")
/// The Python with bleak installed (`make bench-bluez` makes this virtual environment).
let python = arguments.contains("--no-bleak") ? nil : (stringOption("--python") ?? ".build/bench-venv/bin/python")
guard requests >= 10, connects >= 1 else {
    FileHandle.standardError.write(Data("usage: unleashed-bluez-bench [--requests N (10 or more)] [--connects N] [--json]\n".utf8))
    exit(64)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-bluez-bench: \(message)\n".utf8))
    exit(1)
}

// MARK: - Processes: a private bus and the fake bluetoothd

/// User plus system CPU time of a process so far, from /proc.
func cpuTime(of pid: Int32) -> Duration {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let afterName = stat.range(of: ") ") else { return .zero }
    let fields = stat[afterName.upperBound...].split(separator: " ")
    let ticks = (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    return .milliseconds(ticks * 1000 / Int(sysconf(Int32(_SC_CLK_TCK))))
}

func ownCPUTime() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
    return duration(usage.ru_utime) + duration(usage.ru_stime)
}

/// Context switches of this process so far, every thread: each one a thread that went to sleep
/// and had to be woken, the main cost of handing work between threads.
/// Context switches per thread of this process so far, by thread name (summed over threads of
/// one name): where the hand-overs happen.
func threadContextSwitches() -> [String: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var switches: [String: Int] = [:]
    for task in tasks {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { continue }
        var name = "?"
        var count = 0
        for line in status.split(separator: "\n") {
            if line.hasPrefix("Name:") { name = line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                count += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        switches[name, default: 0] += count
    }
    return switches
}

func ownContextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

let bus = try await PrivateBus()
let address = bus.address
let simPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed-sim").path
let (sim, ready) = try await launchReadingFirstLine(simPath, ["bluez", "--bus", address, "--modules", "1"])
guard ready == "ready" else { fail("unleashed-sim bluez did not start (build it: swift build -c release --static-swift-stdlib --product unleashed-sim)") }
defer {
    kill(sim.processIdentifier, SIGKILL)
}

// MARK: - Measurements

struct Samples {
    var values: [Duration] = []

    func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return milliseconds(sorted[Swift.max(min(rank, sorted.count) - 1, 0)])
    }

    var max: Double { milliseconds(values.max() ?? .zero) }

    func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}

/// Times `count` requests (a setting read: one request out, one response back).
func roundTrips(_ camera: isolated ModuleCamera, count: Int) async throws -> Samples {
    var samples = Samples()
    samples.values.reserveCapacity(count)
    for _ in 0..<count {
        let start = ContinuousClock.now
        _ = try await camera.value(of: .iso)
        samples.values.append(ContinuousClock.now - start)
    }
    return samples
}

let module = "F0:5E:D0:00:00:01"
let busAddress = DBusConnection.Bus.address(address)
do {
    let client = try await BlueZClient.open(bus: busAddress)
    let adapter = try await client.adapter(named: nil)
    let device = try await client.findModule(module, on: adapter, serviceUUID: UnleashedV1.gattLayout.service, timeout: .seconds(10))
    try await client.pair(device.path, serviceUUID: UnleashedV1.gattLayout.service, agent: PairingAgent { _ in .accept })
    await client.close()
} catch {
    fail("pairing with the simulated module failed: \(error)")
}

func bluezCamera(sockets: Bool) async throws -> ModuleCamera {
    try await ModuleCamera(connection: ModuleConnection(provider: BlueZLinkProvider(bus: busAddress, module: module, acquireSockets: sockets)),
                           name: module)
}

var connectTimes = Samples()
for _ in 0..<connects {
    let start = ContinuousClock.now
    let camera = try await bluezCamera(sockets: true)
    connectTimes.values.append(ContinuousClock.now - start)
    await camera.close()
}

/// One run of this client over BlueZ: its samples, the CPU time of the client, the fake and the
/// bus over the timed requests, and the client's context switches per request, by thread.
struct ClientRun {
    var samples: Samples
    var clientCPU: Duration
    var bluetoothdCPU: Duration
    var busCPU: Duration
    var switchesPerRequest: Double
    var switchesByThread: [(String, Double)]
}

func runClient(sockets: Bool) async throws -> ClientRun {
    let camera = try await bluezCamera(sockets: sockets)
    _ = try await roundTrips(camera, count: 100)  // warm-up
    let threadsBefore = threadContextSwitches()
    let (clientBefore, simBefore, busBefore, switchesBefore) = (ownCPUTime(), cpuTime(of: sim.processIdentifier), cpuTime(of: bus.pid), ownContextSwitches())
    let samples = try await withTaskExecutorPreference(camera.executor) { try await roundTrips(camera, count: requests) }
    let (clientAfter, simAfter, busAfter, switchesAfter) = (ownCPUTime(), cpuTime(of: sim.processIdentifier), cpuTime(of: bus.pid), ownContextSwitches())
    let threadsAfter = threadContextSwitches()
    await camera.close()
    let byThread = threadsAfter.map { name, after in (name, Double(after - (threadsBefore[name] ?? 0)) / Double(requests)) }
        .filter { $0.1 >= 0.01 }.sorted { $0.1 > $1.1 }
    return ClientRun(samples: samples, clientCPU: clientAfter - clientBefore, bluetoothdCPU: simAfter - simBefore, busCPU: busAfter - busBefore,
                     switchesPerRequest: Double(switchesAfter - switchesBefore) / Double(requests), switchesByThread: byThread)
}

let overSockets = try await runClient(sockets: true)
let overMessages = try await runClient(sockets: false)

/// bleak's run: its samples, its own CPU time, and the fake's and the bus's CPU time meanwhile.
struct BleakRun {
    var samples: Samples
    var clientCPU: Duration
    var bluetoothdCPU: Duration
    var busCPU: Duration
}

func runBleak(python: String, notify: String) async throws -> BleakRun {
    let root = FileManager.default.currentDirectoryPath
    let script = "\(root)/Benchmarks/unleashed-bluez-bench/bleak-client.py"
    guard FileManager.default.isExecutableFile(atPath: python) else {
        fail("no Python with bleak at \(python): `make bench-bluez` makes it, or pass --python PATH or --no-bleak")
    }
    guard FileManager.default.fileExists(atPath: script) else { fail("run from the repository's root: \(script) is missing") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script, module, root, String(requests), "100", notify]
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    let (simBefore, busBefore) = (cpuTime(of: sim.processIdentifier), cpuTime(of: bus.pid))
    try ChildProcesses.run(process)
    let data = try output.fileHandleForReading.readToEnd() ?? Data()
    process.waitUntilExit()
    let (simAfter, busAfter) = (cpuTime(of: sim.processIdentifier), cpuTime(of: bus.pid))
    guard process.terminationStatus == 0,
          let report = try JSONSerialization.jsonObject(with: data) as? [String: Any],
          let samples = report["samplesMs"] as? [Double], let cpu = report["cpuSeconds"] as? Double else {
        fail("the bleak client failed (exit \(process.terminationStatus)): \(String(decoding: data, as: UTF8.self))")
    }
    // The fake's and the bus's CPU over bleak's whole run (connect included), scaled to the
    // timed requests' share is not knowable from outside: reported for the whole run.
    return BleakRun(samples: Samples(values: samples.map { .microseconds(Int64($0 * 1000)) }),
                    clientCPU: .microseconds(Int64(cpu * 1_000_000)), bluetoothdCPU: simAfter - simBefore, busCPU: busAfter - busBefore)
}
let bleak: BleakRun? = if let python { try await runBleak(python: python, notify: "start") } else { nil }
let bleakAcquiring: BleakRun? = if let python { try await runBleak(python: python, notify: "acquire") } else { nil }

let demo = try await Demo.start(stateFile: nil, options: DemoOptions(profile: CameraProfile.named("nikon-z")))
_ = try await roundTrips(demo.camera, count: 100)
let demoBefore = ownCPUTime()
let inMemory = try await roundTrips(demo.camera, count: requests)
let demoCPU = ownCPUTime() - demoBefore
try await demo.finish()

func perRequest(_ duration: Duration) -> Double { Samples().milliseconds(duration) * 1000 / Double(requests) }

func row(_ name: String, _ run: ClientRun) -> (String, Samples, Double, Double?, Double?) {
    (name, run.samples, perRequest(run.clientCPU), perRequest(run.bluetoothdCPU), perRequest(run.busCPU))
}
var rows: [(String, Samples, Double, Double?, Double?)] = [
    row("this client, BlueZ sockets", overSockets),
    row("this client, D-Bus messages", overMessages),
]
// bleak's fake and bus columns span its whole run (connect and warm-up too), so they are left out.
if let bleak { rows.append(("bleak 3.1.0, StartNotify (default)", bleak.samples, perRequest(bleak.clientCPU), nil, nil)) }
if let bleakAcquiring { rows.append(("bleak 3.1.0, AcquireNotify", bleakAcquiring.samples, perRequest(bleakAcquiring.clientCPU), nil, nil)) }
rows.append(("in-process simulated link (demo)", inMemory, perRequest(demoCPU), nil, nil))

if printJSON {
    let json: [String: Any] = [
        "requests": requests,
        "clientContextSwitchesPerRequest": ["sockets": overSockets.switchesPerRequest, "messages": overMessages.switchesPerRequest],
        "connectToReadyMs": ["p50": connectTimes.percentile(50), "max": connectTimes.max, "samples": connects],
        "roundTrips": rows.map { row -> [String: Any] in
            var entry: [String: Any] = ["path": row.0, "p50Ms": row.1.percentile(50), "p99Ms": row.1.percentile(99), "maxMs": row.1.max,
                                        "clientCPUMicrosPerRequest": row.2]
            entry["bluetoothdCPUMicrosPerRequest"] = row.3
            entry["busDaemonCPUMicrosPerRequest"] = row.4
            return entry
        },
    ]
    print(String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self))
} else {
    print("Round trip of a request (setting read: Command write out, Event notification back), \(requests) requests")
    func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
    func micros(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }
    print("path".padding(toLength: 36, withPad: " ", startingAt: 0) + column("p50 ms", 9) + column("p99 ms", 9) + column("max ms", 9)
          + "   CPU µs per request:" + column("client", 8) + column("bluetoothd", 12) + column("dbus-daemon", 13))
    for (name, samples, client, bluetoothd, busCPU) in rows {
        print(name.padding(toLength: 36, withPad: " ", startingAt: 0)
              + column(String(format: "%.3f", samples.percentile(50)), 9) + column(String(format: "%.3f", samples.percentile(99)), 9)
              + column(String(format: "%.3f", samples.max), 9) + String(repeating: " ", count: 22)
              + column(micros(client), 8) + column(micros(bluetoothd), 12) + column(micros(busCPU), 13))
    }
    for (name, run) in [("sockets", overSockets), ("messages", overMessages)] {
        print(String(format: "Context switches of the client per request, %@: %.2f (", name, run.switchesPerRequest)
              + run.switchesByThread.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: ", ") + ")")
    }
    if let bleak {
        // The anchor is bleak as it comes (StartNotify); its AcquireNotify row is beside it.
        print(String(format: "Client CPU per request: %.1f µs against bleak's %.1f µs (%.1fx less); p50 %.3f ms against %.3f ms",
                     rows[0].2, perRequest(bleak.clientCPU), perRequest(bleak.clientCPU) / rows[0].2,
                     overSockets.samples.percentile(50), bleak.samples.percentile(50)))
    }
    print(String(format: "Connect to ready (Connect, services resolved, StartNotify, hello), %d connections: p50 %.1f ms, max %.1f ms",
                 connects, connectTimes.percentile(50), connectTimes.max))
}
