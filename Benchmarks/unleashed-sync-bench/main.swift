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
// A mixed row fires a GoPro, a Sony, a Canon, a Fujifilm and a Nikon (each through its own remote
// protocol, behind the same fake bluetoothd) with one module: its commands are each brand's
// trigger write (GoPro's shutter on, Sony's full press, Canon's release, Fujifilm's press, Nikon's
// shutter), its presses are not measured (the simulated cameras keep no press clock).
//
// Usage: unleashed-sync-bench [--slots N] [--modules 2,4,8] [--trend] [--json]
//   (build with -c release; `make bench-sync`). --trend also prints each row's p50 per 100 slots,
//   to show whether a long run stays as close as a short one.

import BlueZ
import CameraKit
import CameraProtocols
import CameraRemote
import DBus
import FakeBlueZ
import Foundation
import JSON
import UnleashedKit
import UnleashedProtocol
import SimulatedCameras
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

// Bodies on mains power (dummy batteries, as studio rigs use) with large cards: the thousands of
// shots per camera would otherwise empty the simulated batteries or fill the cards.
var body = CameraProfile.all[0]
body.batteryDrain = CameraProfile.BatteryDrain(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
body.cardCapacity = 1_000_000
var configuration = FakeBlueZ.Configuration(modules: sizes.max() ?? 8, profile: body)
let brands = CameraBrand.allCases
configuration.cameras = brands.map(FakeBlueZ.CameraSource.brand)
let cameraAddresses = brands.indices.map { SimulatedCameraCatalog.address(index: $0) }
// Timers up to 45 ppm apart either way, as crystals are.
configuration.timerDriftPPM = [0: 40, 1: -30, 2: 10, 3: -45, 4: 25, 5: -5, 6: 45, 7: -20]
let bluez = try await InProcessBlueZ.start(configuration)
let (bus, fake, busAddress) = (bluez.bus, bluez.fake, bluez.address)
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
/// One camera of each brand, paired (with its pairing mode opened, as a person would) and opened
/// through its own remote protocol.
var brandCameras: [RigCamera] = []
do {
    let client = try await BlueZClient.open(bus: busAddress)
    let adapter = try await client.adapter(named: nil)
    for (brand, address) in zip(brands, cameraAddresses) {
        _ = await fake.setCamera(address: address, pairingOpen: true)
        let device = try await client.findDevice(address, on: adapter, serviceUUID: nil, timeout: .seconds(30))
        guard let known = CameraAdvertisement.remoteProtocol(of: brand),
              let driver = RemoteDrivers.driver(for: brand, recognized: device.camera) else { fail("no driver for \(brand)") }
        if known.requiresBond {
            try await client.pair(device.path, serviceUUID: known.services.first?.uuid ?? "", agent: PairingAgent { _ in .accept })
            await client.disconnect(device.path)
        }
        let camera = try await BLECamera.open(name: brand.rawValue, provider: BlueZLinkProvider(bus: busAddress, peer: .camera(address, remote: known)),
                                              driver: driver, readyTimeout: .seconds(60))
        brandCameras.append(RigCamera(name: brand.rawValue, camera: camera))
    }
    await client.close()
} catch {
    fail("opening the simulated cameras failed: \(error)")
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

/// The write that fires each brand's camera (Protocol/cameras/<brand>.json).
let triggers: [CameraBrand: [UInt8]] = [.gopro: [0x03, 0x01, 0x01, 0x01], .sony: [0x01, 0x09], .canon: [0x8C],
                                        .fujifilm: [0x02, 0x00], .nikon: [0x02, 0x02]]

/// Whether `packet`, written to `address`, fires its camera: a module's shoot request, or the
/// brand's trigger for a camera.
func isTrigger(_ packet: [UInt8], to address: String) -> Bool {
    guard let index = cameraAddresses.firstIndex(of: address) else { return isShootRequest(packet) }
    return triggers[brands[index]] == packet
}

/// The addresses of `members`, modules and cameras alike.
func address(of member: RigCamera) -> String {
    if let brand = CameraBrand(rawValue: member.name), let index = brands.firstIndex(of: brand) { return cameraAddresses[index] }
    // Modules are named camera1, camera2, … after their address's place.
    return addresses[(Int(member.name.dropFirst("camera".count)) ?? 1) - 1]
}

/// The spread, in milliseconds, between the first and the last body's first trigger logged at
/// or after `mark`; nil unless every body of `members` got one.
func spreadAtBoundary(since mark: UInt64, members: [RigCamera]) async -> Double? {
    let wanted = Set(members.map(address(of:)))
    var first: [String: UInt64] = [:]
    for write in await fake.writes(since: mark) where wanted.contains(write.module) && isTrigger(write.packet, to: write.module) {
        first[write.module] = first[write.module] ?? write.nanoseconds
    }
    guard first.count == wanted.count, let low = first.values.min(), let high = first.values.max() else { return nil }
    return Double(high - low) / 1e6
}

/// The spread, in milliseconds, between the first and the last module's first press at or after
/// `mark`, and the simulator's largest lateness in getting to one; nil unless every module pressed.
func pressSpread(since mark: UInt64, members: [RigCamera]) -> (spread: Double, lateness: Double)? {
    let wanted = Set(members.map(address(of:)))
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

/// Measures `slots` slots of `method`; the presses only where every body logs them (modules).
func measure(_ method: Method, members: [RigCamera], slots: Int, pressesMeasured: Bool = true) async -> Result {
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
        if let spread = await spreadAtBoundary(since: mark, members: members),
           let presses = pressesMeasured ? pressSpread(since: mark, members: members) : (spread: .nan, lateness: .nan) {
            result.spreads.append(spread)
            if pressesMeasured {
                result.pressSpreads.append(presses.spread)
                result.pressLateness.append(presses.lateness)
            }
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
var rows: [(modules: String, method: Method, result: Result)] = []
for size in sizes {
    let members = Array(cameras.prefix(size))
    _ = await measure(.volley, members: members, slots: 5)  // warm-up
    for method in Method.allCases {
        rows.append((String(size), method, await measure(method, members: members, slots: slots)))
    }
}
// Five brands and a module: a camera remote cannot schedule a shot on its own clock.
let mixed = brandCameras + [cameras[0]]
_ = await measure(.volley, members: mixed, slots: 5, pressesMeasured: false)
for method in [Method.volley, .sequential] {
    rows.append(("mixed", method, await measure(method, members: mixed, slots: slots, pressesMeasured: false)))
}
let ticksAfter = cpuTicks()
let steal = (ticksAfter.steal - ticksBefore.steal) / max(ticksAfter.total - ticksBefore.total, 1) * 100
for member in cameras + brandCameras { await member.camera.close() }
await fake.stop()
bus.stop()

// MARK: - Report

if printJSON {
    let entries: [JSONValue] = rows.map { row in
        [
            "modules": Int64(row.modules).map(JSONValue.integer) ?? .string(row.modules), "method": .string(row.method.rawValue),
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
        values.isEmpty ? "-" : String(format: "%.3f / %.3f / %.3f", percentile(50, values), percentile(99, values), values.max() ?? .nan)
    }
    print("modules  method            " + column("commands p50/p99/max ms", 28) + column("presses p50/p99/max ms", 28)
          + column("failed", 8) + column("slots", 7) + column("run s", 7) + column("task starts p99", 17) + column("sim late p99", 14))
    for row in rows {
        let result = row.result
        print(column(row.modules, 7) + "  " + row.method.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)
              + column(triple(result.spreads), 28) + column(triple(result.pressSpreads), 28)
              + column(String(result.failedShots), 8) + column(String(result.spreads.count), 7) + column(String(format: "%.0f", result.seconds), 7)
              + column(result.taskStarts.isEmpty ? "-" : String(format: "%.3f", percentile(99, result.taskStarts)), 17)
              + column(result.pressLateness.isEmpty ? "-" : String(format: "%.3f", percentile(99, result.pressLateness)), 14))
    }
    if printTrend {
        print("p50 per 100 slots (commands | presses), ms:")
        for row in rows {
            func chunks(_ values: [Double]) -> String {
                stride(from: 0, to: values.count, by: 100).map {
                    String(format: "%.2f", percentile(50, Array(values[$0..<min($0 + 100, values.count)])))
                }.joined(separator: " ")
            }
            print(column(row.modules, 7) + "  " + row.method.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)
                  + chunks(row.result.spreads) + " | " + chunks(row.result.pressSpreads))
        }
    }
    for row in rows where !row.result.failures.isEmpty {
        print("failures, \(row.modules) modules, \(row.method.rawValue):")
        for (failure, count) in row.result.failures.sorted(by: { $0.key < $1.key }) { print("  \(count) × \(failure)") }
    }
}
