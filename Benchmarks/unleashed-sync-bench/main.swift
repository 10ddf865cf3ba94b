// How close together a rig's cameras are fired, for 2, 4 and 8 simulated modules on a private
// dbus-daemon, each driven over BlueZ by its own ModuleCamera. Two spreads per slot:
// - commands: between the first and the last shoot request to reach the fake bluetoothd's D-Bus
//   connection (when its WriteValue call came off the bus);
// - presses: between the first and the last module pressing the shutter, each placed on the
//   host's clock at the instant the simulated module's timeline put it.
// Side by side in the same run: the rig's Volley (one task per camera, released together), the
// same volley with the shot scheduled on each module's own drifting timer (PROTOCOL.md §9.6),
// and a sequential loop of `await camera.shoot()`, as a remote that sends commands one after
// another fires a rig.
//
// Usage: unleashed-sync-bench [--slots N] [--modules 2,4,8] [--trend] [--json]
//   (build with -c release; `make bench-sync`). --trend also prints each row's p50 per 100 slots,
//   to show whether a long run stays as close as a short one.

import BlueZ
import CameraKit
import DBus
import FakeBlueZ
import Foundation
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

let arguments = CommandLine.arguments
let slots = arguments.firstIndex(of: "--slots").flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? 500
let printJSON = arguments.contains("--json")
let printTrend = arguments.contains("--trend")
let sizes = arguments.firstIndex(of: "--modules").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    .map { $0.split(separator: ",").compactMap { Int($0) } } ?? [2, 4, 8]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-sync-bench: \(message)\n".utf8))
    exit(1)
}

guard slots >= 10, !sizes.isEmpty, sizes.allSatisfy({ (2...8).contains($0) }) else {
    fail("usage: unleashed-sync-bench [--slots N (10 or more)] [--modules 2,4,8 (each 2 to 8)] [--trend] [--json]")
}

// MARK: - The rig: 8 modules behind the fake bluetoothd

let bus = try await PrivateBus()
// Bodies on mains power (dummy batteries, as studio rigs use) with large cards: the thousands of
// shots per camera would otherwise empty the simulated batteries or fill the cards.
var body = CameraProfile.all[0]
body.batteryDrain = CameraProfile.BatteryDrain(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
body.cardCapacity = 1_000_000
var configuration = FakeBlueZ.Configuration(modules: sizes.max() ?? 8, profile: body)
// Timers up to 45 ppm apart either way, as crystals are.
configuration.timerDriftPPM = [0: 40, 1: -30, 2: 10, 3: -45, 4: 25, 5: -5, 6: 45, 7: -20]
let fake = FakeBlueZ(configuration: configuration)
try await fake.start(bus: .address(bus.address))
let busAddress = DBusConnection.Bus.address(bus.address)
let addresses = (1...(sizes.max() ?? 8)).map { String(format: "F0:5E:D0:00:00:%02X", $0) }
do {
    let client = try await BlueZClient.open(bus: busAddress)
    let adapter = try await client.adapter(named: nil)
    for address in addresses {
        let device = try await client.findModule(address, on: adapter, serviceUUID: UnleashedV1.gattLayout.service, timeout: .seconds(30))
        try await client.pair(device.path, serviceUUID: UnleashedV1.gattLayout.service, agent: PairingAgent { _ in .accept })
    }
    await client.close()
} catch {
    fail("pairing with the simulated modules failed: \(error)")
}
var cameras: [RigCamera] = []
for (index, address) in addresses.enumerated() {
    let connection = ModuleConnection(provider: BlueZLinkProvider(bus: busAddress, module: address))
    let camera = try await ModuleCamera(connection: connection, connectTimeout: .seconds(60), name: "camera\(index + 1)")
    // The shortest exposure, so that a slot is the command path and the camera's report.
    _ = try await camera.set(SettingValue(setting: .shutterSpeed, text: "1/8000") ?? .shutterSpeed(.bulb))
    cameras.append(RigCamera(name: "camera\(index + 1)", camera: camera))
}

// MARK: - Measuring

/// Whether `packet` is the start packet of a `shoot` request (PROTOCOL.md §3, §4).
func isShootRequest(_ packet: [UInt8]) -> Bool {
    packet.count >= 7 && packet[0] == 0x00 && packet[3] == 0x01 && packet[6] == Opcode.shoot.rawValue
}

/// The spread, in milliseconds, between the first and the last module's first shoot request
/// logged at or after `mark`; nil unless every module of `members` got one.
func spreadAtBoundary(since mark: UInt64, members: [RigCamera]) async -> Double? {
    let wanted = Set(members.indices.map { addresses[$0] })
    var first: [String: UInt64] = [:]
    for write in await fake.writes(since: mark) where wanted.contains(write.module) && isShootRequest(write.packet) {
        first[write.module] = first[write.module] ?? write.nanoseconds
    }
    guard first.count == wanted.count, let low = first.values.min(), let high = first.values.max() else { return nil }
    return Double(high - low) / 1e6
}

/// The spread, in milliseconds, between the first and the last module's first press at or after
/// `mark`, and the simulator's largest lateness in getting to one; nil unless every module pressed.
func pressSpread(since mark: UInt64, members: [RigCamera]) -> (spread: Double, lateness: Double)? {
    let wanted = Set(members.indices.map { addresses[$0] })
    var first: [String: FakeBlueZ.LoggedPress] = [:]
    for press in fake.presses(since: mark) where wanted.contains(press.module) { first[press.module] = first[press.module] ?? press }
    let instants = first.values.map(\.nanoseconds)
    guard first.count == wanted.count, let low = instants.min(), let high = instants.max() else { return nil }
    return (Double(high - low) / 1e6, Double(first.values.map(\.latenessNanoseconds).max() ?? 0) / 1e6)
}

struct Result {
    var spreads: [Double] = []
    var pressSpreads: [Double] = []
    /// How late the simulated modules got to a press, the largest per slot.
    var pressLateness: [Double] = []
    /// The volley's own measure: between the first and the last camera's task starting.
    var taskStarts: [Double] = []
    var failedShots = 0
    /// Each distinct failure, with how often it came.
    var failures: [String: Int] = [:]
    var unmeasured = 0
    var seconds = 0.0
}

enum Method: String, CaseIterable {
    case volley = "rig volley"
    case scheduled = "scheduled volley"
    case sequential = "sequential loop"
}

func measure(_ method: Method, members: [RigCamera], slots: Int) async -> Result {
    var result = Result()
    let started = ContinuousClock.now
    for _ in 0..<slots {
        _ = await Rig.prepareShot(members)
        var failed = 0
        let mark: UInt64
        switch method {
        case .volley:
            let volley = await Volley.prepare(members) { camera throws(CameraError) in try await camera.shoot() }
            mark = monotonicNanoseconds()
            volley.release()
            let outcomes = await volley.outcomes()
            for outcome in outcomes {
                if case .failure(let error)? = outcome.result { result.failures["\(outcome.name): \(error)", default: 0] += 1 }
                if case .success = outcome.result {} else { failed += 1 }
            }
            if let starts = VolleySpread(outcomes).commands { result.taskStarts.append(Double(starts.wholeMicroseconds) / 1000) }
        case .scheduled:
            guard let instant = await Rig.commonFiringInstant(members) else { fail("a simulated module does not schedule shots") }
            let volley = await Volley.prepare(members) { camera throws(CameraError) in try await camera.shoot(at: instant) }
            mark = monotonicNanoseconds()
            volley.release()
            for outcome in await volley.outcomes() {
                if case .failure(let error)? = outcome.result { result.failures["\(outcome.name): \(error)", default: 0] += 1 }
                if case .success = outcome.result {} else { failed += 1 }
            }
        case .sequential:
            mark = monotonicNanoseconds()
            for member in members {
                do { _ = try await member.camera.shoot() } catch {
                    result.failures["\(member.name): \(error)", default: 0] += 1
                    failed += 1
                }
            }
        }
        result.failedShots += failed
        if let spread = await spreadAtBoundary(since: mark, members: members), let presses = pressSpread(since: mark, members: members) {
            result.spreads.append(spread)
            result.pressSpreads.append(presses.spread)
            result.pressLateness.append(presses.lateness)
        } else {
            result.unmeasured += 1
        }
        // The cameras' buffers empty between slots, as they would at a time-lapse interval.
        try? await Task.sleep(for: .milliseconds(20))
    }
    result.seconds = Double((ContinuousClock.now - started).components.seconds)
    return result
}

let ticksBefore = cpuTicks()
var rows: [(modules: Int, method: Method, result: Result)] = []
for size in sizes {
    let members = Array(cameras.prefix(size))
    _ = await measure(.volley, members: members, slots: 5)  // warm-up
    for method in Method.allCases {
        rows.append((size, method, await measure(method, members: members, slots: slots)))
    }
}
let ticksAfter = cpuTicks()
let steal = (ticksAfter.steal - ticksBefore.steal) / max(ticksAfter.total - ticksBefore.total, 1) * 100
for member in cameras { await member.camera.close() }
await fake.stop()
bus.stop()

// MARK: - Report

if printJSON {
    let entries: [JSONValue] = rows.map { row in
        [
            "modules": .integer(Int64(row.modules)), "method": .string(row.method.rawValue),
            "p50Ms": .number(percentile(50, row.result.spreads)), "p99Ms": .number(percentile(99, row.result.spreads)),
            "maxMs": .number(row.result.spreads.max() ?? .nan), "slots": .integer(Int64(row.result.spreads.count)),
            "failedShots": .integer(Int64(row.result.failedShots)),
            "taskStartSpreadP50Ms": .number(percentile(50, row.result.taskStarts)), "taskStartSpreadP99Ms": .number(percentile(99, row.result.taskStarts)), "unmeasuredSlots": .integer(Int64(row.result.unmeasured)),
            "pressP50Ms": .number(percentile(50, row.result.pressSpreads)), "pressP99Ms": .number(percentile(99, row.result.pressSpreads)),
            "pressMaxMs": .number(row.result.pressSpreads.max() ?? .nan), "simulatorLatenessP99Ms": .number(percentile(99, row.result.pressLateness)),
        ]
    }
    let document = JSONValue.object(["slotsPerRow": .integer(Int64(slots)), "stealPercent": .number(steal), "rows": .array(entries)])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(document), as: UTF8.self))
} else {
    print("Spread per slot: commands at the D-Bus boundary (first to last shoot request taken off the bus by the fake bluetoothd),")
    print("presses at the modules (first to last shutter press, on the host's clock)")
    print("\(slots) slots per row; host CPU steal during the run \(String(format: "%.1f", steal)) %")
    func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
    func triple(_ values: [Double]) -> String {
        String(format: "%.3f / %.3f / %.3f", percentile(50, values), percentile(99, values), values.max() ?? .nan)
    }
    print("modules  method            " + column("commands p50/p99/max ms", 28) + column("presses p50/p99/max ms", 28)
          + column("failed", 8) + column("slots", 7) + column("run s", 7) + column("task starts p99", 17) + column("sim late p99", 14))
    for row in rows {
        let result = row.result
        print(column(String(row.modules), 7) + "  " + row.method.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
              + column(triple(result.spreads), 28) + column(triple(result.pressSpreads), 28)
              + column(String(result.failedShots), 8) + column(String(result.spreads.count), 7) + column(String(format: "%.0f", result.seconds), 7)
              + column(result.taskStarts.isEmpty ? "-" : String(format: "%.3f", percentile(99, result.taskStarts)), 17)
              + column(String(format: "%.3f", percentile(99, result.pressLateness)), 14))
    }
    if printTrend {
        print("p50 per 100 slots (commands | presses), ms:")
        for row in rows {
            func chunks(_ values: [Double]) -> String {
                stride(from: 0, to: values.count, by: 100).map {
                    String(format: "%.2f", percentile(50, Array(values[$0..<min($0 + 100, values.count)])))
                }.joined(separator: " ")
            }
            print(column(String(row.modules), 7) + "  " + row.method.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)
                  + chunks(row.result.spreads) + " | " + chunks(row.result.pressSpreads))
        }
    }
    for row in rows where !row.result.failures.isEmpty {
        print("failures, \(row.modules) modules, \(row.method.rawValue):")
        for (failure, count) in row.result.failures.sorted(by: { $0.key < $1.key }) { print("  \(count) × \(failure)") }
    }
}
