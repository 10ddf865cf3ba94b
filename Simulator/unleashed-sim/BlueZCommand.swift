import ArgumentParser
import ProcessSignals
import DBus
import FakeBlueZ
import Foundation
import UnleashedKit
import UnleashedSimulator

/// `unleashed-sim bluez`: a fake bluetoothd on a D-Bus bus, with simulated modules in range.
struct BlueZCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez",
        abstract: "Owns org.bluez on a bus and serves BlueZ's GATT-client API over simulated modules and cameras.",
        discussion: """
            Prints "ready" on stdout once org.bluez and org.unleashed.Simulator are owned, logs to stderr, \
            and runs until SIGTERM or SIGINT. Point clients at the same bus, e.g.:

              dbus-daemon --session --print-address --fork    # prints ADDRESS
              DBUS_SYSTEM_BUS_ADDRESS=ADDRESS unleashed-sim bluez &
              DBUS_SYSTEM_BUS_ADDRESS=ADDRESS unleashed scan

            Fault plan items (comma-separated): connect-abort=N, resolve-delay=DURATION, \
            linkloss=DURATION@AFTER (after a module's first connection), restart=DOWN@AFTER (after start), \
            refuse-pairing. Durations: 250ms, 3s, 1m.
            """
    )

    @Option(help: ArgumentHelp("The bus to serve on.", discussion: "Default: $DBUS_SYSTEM_BUS_ADDRESS, else the system bus.", valueName: "address"))
    var bus: String?

    @Option(help: "Simulated modules in range (0-255).")
    var modules = 2

    @Option(name: .customLong("camera"),
            help: ArgumentHelp("A simulated camera in range, beside the modules: gopro, sony, canon, fujifilm or nikon. Repeat for more.",
                               valueName: "brand"))
    var cameras: [String] = []

    @Option(help: "Adapters hci0, hci1, ... (0-16; 0 is a machine without Bluetooth).")
    var adapters = 1

    @Option(help: ArgumentHelp("Whether the adapters start powered.", valueName: "on|off"))
    var powered: Power = .on

    @Option(help: "The ATT MTU of every link (23-517).")
    var mtu = 247

    @Option(help: ArgumentHelp("How pairing authenticates: justworks (no agent), confirm (the agent confirms the passkey), passkey (the agent enters it). Default: justworks.", valueName: "mode"),
            transform: Self.pairingMode)
    var pairing = FakeBlueZ.PairingMode.justWorks

    @Option(help: ArgumentHelp("What goes wrong, and when (see below). Default: nothing.", valueName: "plan"), transform: Self.faultPlan)
    var faults = FakeBlueZ.FaultPlan()

    @Option(help: ArgumentHelp("How long an unpaired, unconnected device stays after discovery stops (BlueZ's TemporaryTimeout). Default: 30s.", valueName: "duration"),
            transform: Self.duration)
    var temporaryTimeout = FakeBlueZ.Timing().temporaryTimeout

    @Option(help: ArgumentHelp("How long a read or a write request stays in flight (a second one meanwhile gets InProgress). Default: 10ms.", valueName: "duration"),
            transform: Self.duration)
    var hold = FakeBlueZ.Timing().operationHold

    @Option(help: ArgumentHelp("The camera body on every module: \(CameraProfile.all.map(\.id).joined(separator: ", ")).", valueName: "id"))
    var profile = CameraProfile.all[0].id

    @Option(help: "Makes RSSI, passkeys and the modules' behaviour repeatable.")
    var seed: UInt64 = 1

    enum Power: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    static func pairingMode(_ text: String) throws -> FakeBlueZ.PairingMode {
        guard let mode = FakeBlueZ.PairingMode(rawValue: text) else {
            throw ValidationError("no pairing mode '\(text)'; there are: \(FakeBlueZ.PairingMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return mode
    }

    static func faultPlan(_ text: String) throws -> FakeBlueZ.FaultPlan {
        do {
            return try FakeBlueZ.FaultPlan(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    static func duration(_ text: String) throws -> Duration {
        guard let duration = parseDuration(text) else { throw ValidationError("'\(text)' is not a duration such as 250ms, 3s or 1m") }
        return duration
    }

    func validate() throws {
        _ = try cameraSources()
        guard CameraProfile.named(profile) != nil else {
            throw ValidationError("no camera profile '\(profile)'; there are: \(CameraProfile.all.map(\.id).joined(separator: ", "))")
        }
    }

    private func cameraSources() throws -> [FakeBlueZ.CameraSource] {
        do throws(FakeBlueZError) {
            return try cameras.map { text throws(FakeBlueZError) in try FakeBlueZ.CameraSource.brand(named: text) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let log: @Sendable (String) -> Void = { line in
            FileHandle.standardError.write(Data("unleashed-sim: \(line)\n".utf8))
        }
        var timing = FakeBlueZ.Timing()
        timing.temporaryTimeout = temporaryTimeout
        timing.operationHold = hold
        var configuration = FakeBlueZ.Configuration(
            modules: modules, adapters: adapters, powered: powered == .on, mtu: mtu, pairing: pairing, faults: faults,
            profile: CameraProfile.named(profile) ?? CameraProfile.all[0], seed: seed, timing: timing, log: log)
        configuration.cameras = try cameraSources()
        let target: DBusConnection.Bus = bus.map { .address($0) } ?? .system
        let fake = FakeBlueZ(configuration: configuration)
        do {
            try await fake.start(bus: target)
        } catch {
            log("cannot serve on \(target): \(error)")
            throw ExitCode(EX_UNAVAILABLE)
        }
        // Watched before the line that says the fake is ready, so that no SIGTERM is lost; on
        // one the fake stops cleanly, releasing its names on the bus.
        let stop: @Sendable () -> Void = { Task { await fake.stop() } }
        let signals = ProcessSignals.SignalWatch([SIGTERM: stop, SIGINT: stop])
        defer { signals.disarm() }
        // Written unbuffered: whoever started the simulator waits for this line.
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        if let reason = await fake.waitUntilEnded() {
            log("stopping: \(reason)")
            throw ExitCode(EX_UNAVAILABLE)
        }
        log("stopped")
    }

}
