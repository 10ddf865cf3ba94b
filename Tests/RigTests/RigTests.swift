import BlueZ
import CameraKit
import DBus
import FakeBlueZ
import Foundation
import Intervalometer
import Testing
import UnleashedKit
import UnleashedProtocol
import UnleashedSimulator
import UnleashedTestSupport

/// Four simulated modules behind the fake bluetoothd on a private bus, each driven over BlueZ
/// by its own ModuleCamera: the rig a photographer would have, minus the radio. The fourth
/// module carries a different body (canon-r, whose ISO stops at 40000).
struct FourModules {
    static let names = ["north", "east", "south", "west"]
    static let addresses = (1...4).map { "F0:5E:D0:00:00:0\($0)" }

    let bus: PrivateBus
    let fake: FakeBlueZ
    let rig: Rig
    /// Each camera's link, for its estimate of the module's clock.
    let connections: [ModuleConnection]

    static func start() async throws -> FourModules {
        var configuration = FakeBlueZ.Configuration(modules: 4, timing: .quick)
        configuration.profileOverrides = [3: try #require(CameraProfile.named("canon-r"))]
        // Module timers that run apart, as real crystals do.
        configuration.timerDriftPPM = [0: 40, 1: -30, 2: 10, 3: -45]
        let bluez = try await InProcessBlueZ.start(configuration)
        let (bus, fake, address) = (bluez.bus, bluez.fake, bluez.address)
        let client = try await BlueZClient.open(bus: address)
        let adapter = try await client.adapter(named: nil)
        for module in addresses {
            let device = try await client.findModule(module, on: adapter, serviceUUID: UnleashedV1.gattLayout.service, timeout: .seconds(30))
            try await client.pair(device.path, serviceUUID: UnleashedV1.gattLayout.service, agent: PairingAgent { _ in .accept })
        }
        await client.close()
        var members: [RigCamera] = []
        var connections: [ModuleConnection] = []
        for (name, module) in zip(names, addresses) {
            let connection = ModuleConnection(provider: BlueZLinkProvider(bus: address, module: module),
                                              policy: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500)))
            connections.append(connection)
            members.append(RigCamera(name: name, camera: try await ModuleCamera(connection: connection, connectTimeout: .seconds(60), name: name)))
        }
        return FourModules(bus: bus, fake: fake, rig: try #require(Rig(members)), connections: connections)
    }

    func stop() async {
        for member in rig.members { await member.camera.close() }
        await fake.stop()
    }

    /// Each module's shot counter, read from the module itself.
    func counters() async throws -> [Int] {
        var counters: [Int] = []
        for member in rig.members { counters.append(try await member.camera.status().shotCounter) }
        return counters
    }

    func values(of setting: SettingID) async throws -> [SettingValue] {
        var values: [SettingValue] = []
        for member in rig.members { values.append(try await member.camera.value(of: setting)) }
        return values
    }
}

@Suite(.serialized) struct RigTests {
    @Test func groupShotFiresEveryBodyOnce() async throws {
        let rig = try await FourModules.start()
        defer { Task { await rig.stop() } }
        let before = try await rig.counters()
        let (outcomes, spread) = await rig.rig.fire { camera throws(CameraError) in try await camera.shoot() }
        #expect(outcomes.map(\.name) == FourModules.names)
        for outcome in outcomes {
            let shot = try #require(try outcome.result?.get(), "\(outcome.name) did not shoot")
            let index = try #require(FourModules.names.firstIndex(of: outcome.name))
            #expect(shot.counter == before[index] + 1, "\(outcome.name)")
        }
        #expect(try await rig.counters() == before.map { $0 + 1 })
        let commands = try #require(spread.commands)
        let completions = try #require(spread.completions)
        #expect(commands >= .zero && completions >= .zero)
    }

    @Test func groupSettingRefusedByOneBodyChangesNone() async throws {
        let rig = try await FourModules.start()
        defer { Task { await rig.stop() } }
        let before = try await rig.values(of: .iso)
        let wanted = try #require(SettingValue(setting: .iso, text: "51200"))
        do {
            _ = try await rig.rig.set(wanted)
            Issue.record("ISO 51200 was accepted by a rig whose canon-r body does not offer it")
        } catch .refused(let refusals) {
            #expect(refusals.map(\.name) == ["west"])
            guard case .valueNotOffered = refusals.first?.error else {
                Issue.record("west refused with \(String(describing: refusals.first?.error))")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(try await rig.values(of: .iso) == before, "a body was changed although one refused")

        let offeredByAll = try #require(SettingValue(setting: .iso, text: "800"))
        let applied = try await rig.rig.set(offeredByAll)
        #expect(applied.map(\.name) == FourModules.names)
        #expect(try await rig.values(of: .iso) == Array(repeating: offeredByAll, count: 4))
    }

    /// Modules that keep time themselves are each told one instant on their own clock (read from
    /// keep-alives), and each presses on it, whatever delays each command on the bus. How close
    /// together that is, is measured by `unleashed-sync-bench`.
    @Test func groupShotScheduledOnTheModulesClocks() async throws {
        let rig = try await FourModules.start()
        defer { Task { await rig.stop() } }
        let before = try await rig.counters()
        let mark = monotonicNanoseconds()
        let (outcomes, _) = await rig.rig.shoot()
        for outcome in outcomes {
            #expect(try outcome.result?.get() != nil, "\(outcome.name) did not shoot")
        }
        #expect(try await rig.counters() == before.map { $0 + 1 })
        // Every trigger carried a fire time: a start packet of a shoot request whose first field is fireAt (0x3B).
        let triggers = await rig.fake.writes(since: mark).filter { $0.packet.count > 7 && $0.packet[3] == 0x01 && $0.packet[6] == Opcode.shoot.rawValue }
        #expect(Set(triggers.map(\.module)) == Set(FourModules.addresses))
        #expect(triggers.allSatisfy { $0.packet[7] == 0x3B })
        let presses = rig.fake.presses(since: mark)
        #expect(presses.count == 4)
        #expect(Set(presses.map(\.module)) == Set(FourModules.addresses), "each module pressed once")
        // How close together they press is measured, not asserted: `unleashed-sync-bench` prints
        // the spread per slot (docs/performance.md). Each camera's link holds an estimate of its
        // module's clock, which the fire times were read from.
        for connection in rig.connections {
            #expect(await connection.moduleTime(at: .now) != nil, "a fire time needs the module's clock")
        }
    }

    /// 100 slots at 200 ms; module "south" goes out of range for 2 s from slot 20. Every slot
    /// has a record for every body; south's outage slots are skipped as not connected while
    /// the others fire, and south fires again after it reconnects.
    @Test func groupTimelapseWithOneBodyDroppingOut() async throws {
        let rig = try await FourModules.start()
        defer { Task { await rig.stop() } }
        let journal = MemoryJournal()
        let plan = RunPlan(intervalMs: 200, stop: .frames(100))
        let run = Timelapse(plan: plan, rig: rig.rig, journal: journal, clock: ContinuousClock(),
                            wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        let fake = rig.fake
        let outage = Task {
            for await record in run.records where record.frame == 20 {
                await fake.loseLink(address: FourModules.addresses[2], for: .seconds(2))
                return
            }
        }
        let ending = try await run.start(cameraName: FourModules.names.joined(separator: ","))
        outage.cancel()
        #expect(ending.state == .finished)
        let frames = try journal.frames(of: ending.run.id)
        for name in FourModules.names {
            let own = frames.filter { $0.camera == name }
            #expect(own.map(\.frame) == Array(1...100), "\(name) lacks slots")
        }
        let south = frames.filter { $0.camera == "south" }
        let missed = south.filter { $0.outcome == .skipped && ($0.error ?? "").contains("not connected") }
        #expect(!missed.isEmpty, "south was never recorded as down")
        let lastMissed = try #require(missed.map(\.frame).max())
        #expect(south.contains { $0.frame > lastMissed && $0.outcome == .taken }, "south did not rejoin")
        for name in ["north", "east", "west"] {
            #expect(!frames.contains { $0.camera == name && ($0.error ?? "").contains("not connected") }, "\(name) was recorded as down")
        }
        let fired = frames.filter { $0.outcome == .taken }
        #expect(fired.allSatisfy { $0.commandSpreadMicros != nil && $0.completionSpreadMicros != nil })
        let summary = RunSummary(frames: frames)
        #expect(summary.p99CommandSpreadMicros != nil)
    }
}
