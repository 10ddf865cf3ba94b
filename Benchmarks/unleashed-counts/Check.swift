import Foundation
import UnleashedTestSupport

/// What one request costs: heap allocations (calls of malloc and its kin, Swift's and libdbus's
/// alike), instructions executed, every thread of the process together, and hand-overs to Swift's
/// shared pool (calls of `swift_task_enqueueGlobal`: a job queued for the pool's threads, which
/// wakes one when none is awake). Each hand-over costs a thread switch or two outside valgrind,
/// which the instruction count does not show: on a virtual machine they were most of a request.
struct Counts: Codable, Equatable {
    var allocations: Double
    var instructions: Double
    var poolHandOvers: Double
}

/// One workload's line in the thresholds file: what was measured when it was recorded, and the
/// most a request may cost before the check fails.
struct Threshold: Codable {
    var measured: Counts
    var limit: Counts
}

struct ThresholdsFile: Codable {
    var toolchain: String
    var note: String
    var workloads: [String: Threshold]
}

/// The Swift release the program was built with: counts change with the compiler, so each
/// toolchain has a file of its own.
let toolchain: String = {
    #if compiler(>=6.5)
    "6.5"
    #elseif compiler(>=6.4)
    "6.4"
    #elseif compiler(>=6.3)
    "6.3"
    #else
    "older"
    #endif
}()

/// Requests in the shorter of the two runs; the longer makes twice as many.
let countedRequests = 100
/// How much a count may grow over the recorded one before the check fails. The codec runs on one
/// thread and its counts are exact; where threads take part, how often they sleep and wake
/// depends on the machine's load, which moved the counts by up to 7 % (session) and 10 %
/// (BlueZ) between runs here. The allowances catch a step (a task, a copy or a hop more per
/// request), not a drift of a few percent.
let allowances: [String: Double] = ["codec": 0.05, "session": 0.15, "bluez": 0.2, "bluez-messages": 0.2]

/// The function whose calls count as hand-overs to the shared pool.
let poolEnqueue = "swift_task_enqueueGlobal"

/// The functions whose calls count as allocations.
let allocators: Set<String> = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"]

/// Runs every workload under callgrind, prints the counts per request beside the limits, and
/// returns whether every count is within its limit (with `update`, writes the file instead).
func check(update: Bool) async throws -> Bool {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let file = URL(fileURLWithPath: "Benchmarks/unleashed-counts/thresholds-\(toolchain).json")
    let recorded = try? JSONDecoder().decode(ThresholdsFile.self, from: Data(contentsOf: file))
    if !update && recorded == nil {
        fail("no thresholds for Swift \(toolchain) at \(file.path) (run from the repository's root; record them with `unleashed-counts check --update`)")
    }

    // The fake bluetoothd and its bus run outside valgrind, for the bluez workload only.
    let bus = try await PrivateBus()
    let simPath = directory.appendingPathComponent("unleashed-sim").path
    let (sim, ready) = try await launchReadingFirstLine(simPath, ["bluez", "--bus", bus.address, "--modules", "1"])
    guard ready == "ready" else { fail("unleashed-sim bluez did not start (build it: swift build -c release --static-swift-stdlib --product unleashed-sim)") }
    defer { kill(sim.processIdentifier, SIGKILL) }

    // Pair once before counting: otherwise the first (shorter) run pays for the pairing, and
    // the difference between the runs is short by its cost, about 12 allocations per request.
    let pairing = Process()
    pairing.executableURL = directory.appendingPathComponent("unleashed-counts")
    pairing.arguments = ["run", "bluez", "0", bus.address]
    try ChildProcesses.run(pairing)
    pairing.waitUntilExit()
    guard pairing.terminationStatus == 0 else { fail("pairing with the fake bluetoothd's module failed (exit \(pairing.terminationStatus))") }

    // A check measures once. A record measures three times and keeps the highest of each count,
    // so that a limit is not set from a run that happened to wake its threads less.
    var measured: [String: Counts] = [:]
    for workload in ["codec", "session", "bluez", "bluez-messages"] {
        for _ in 0..<(update ? 3 : 1) {
            let short = try callgrind(workload, requests: countedRequests, bus: bus.address, directory: directory)
            let long = try callgrind(workload, requests: 2 * countedRequests, bus: bus.address, directory: directory)
            let counts = Counts(allocations: (long.allocations - short.allocations) / Double(countedRequests),
                                instructions: (long.instructions - short.instructions) / Double(countedRequests),
                                poolHandOvers: (long.poolHandOvers - short.poolHandOvers) / Double(countedRequests))
            let highest = measured[workload] ?? counts
            measured[workload] = Counts(allocations: max(highest.allocations, counts.allocations),
                                        instructions: max(highest.instructions, counts.instructions),
                                        poolHandOvers: max(highest.poolHandOvers, counts.poolHandOvers))
        }
    }

    if update {
        let thresholds = ThresholdsFile(
            toolchain: toolchain,
            note: "Per request, from `unleashed-counts check --update` (release build, valgrind callgrind). A limit is the highest of three measurements plus the workload's allowance, rounded up: codec 5 %, session 15 %, bluez and bluez-messages 20 % (see Check.swift). Pool hand-overs are calls of swift_task_enqueueGlobal, and their limit has half a hand-over more.",
            workloads: Dictionary(uniqueKeysWithValues: measured.map { workload, counts in
                let allowance = allowances[workload] ?? 0.05
                return (workload, Threshold(measured: counts, limit: Counts(allocations: (counts.allocations * (1 + allowance)).rounded(.up),
                                                                            instructions: (counts.instructions * (1 + allowance)).rounded(.up),
                                                                            poolHandOvers: handOverLimit(counts.poolHandOvers, allowance))))
            }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try (encoder.encode(thresholds) + Data("\n".utf8)).write(to: file)
        print("unleashed-counts: wrote \(file.path)")
    }

    print("Per request (Swift \(toolchain), release):   allocations (limit)       instructions (limit)      pool hand-overs (limit)")
    var passed = true
    for (workload, counts) in measured.sorted(by: { $0.key < $1.key }) {
        let limit = (update ? nil : recorded?.workloads[workload]?.limit)
        let over = limit.map {
            counts.allocations > $0.allocations || counts.instructions > $0.instructions || counts.poolHandOvers > $0.poolHandOvers
        } ?? false
        if !update && limit == nil { passed = false }
        if over { passed = false }
        func text(_ value: Double, _ bound: Double?) -> String {
            String(format: "%10.1f", value) + (bound.map { String(format: " (%.0f)", $0) } ?? " (none)")
        }
        print(workload.padding(toLength: 42, withPad: " ", startingAt: 0)
              + text(counts.allocations, limit?.allocations).padding(toLength: 26, withPad: " ", startingAt: 0)
              + text(counts.instructions, limit?.instructions).padding(toLength: 26, withPad: " ", startingAt: 0)
              + text(counts.poolHandOvers, limit?.poolHandOvers) + (over ? "   OVER" : ""))
    }
    if !passed {
        print("""
            unleashed-counts: a count grew past its limit. Find what the request now does more of
            (valgrind --tool=callgrind Benchmarks/.build/release/unleashed-counts run WORKLOAD 200, then
            callgrind_annotate); if the growth is deliberate, record it with
            `make counts-update` and say why in the commit.
            """)
    }
    return passed
}

/// The most hand-overs a request may make: the allowance and half a hand-over more, rounded up.
/// Where a request makes none, a timer (a keep-alive) going off in one run and not in the other
/// moves the count by a few hundredths; one hand-over more per request is what must fail.
func handOverLimit(_ measured: Double, _ allowance: Double) -> Double {
    (measured * (1 + allowance) + 0.5).rounded(.up)
}

/// Runs one workload under callgrind and returns its whole-process totals.
func callgrind(_ workload: String, requests: Int, bus: String, directory: URL) throws -> Counts {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-counts-\(UUID().uuidString).out")
    defer { try? FileManager.default.removeItem(at: output) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/valgrind")
    process.arguments = ["--tool=callgrind", "--callgrind-out-file=\(output.path)", "--log-file=/dev/null",
                         directory.appendingPathComponent("unleashed-counts").path, "run", workload, String(requests), bus]
    try ChildProcesses.run(process)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("\(workload) with \(requests) requests failed under valgrind (exit \(process.terminationStatus))") }
    return try totals(ofCallgrindOutput: String(contentsOf: output, encoding: .utf8))
}

/// Instructions (the `summary:` line), calls of the allocators and of the pool's enqueue, from
/// callgrind's output file.
/// Functions are named once, `cfn=(id) name`, and by `(id)` alone afterwards.
func totals(ofCallgrindOutput text: String) throws -> Counts {
    var names: [Substring: Substring] = [:]
    var callee: Substring?
    var instructions: Double?
    var allocations = 0.0
    var poolHandOvers = 0.0
    for line in text.split(separator: "\n") {
        if line.hasPrefix("cfn=") || line.hasPrefix("fn=") {
            let reference = line.drop { $0 != "=" }.dropFirst()
            let id = reference.prefix { $0 != " " }
            let name = reference.drop { $0 != " " }.dropFirst()
            if !name.isEmpty { names[id] = name }
            callee = line.hasPrefix("cfn=") ? names[id] ?? name : nil
        } else if line.hasPrefix("calls="), let callee, allocators.contains(String(callee)) {
            allocations += Double(line.dropFirst(6).prefix { $0 != " " }) ?? 0
        } else if line.hasPrefix("calls="), callee == Substring(poolEnqueue) {
            poolHandOvers += Double(line.dropFirst(6).prefix { $0 != " " }) ?? 0
        } else if line.hasPrefix("summary:") {
            instructions = Double(line.dropFirst(8).trimmingCharacters(in: .whitespaces))
        }
    }
    guard let instructions else { fail("callgrind's output has no summary line") }
    return Counts(allocations: allocations, instructions: instructions, poolHandOvers: poolHandOvers)
}
