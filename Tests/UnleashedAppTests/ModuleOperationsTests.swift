import BlueZ
import DaemonClient
import DBus
import Foundation
import Testing
import UnleashedApp
import UnleashedProtocol
import UnleashedTestSupport

/// The module commands' operations against the real D-Bus daemon and the project's fake
/// bluetoothd (`unleashed-sim bluez`), each test on a private bus of its own, with the
/// remembered module in a file of its own.
@Suite("module operations over BlueZ (private bus, unleashed-sim bluez)", .timeLimit(.minutes(3)))
struct ModuleOperationsTests {
    static let first = "F0:5E:D0:00:00:01"
    static let second = "F0:5E:D0:00:00:02"

    @Test func listsTheAdapterAndScansForTheModules() async throws {
        let fake = try await SimulatedBluetooth(["--modules", "2"])
        let adapters = try await fake.operations().adapters()
        #expect(adapters.adapters.map(\.name) == ["hci0"])
        #expect(adapters.text.contains("hci0") && adapters.text.contains(" on "))
        var found: [BlueZDevice] = []
        let count = try await fake.operations().scan(for: .seconds(2)) { found.append($0) }
        #expect(count == 2)
        #expect(found.map(\.address).sorted() == [Self.first, Self.second])
        #expect(found.allSatisfy { $0.sightingJSON["model"] == "simulated" && $0.sightingLine.contains("Unleashed 000") })
    }

    /// What used to be checked by launching `unleashed pair` against `--faults refuse-pairing`.
    @Test func aRefusedPairingIsAnErrorOfKindRefused() async throws {
        let fake = try await SimulatedBluetooth(["--faults", "refuse-pairing"])
        let error = await #expect(throws: ModuleCommandError.self) {
            try await fake.operations().pair(Self.first, answers: Self.answers())
        }
        guard case .bluetooth(let bluez) = error, case .pairingRefused = bluez else { Issue.record("\(String(describing: error))"); return }
        #expect(bluez.code == "pairingRefused")
        #expect(bluez.exitStatus == 65)
        #expect(bluez.description.contains("pairing refused"))
    }

    /// What used to be checked by launching `unleashed pair` with and without `--yes`.
    @Test func aConfirmationNoOneCanAnswerIsRefusedAndYesConfirmsIt() async throws {
        let fake = try await SimulatedBluetooth(["--pairing", "confirm"])
        let error = await #expect(throws: ModuleCommandError.self) {
            try await fake.operations().pair(Self.first, answers: Self.answers())
        }
        guard case .bluetooth(.pairingRefused(let message)) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("rerun with --yes"), "\(message)")
        let paired = try await fake.operations().pair(Self.first, answers: Self.answers(confirm: true))
        #expect(paired.text == "Paired with Unleashed 0001 (\(Self.first)).")
        #expect(paired.json["paired"] == true)
        #expect((try await fake.stats()["disconnectCalls"] ?? 0) >= 1, "pairing leaves the module free for other clients")
    }

    /// What used to be checked by launching `unleashed pair --passkey` with a wrong passkey.
    @Test func aWrongPasskeyIsRefused() async throws {
        let fake = try await SimulatedBluetooth(["--pairing", "passkey"])
        let shown = try #require(try await fake.simulator("Passkey", [.string(Self.first)]).first?.intValue)
        await #expect(throws: ModuleCommandError.self) {
            try await fake.operations().pair(Self.first, answers: Self.answers(passkey: UInt32((shown + 1) % 1_000_000)))
        }
    }

    /// What used to be checked by launching `unleashed --scan-timeout 1s connect` for a module that is not there.
    @Test func aModuleThatIsNotThereIsNotFoundAfterTheScan() async throws {
        let fake = try await SimulatedBluetooth()
        let error = await #expect(throws: ModuleCommandError.self) {
            try await fake.operations(scanTimeout: .seconds(1)).connect("F0:5E:D0:00:00:99", answers: Self.answers())
        }
        guard case .bluetooth(let bluez) = error, case .moduleNotFound = bluez else { Issue.record("\(String(describing: error))"); return }
        #expect(bluez.code == "moduleNotFound" && bluez.exitStatus == 69)
    }

    /// What used to be checked by launching `unleashed scan` without an adapter and `connect` with one off.
    @Test func noAdapterAndAnAdapterThatIsOff() async throws {
        let none = try await SimulatedBluetooth(["--adapters", "0"])
        await #expect(throws: ModuleCommandError.bluetooth(.noAdapter)) {
            try await none.operations().scan(for: .seconds(1)) { _ in }
        }
        let off = try await SimulatedBluetooth(["--powered", "off"])
        let error = await #expect(throws: ModuleCommandError.self) {
            try await off.operations().connect(Self.first, answers: Self.answers())
        }
        guard case .bluetooth(let bluez) = error, case .adapterPoweredOff = bluez else { Issue.record("\(String(describing: error))"); return }
        #expect(bluez.description.contains("hci0 is powered off"))
    }

    @Test func connectWithoutAnAddressNeedsOneModuleInRange() async throws {
        let fake = try await SimulatedBluetooth(["--modules", "2"])
        let error = await #expect(throws: ModuleCommandError.self) {
            try await fake.operations().connect(nil, answers: Self.answers())
        }
        guard case .choice(.invalid(code: "severalModules", let message)) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains(Self.first) && message.contains(Self.second))
    }

    /// `disconnect` of a module that is not connected says so; `forget` removes it from BlueZ and
    /// stops remembering it, and a second `forget` finds nothing to remove.
    @Test func disconnectAndForgetAPairedModule() async throws {
        let fake = try await SimulatedBluetooth()
        let operations = fake.operations()
        _ = try await operations.pair(Self.first, answers: Self.answers())
        try RememberedModule(address: Self.first, name: "Unleashed 0001", adapter: nil).save(to: fake.rememberedFile)
        let disconnected = try await operations.disconnect(nil)
        #expect(!disconnected.wasConnected)
        #expect(disconnected.text == "Unleashed 0001 was not connected.")
        let forgotten = try await operations.forget(nil)
        #expect(forgotten.device?.address == Self.first)
        #expect(forgotten.json["removed"] == true)
        #expect(RememberedModule.load(from: fake.rememberedFile) == nil)
        let again = try await operations.forget(Self.first)
        #expect(again.device == nil)
        #expect(again.text == "BlueZ did not know \(Self.first); nothing to forget.")
        await #expect(throws: ModuleCommandError.bluetooth(.moduleNotFound(Self.first))) { try await operations.disconnect(Self.first) }
        await #expect(throws: ModuleCommandError.choice(.noModule)) { try await operations.disconnect(nil) }
    }

    /// Backends without Bluetooth are refused before BlueZ is asked anything, and the daemon
    /// connects only a module it is told.
    @Test func refusalsBeforeBlueZ() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("module-\(UUID()).json")
        let tethered = ModuleOperations(adapter: nil, backend: .gphoto2, rememberedFile: file)
        await #expect(throws: ModuleCommandError.self) { try await tethered.adapters() }
        let demo = ModuleOperations(adapter: nil, demo: true, rememberedFile: file)
        do {
            _ = try await demo.scan(for: .seconds(1)) { _ in }
            Issue.record("the demo module has no Bluetooth to scan")
        } catch {
            guard case .choice(.usage(let message)) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("`unleashed scan` needs BlueZ"))
        }
        let noModule = ModuleOperations(adapter: nil, bus: .address("unix:path=/nonexistent"), rememberedFile: file)
        await #expect(throws: ModuleCommandError.choice(.noModule)) { try await noModule.forget(nil) }
        let throughDaemon = ModuleOperations(adapter: nil, daemon: DaemonClient(socketPath: "/nonexistent/daemon.sock"), rememberedFile: file)
        do {
            _ = try await throughDaemon.connect(nil, answers: Self.answers())
            Issue.record("the daemon needs the module named")
        } catch {
            guard case .choice(.usage(let message)) = error else { Issue.record("\(error)"); return }
            #expect(message.hasPrefix("name the module"))
        }
    }

    /// Answers as a script does: no one at a terminal.
    static func answers(passkey: UInt32? = nil, confirm: Bool = false) -> PairingAnswers {
        PairingAnswers(passkey: passkey, confirm: confirm, ask: nil, note: { _ in })
    }
}

extension ModuleCommandError: Equatable {
    static func == (lhs: ModuleCommandError, rhs: ModuleCommandError) -> Bool {
        switch (lhs, rhs) {
        case (.bluetooth(let left), .bluetooth(let right)): left == right
        case (.choice(let left), .choice(let right)): left == right
        default: false
        }
    }
}

extension SimulatedBluetooth {
    func operations(scanTimeout: Duration = .seconds(5)) -> ModuleOperations {
        ModuleOperations(adapter: nil, scanTimeout: scanTimeout, bus: .address(bus.address), rememberedFile: rememberedFile)
    }
}
