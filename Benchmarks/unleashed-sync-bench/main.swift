// How close together a rig's cameras are fired: the spread per slot between the first and the
// last shoot request to reach the fake bluetoothd's D-Bus connection (when its WriteValue call
// came off the bus), for 2, 4 and 8 simulated modules on a private dbus-daemon, each driven
// over BlueZ by its own ModuleCamera. Side by side in the same run: the rig's Volley (one task
// per camera, released together) and a sequential loop of `await camera.shoot()`, which is how
// a remote that sends commands one after another fires a rig.
//
// Usage: unleashed-sync-bench [--slots N] [--json]   (build with -c release; `make bench-sync`)

import BlueZ
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
let sizes = [2, 4, 8]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-sync-bench: \(message)\n".utf8))
    exit(1)
}

guard slots >= 10 else { fail("usage: unleashed-sync-bench [--slots N (10 or more)] [--json]") }

// MARK: - The rig: 8 modules behind the fake bluetoothd

let bus = try await PrivateBus()
// Bodies on mains power (dummy batteries, as studio rigs use) with large cards: the thousands of
// shots per camera would otherwise empty the simulated batteries or fill the cards.
var body = CameraProfile.all[0]
body.batteryDrain = CameraProfile.BatteryDrain(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
body.cardCapacity = 1_000_000
let fake = FakeBlueZ(configuration: FakeBlueZ.Configuration(modules: sizes.max() ?? 8, profile: body))
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

struct Result {
    var spreads: [Double] = []
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
        if let spread = await spreadAtBoundary(since: mark, members: members) {
            result.spreads.append(spread)
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

// MARK: - Report

if printJSON {
    let entries: [JSONValue] = rows.map { row in
        [
            "modules": .integer(Int64(row.modules)), "method": .string(row.method.rawValue),
            "p50Ms": .number(percentile(50, row.result.spreads)), "p99Ms": .number(percentile(99, row.result.spreads)),
            "maxMs": .number(row.result.spreads.max() ?? .nan), "slots": .integer(Int64(row.result.spreads.count)),
            "failedShots": .integer(Int64(row.result.failedShots)),
            "taskStartSpreadP50Ms": .number(percentile(50, row.result.taskStarts)), "taskStartSpreadP99Ms": .number(percentile(99, row.result.taskStarts)), "unmeasuredSlots": .integer(Int64(row.result.unmeasured)),
        ]
    }
    let document = JSONValue.object(["slotsPerRow": .integer(Int64(slots)), "stealPercent": .number(steal), "rows": .array(entries)])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(document), as: UTF8.self))
} else {
    print("Command spread per slot at the D-Bus boundary (first to last shoot request taken off the bus by the fake bluetoothd)")
    print("\(slots) slots per row; host CPU steal during the run \(String(format: "%.1f", steal)) %")
    func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
    print("modules  method            " + column("p50 ms", 9) + column("p99 ms", 9) + column("max ms", 9) + column("failed shots", 14)
          + column("slots", 7) + column("run s", 7) + column("task starts p50/p99 ms", 24))
    for row in rows {
        let spreads = row.result.spreads
        print(column(String(row.modules), 7) + "  " + row.method.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
              + column(String(format: "%.3f", percentile(50, spreads)), 9) + column(String(format: "%.3f", percentile(99, spreads)), 9)
              + column(String(format: "%.3f", spreads.max() ?? .nan), 9) + column(String(row.result.failedShots), 14)
              + column(String(spreads.count), 7) + column(String(format: "%.0f", row.result.seconds), 7)
              + column(row.result.taskStarts.isEmpty ? "-" : String(format: "%.3f / %.3f", percentile(50, row.result.taskStarts),
                                                                     percentile(99, row.result.taskStarts)), 24))
    }
    for row in rows where !row.result.failures.isEmpty {
        print("failures, \(row.modules) modules, \(row.method.rawValue):")
        for (failure, count) in row.result.failures.sorted(by: { $0.key < $1.key }) { print("  \(count) × \(failure)") }
    }
}
