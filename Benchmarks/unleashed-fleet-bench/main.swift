// make bench-fleet: how close together a fleet shot fires across hosts (docs/performance.md).
//
// Three hosts, each `unleashed daemon` (the release build) in a network namespace of its own
// (processes on loopback where namespaces are refused; the output says which), each holding
// four simulated modules behind a fake bluetoothd of its own on a private bus, all on one
// mosquitto. `--shots N` fleet shots (200 by default), each fired 400 ms ahead with the
// `unleashed fleet shoot` client: every host fires its four cameras at the instant on its own
// clock, through the module's scheduled fire. The fakes note each press on CLOCK_MONOTONIC, which
// every namespace shares, so the spread of a shot is its last press less its first, across the
// twelve cameras; printed as p50/p99/max beside each host's clock as it reported it.
//
// On one machine the hosts share one kernel clock: the spread is the system's own (scheduling,
// the modules' timers, the path to them), the floor under what separate machines add through
// their clocks' disagreement.
import Daemon
import FakeBlueZ
import Foundation
import JSON
import MQTT
import UnleashedProtocol
import UnleashedTestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-fleet-bench: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
let shots = arguments.firstIndex(of: "--shots").flatMap { Int(arguments[$0 + 1]) } ?? 200
let hostCount = 3
let camerasPerHost = 4
let lead = 0.4
let unleashed = URL(fileURLWithPath: arguments[0]).deletingLastPathComponent().appendingPathComponent("unleashed")
guard FileManager.default.isExecutableFile(atPath: unleashed.path) else {
    fail("no \(unleashed.path): build it with swift build -c release --static-swift-stdlib --product unleashed")
}

let network = NetworkHosts(count: hostCount)
let broker = try await Broker(listeningOn: network.brokerAddresses)
let directory = URL(fileURLWithPath: "/tmp/uf-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
// Top-level code ends without releasing its globals: the broker, the namespaces and the folder go here.
defer {
    broker.stop()
    network.remove()
    try? FileManager.default.removeItem(at: directory)
}

var buses: [PrivateBus] = []
var fakes: [FakeBlueZ] = []
var daemons: [Process] = []
for host in network.hosts {
    var configuration = FakeBlueZ.Configuration()
    configuration.modules = camerasPerHost
    configuration.profile.batteryDrain = .init(perShot: 0, perVideoMinute: 0, perIdleHour: 0)
    configuration.profile.cardCapacity = 1_000_000
    let bluez = try await InProcessBlueZ.start(configuration)
    let (bus, fake) = (bluez.bus, bluez.fake)
    let addresses = await fake.moduleAddresses
    let folder = directory.appendingPathComponent(host.name)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var text = """
        [daemon]
        socket = "\(folder.path)/control.sock"
        journal = "\(folder.path)/journal.sqlite"

        [mqtt]
        broker = "mqtt://\(host.brokerHost):\(broker.port)"
        node = "\(host.name)"
        discovery = false

        """
    for (index, address) in addresses.enumerated() { text += "\n[[modules]]\nname = \"cam\(index + 1)\"\naddress = \"\(address)\"\n" }
    let config = folder.appendingPathComponent("unleashed.toml")
    try text.write(to: config, atomically: true, encoding: .utf8)
    let (executable, commandArguments) = network.command(on: host, unleashed.path, ["daemon", "--config", config.path])
    let process = Process()
    process.executableURL = executable
    process.arguments = commandArguments
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    environment["XDG_STATE_HOME"] = folder.path + "/state"
    environment["XDG_CONFIG_HOME"] = folder.path + "/config"
    environment["UNLEASHED_DEMO"] = nil
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try ChildProcesses.run(process)
    buses.append(bus)
    fakes.append(fake)
    daemons.append(process)
}
defer { for daemon in daemons where daemon.isRunning { kill(daemon.processIdentifier, SIGTERM); daemon.waitUntilExit() } }

var settings = DaemonConfiguration.MQTTSettings()
settings.broker = BrokerAddress(host: "127.0.0.1", port: broker.port, tls: false)

// Every host online with its four modules connected.
let readyBy = ContinuousClock.now + .seconds(90)
while true {
    let hosts = try await FleetClient(settings: settings).status().objectValue ?? [:]
    let ready = network.hosts.allSatisfy { host in
        let cameras = hosts[host.name]?.objectValue?["cameras"]?.objectValue ?? [:]
        return cameras.count == camerasPerHost && cameras.values.allSatisfy { $0.objectValue?["state"]?.objectValue?["connection"] == "ready" }
    }
    if ready { break }
    if ContinuousClock.now > readyBy { fail("the hosts did not get their modules ready: \(hosts)") }
    try await Task.sleep(for: .milliseconds(500))
}

/// One fleet shot: the spread of its presses (ms), each host's answer, and how late the first
/// press came after the time.
@MainActor func fleetShot() async throws -> (spread: Double, late: Double, answers: [JSONValue]) {
    let mark = monotonicNanoseconds()
    let at = Date().addingTimeInterval(lead)
    let atMonotonic = mark + UInt64(lead * 1e9)
    let answers = try await FleetClient(settings: settings).shoot(at: at, group: nil, wait: .seconds(3))
    guard answers.count == hostCount, answers.allSatisfy({ answer in
        answer.objectValue?["accepted"] == true && (answer.objectValue?["shots"]?.arrayValue ?? []).allSatisfy { $0.objectValue?["ok"] == true }
    }) else { fail("a shot was not fired everywhere: \(answers)") }
    var presses: [UInt64] = []
    for fake in fakes {
        var first: [String: UInt64] = [:]
        for press in fake.presses(since: mark) where first[press.module] == nil { first[press.module] = press.nanoseconds }
        presses += first.values
    }
    guard presses.count == hostCount * camerasPerHost else { fail("\(presses.count) presses, not \(hostCount * camerasPerHost)") }
    let spread = Double(presses.max()! - presses.min()!) / 1e6
    let late = (Double(presses.min()!) - Double(atMonotonic)) / 1e6
    return (spread, late, answers)
}

for _ in 0..<5 { _ = try await fleetShot() }
var spreads: [Double] = []
var lateness: [Double] = []
var clocks: [String: JSONValue] = [:]
for _ in 0..<shots {
    let shot = try await fleetShot()
    spreads.append(shot.spread)
    lateness.append(shot.late)
    for answer in shot.answers {
        if let node = answer.objectValue?["node"]?.stringValue { clocks[node] = answer.objectValue?["clock"] }
    }
}

func percentileText(_ values: [Double]) -> String {
    String(format: "p50 %.3f ms, p99 %.3f ms, max %.3f ms", percentile(50, values), percentile(99, values), values.max() ?? 0)
}

print("""
    fleet shot across \(hostCount) hosts x \(camerasPerHost) cameras, \(shots) shots, each \(Int(lead * 1000)) ms ahead \
    (\(network.isolated ? "each host in a network namespace of its own" : "hosts as processes on loopback: \(network.refusal ?? "")")):
      spread, last press less first:  \(percentileText(spreads))
      first press after the time:     \(percentileText(lateness))
    each host's clock as it reported it:
    """)
for node in clocks.keys.sorted() {
    let clock = clocks[node]?.objectValue ?? [:]
    func milliseconds(_ value: JSONValue?) -> String {
        switch value {
        case .integer(let number)?: "\(number) ms"
        case .number(let number)?: String(format: "%.3f ms", number)
        default: "?"
        }
    }
    print("  \(node): synchronised \(clock["synchronised"] == true ? "yes" : "no"), estimated error \(milliseconds(clock["estimatedErrorMs"])), "
          + "maximum \(milliseconds(clock["maximumErrorMs"]))")
}
