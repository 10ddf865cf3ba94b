// Recovery from lost packets: the same time-lapse (500 ms interval by default) on the demo link,
// the simulated module and radio in this process, on the real monotonic clock, run three times in
// one go: on a clean link, then with a share of packets dropped each way (`--faults`, written as
// `--demo-faults` takes it) twice, once sending an unanswered request again after a fixed 1 s as
// the session did before, once after the timeout it learns from the link's round trips. For each:
// slots taken, failed and skipped (with the reasons the journal gives), requests sent again, and
// how late the shot commands went out against their deadlines (p50, p99, max).
//
// Usage: unleashed-faults-bench [--slots N] [--interval-ms MS] [--faults PLAN] [--seed S] [--json]
//        (build with -c release; `make bench-faults`)

import CameraKit
import Foundation
import Intervalometer
import UnleashedKit
import UnleashedSimulator

let arguments = CommandLine.arguments
func value(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let slots = value("--slots").flatMap(Int.init) ?? 120
let intervalMs = value("--interval-ms").flatMap(Int64.init) ?? 500
let seed = value("--seed").flatMap(UInt64.init) ?? 1
let faultText = value("--faults") ?? "drop=0.05"
let printJSON = arguments.contains("--json")
let faults: DemoFaults
do {
    faults = try DemoFaults(parsing: faultText)
} catch {
    FileHandle.standardError.write(Data("unleashed-faults-bench: --faults: \(error)\n".utf8))
    exit(64)
}
guard slots >= 1, intervalMs >= 1 else {
    FileHandle.standardError.write(Data("usage: unleashed-faults-bench [--slots N] [--interval-ms MS] [--faults PLAN] [--seed S] [--json]\n".utf8))
    exit(64)
}

/// A request unanswered for 1 s is sent again, every second: the session's fixed wait before
/// it learned the link's round trips, for the row to compare with.
let fixedSecond = RoundTripEstimator.Bounds(minimum: .seconds(1), maximum: .seconds(1), initial: .seconds(1), granularity: .milliseconds(1))

struct Scenario {
    let name: String
    let faults: DemoFaults
    let retransmission: RoundTripEstimator.Bounds
}

/// What one run measured.
struct Measurement {
    let scenario: String
    let summary: RunSummary
    /// Skipped and failed records by the reason the journal gives.
    let reasons: [(reason: String, count: Int)]
    let figures: SessionFigures?
}

/// One time-lapse on the demo link: the simulated module and radio, and the same connection,
/// session, camera and engine as `unleashed --demo timelapse`.
func run(_ scenario: Scenario) async throws -> Measurement {
    let module = VirtualModule(camera: VirtualCamera(profile: CameraProfile.all[0]), seed: seed)
    let radio = SimulatedRadio(module: module, faults: scenario.faults.link, seed: seed)
    let connection = ModuleConnection(provider: radio, timing: ConnectionTiming(retransmission: scenario.retransmission), seed: seed)
    let faultPlan = scenario.faults.schedule(on: radio)
    defer { faultPlan.cancel() }
    let camera = try await ModuleCamera(connection: connection, name: module.info.serialNumber)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faults-bench-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let journal = try SQLiteJournal(path: directory.appendingPathComponent("journal.sqlite").path)
    let timelapse = Timelapse(plan: RunPlan(intervalMs: intervalMs, stop: .frames(slots)), camera: camera, journal: journal,
                              clock: ContinuousClock(), wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
    let ending = try await timelapse.start(cameraName: "bench")
    let records = try journal.frames(of: ending.run.id)
    let figures = await connection.sessionFigures()
    await camera.close()
    let reasons = Dictionary(grouping: records.filter { $0.outcome != .taken }) { "\($0.outcome): \($0.error ?? "no reason given")" }
        .map { (reason: $0.key, count: $0.value.count) }
        .sorted { ($0.count, $1.reason) > ($1.count, $0.reason) }
    return Measurement(scenario: scenario.name, summary: RunSummary(frames: records), reasons: reasons, figures: figures)
}

func milliseconds(_ micros: Int64?) -> String { micros.map { String(format: "%.1f", Double($0) / 1000) } ?? "-" }
func milliseconds(_ duration: Duration?) -> String {
    duration.map { String(format: "%.1f", Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15) } ?? "-"
}

let scenarios = [
    Scenario(name: "no faults", faults: DemoFaults(), retransmission: .moduleLink),
    Scenario(name: "\(faultText), fixed 1 s (before)", faults: faults, retransmission: fixedSecond),
    Scenario(name: "\(faultText), RTO from RTT", faults: faults, retransmission: .moduleLink),
]
var results: [Measurement] = []
do {
    for scenario in scenarios { results.append(try await run(scenario)) }
} catch {
    FileHandle.standardError.write(Data("unleashed-faults-bench: \(error)\n".utf8))
    exit(1)
}

if printJSON {
    func json(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
    func number(_ value: Int64?) -> String { value.map(String.init) ?? "null" }
    let rows = results.map { result in
        let summary = result.summary
        let reasons = result.reasons.map { "{\"reason\":\(json($0.reason)),\"count\":\($0.count)}" }.joined(separator: ",")
        return "{\"scenario\":\(json(result.scenario)),\"taken\":\(summary.taken),\"failed\":\(summary.failed),\"skipped\":\(summary.skipped),"
            + "\"retransmissions\":\(result.figures.map { String($0.retransmissions) } ?? "null"),"
            + "\"p50LatenessMicros\":\(number(summary.p50LatenessMicros)),\"p99LatenessMicros\":\(number(summary.p99LatenessMicros)),"
            + "\"maxLatenessMicros\":\(number(summary.maxLatenessMicros)),\"reasons\":[\(reasons)]}"
    }
    print("{\"slots\":\(slots),\"intervalMs\":\(intervalMs),\"seed\":\(seed),\"results\":[\(rows.joined(separator: ","))]}")
} else {
    print("\(slots) slots at \(intervalMs) ms on the demo link, seed \(seed); lateness of the shot command against its deadline, in ms")
    print("")
    let columns = ["taken", "failed", "skipped", "resent", "SRTT", "RTO", "p50", "p99", "max"]
    print("scenario".padding(toLength: 34, withPad: " ", startingAt: 0) + columns.map { String(repeating: " ", count: 9 - $0.count) + $0 }.joined())
    for result in results {
        let summary = result.summary
        let cells = [
            "\(summary.taken)", "\(summary.failed)", "\(summary.skipped)", result.figures.map { "\($0.retransmissions)" } ?? "-",
            milliseconds(result.figures?.roundTrips.smoothedRoundTrip), milliseconds(result.figures?.roundTrips.timeout),
            milliseconds(summary.p50LatenessMicros), milliseconds(summary.p99LatenessMicros), milliseconds(summary.maxLatenessMicros),
        ]
        print(result.scenario.padding(toLength: 34, withPad: " ", startingAt: 0)
            + cells.map { String(repeating: " ", count: max(1, 9 - $0.count)) + $0 }.joined())
    }
    for result in results where !result.reasons.isEmpty {
        print("")
        print("\(result.scenario): slots not taken")
        for (reason, count) in result.reasons { print(String(format: "%5d  ", count) + reason) }
    }
    print("")
    print("resent: requests sent again during the run; SRTT, RTO: the link's smoothed round trip and its wait before")
    print("a request is sent again, at the end of the run (ms)")
}
