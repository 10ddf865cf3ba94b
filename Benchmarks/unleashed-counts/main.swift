// A fixed amount of work for the deterministic counts of `scripts/perf-counts`: that script runs
// this program under valgrind's callgrind twice per workload, with N and with 2N requests, and
// divides the difference in instructions and in allocations by N, so that start-up, connecting
// and warm-up cancel out. The counts per request are checked against
// Benchmarks/unleashed-counts/thresholds-<toolchain>.json in `make test`.
//
// Usage: unleashed-counts check [--update]   run every workload under callgrind, compare, print
//        unleashed-counts run WORKLOAD REQUESTS [BUS-ADDRESS]   one workload (what check runs)
// Workloads:
//   codec    encode a setting read and decode its response (UnleashedV1), no I/O
//   session  a setting read through the camera and the session over the in-process simulated link
//   bluez    a setting read through the camera, the session and BlueZ: a private dbus-daemon and
//            the fake bluetoothd (unleashed-sim, beside this program), started by `check` outside
//            valgrind, in their own processes; only the client is counted. Packets travel on the
//            characteristics' sockets (AcquireWrite, AcquireNotify), the link's default
//   bluez-messages  the same with D-Bus messages only (WriteValue, PropertiesChanged): the path
//            the link falls back to where BlueZ offers no sockets

import BlueZ
import CameraKit
import DBus
import Foundation
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("unleashed-counts: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
let usage = "usage: unleashed-counts check [--update] | run codec|session|bluez|bluez-messages REQUESTS [BUS-ADDRESS]"
let warmUp = 20

/// Reads a setting `count` times, as a client of the library that prefers the camera's thread
/// does (where it has one): on BlueZ, a request and its answer are then that thread's alone.
func readSettings(_ camera: ModuleCamera, count: Int) async throws {
    try await withTaskExecutorPreference(camera.executor) {
        for _ in 0..<count { _ = try await camera.value(of: .iso) }
    }
}

func run(_ workload: String, requests: Int, busAddress: String?) async throws {
    switch workload {
    case "codec":
        let dialect = UnleashedV1()
        let request = Message(.request(.getSetting), id: 7, fields: Fields { $0.setting = .iso })
        let responsePackets = try dialect.packets(for: Message(.response(.getSetting, .ok), id: 7, fields: Fields {
            $0.setting = .iso
            $0.value = .iso(ISOSpeed(800)!)
        }), mtu: 247)
        var receiver = try dialect.makeReceiver(mtu: 247)
        var decoded = 0
        for _ in 0..<(warmUp + requests) {
            let packets = try dialect.packets(for: request, mtu: 247)
            precondition(packets.count == 1)
            for packet in responsePackets where receiver.receive(packet).message != nil { decoded += 1 }
        }
        precondition(decoded == warmUp + requests, "responses did not decode")

    case "session":
        let demo = try await Demo.start(stateFile: nil, options: DemoOptions(profile: CameraProfile.named("nikon-z")))
        try await readSettings(demo.camera, count: warmUp + requests)
        try await demo.finish()

    case "bluez", "bluez-messages":
        guard let busAddress else { fail("the bluez workload needs the address of a bus with the fake bluetoothd") }
        let module = "F0:5E:D0:00:00:01"
        let address = DBusConnection.Bus.address(busAddress)
        let client = try await BlueZClient.open(bus: address)
        let adapter = try await client.adapter(named: nil)
        let device = try await client.findModule(module, on: adapter, serviceUUID: UnleashedV1.gattLayout.service, timeout: .seconds(60))
        try await client.pair(device.path, serviceUUID: UnleashedV1.gattLayout.service, agent: PairingAgent { _ in .accept })
        await client.close()
        let provider = BlueZLinkProvider(bus: address, module: module, acquireSockets: workload == "bluez")
        let camera = try await ModuleCamera(connection: ModuleConnection(provider: provider), name: module)
        try await readSettings(camera, count: warmUp + requests)
        await camera.close()

    default:
        fail("unknown workload '\(workload)': codec, session, bluez or bluez-messages")
    }
}

// The main thread waits on a semaphore rather than being an async main: an async main parks the
// main thread in dispatch's sigsuspend, with its mask in read-only memory, and valgrind 3.19
// crashes on that call (as in unleashed-dbus-soak).
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        switch arguments.dropFirst().first {
        case "run":
            guard arguments.count >= 4, let requests = Int(arguments[3]), requests >= 0 else { fail(usage) }
            try await run(arguments[2], requests: requests, busAddress: arguments.count > 4 ? arguments[4] : nil)
        case "check":
            let passed = try await check(update: arguments.contains("--update"))
            if !passed { exit(1) }
        default:
            fail(usage)
        }
    } catch {
        fail("\(error)")
    }
    finished.signal()
}
finished.wait()
exit(0)
